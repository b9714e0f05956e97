"""Run a campaign's plan with N worker processes on this host, resumable after kill -9.

Layout of a campaign folder `DIR`:

    DIR/plan.json, plan.sha256   the expanded plan and its digest (written before any run)
    DIR/campaign.json            campaign id, plan digest, store (password masked)
    DIR/store.db                 the store, unless --store names another one
    DIR/runs/<run id>/           finished runs, exactly as `worldkit run --out DIR/runs` writes them
    DIR/.inflight/<run id>/      runs being executed (moved to runs/ once their record is written)
    DIR/.workers/                each worker process's output

Each run is executed by the same library function as `worldkit run` (`runner.run_task`; packets:
`run.infoorg_packet.run_packet`), in `.inflight/`, then renamed into `runs/` and marked done in the
store — on condition that the worker still holds that attempt. On start, the coordinator holds
`DIR/.lock`, returns the claims of dead local workers to the pool, keeps a run whose record
reached `runs/` before its worker died, deletes what was in flight and any superseded attempt,
and starts workers; a worker claims runs in plan order until none is pending. Workers are
child processes that die with their coordinator (PR_SET_PDEATHSIG, and a parent watch), and are
replaced after `runs_per_worker` runs or once their memory passes `max_worker_rss_mb`, so a long
campaign's memory stays flat.

One coordinator runs a campaign (`claims.acquire`, a random coordinator id, leased by the store's
clock): a second one, on this host or another, is refused while the first is alive. Several
machines run a campaign through Ray (`worldkit.campaign.ray_executor`).
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from worldkit._process import die_with_parent
from worldkit.campaign import claims
from worldkit.campaign.design import CampaignDesign, load_design
from worldkit.campaign.plan import (
    CampaignPlan,
    PlannedRun,
    ResolvedTask,
    expand,
    plan_bytes,
    resolve_calibration,
    resolve_tasks,
    write_plan,
)
from worldkit.canon import pretty_json, sha256_bytes, sha256_file
from worldkit.errors import UsageError, WorldkitError
from worldkit.store import Store
from worldkit.store.db import describe_url, resolve_url

__all__ = ["Campaign", "CampaignCounts", "open_campaign", "run_campaign"]

STATE_FILE = "campaign.json"
RUNS = "runs"
INFLIGHT = ".inflight"
WORKER_LOGS = ".workers"
RECORD_FILES = {"overlay": "execution-record.json", "packet": "result.json"}
LEASE_S = 120.0
"""Kept for the bookkeeping's coordinator-less callers; the executors judge their own workers by pid."""
RUNS_PER_WORKER = 50
"""A worker process is replaced after this many runs by default (0: never)."""
MAX_WORKER_RSS_MB = 1024
"""…or as soon as its resident memory passes this many MiB after a run (0: no ceiling)."""
KEEP_S = 5.0
"""How often the coordinator renews its hold on the campaign."""


@dataclass(frozen=True)
class Campaign:
    """A loaded campaign: its plan, where its tasks are on this host, its folder and store."""

    plan: CampaignPlan
    paths: dict[str, str]
    out: Path
    store_url: str

    @property
    def campaign_id(self) -> str:
        return self.plan.campaign_id

    def run_for(self, seq: int) -> PlannedRun:
        return self.plan.runs[seq - 1]

    def run_id(self, seq: int, attempt: int) -> str:
        return self.plan.run_id(self.run_for(seq), attempt)

    def record_file(self, run: PlannedRun) -> str:
        return RECORD_FILES[self.plan.task(run.task).kind]


@dataclass
class CampaignCounts:
    """Where the plan stands."""

    planned: int
    done: int = 0
    failed: int = 0
    running: int = 0
    pending: int = 0
    records: int = 0
    failures: list[dict[str, Any]] = field(default_factory=list)
    discarded: list[dict[str, Any]] = field(default_factory=list)
    """Results that arrived for an attempt that no longer counted (not recorded)."""

    def as_dict(self) -> dict[str, Any]:
        return {"planned": self.planned, "done": self.done, "failed": self.failed, "running": self.running,
                "pending": self.pending, "records": self.records, "failures": self.failures,
                "discarded": self.discarded}  # fmt: skip


def default_store(out: Path) -> str:
    return f"sqlite:///{(Path(out) / 'store.db').resolve()}"


def load_plan(design_path: Path) -> tuple[CampaignPlan, list[ResolvedTask]]:
    """The plan of a design file (tasks resolved from the file's folder)."""
    design_path = Path(design_path)
    from worldkit.agents.registry import check_spec

    design: CampaignDesign = load_design(design_path)
    for agent in design.agents:
        check_spec(agent.agent)
    resolved = resolve_tasks(design, design_path.parent)
    return expand(design, [r.planned for r in resolved], resolve_calibration(design, design_path)), resolved


def open_campaign(design_path: Path, out: Path, store_url: str | None = None) -> Campaign:
    """Expand the design, write the plan and its digest into `out`, register it in the store."""
    out = Path(out).absolute()
    plan, resolved = load_plan(design_path)
    write_plan(plan, out)
    url = resolve_url(store_url) if store_url else default_store(out)
    campaign = Campaign(plan=plan, paths={r.planned.id: str(r.path) for r in resolved}, out=out, store_url=url)
    with Store.open(url) as store:
        claims.ensure_campaign(
            store, plan.campaign_id, plan.digest, plan_bytes(plan).decode("utf-8"), (r.seq for r in plan.runs)
        )
    state = {"campaign_id": plan.campaign_id, "plan_sha256": plan.digest, "store": describe_url(url)}
    (out / STATE_FILE).write_text(pretty_json(state), encoding="utf-8")
    return campaign


# --- one run -----------------------------------------------------------------------------------


def _rss_kb() -> int | None:
    try:
        with open("/proc/self/statm", encoding="ascii") as handle:
            return int(handle.read().split()[1]) * (os.sysconf("SC_PAGE_SIZE") // 1024)
    except OSError:
        return None


def execute_run(campaign: Campaign, run: PlannedRun, run_id: str) -> Path:
    """Execute one planned run into `.inflight/<run id>` exactly as `worldkit run` would; return
    the run folder. The caller moves it into `runs/`."""
    from worldkit.agents.registry import make_agent
    from worldkit.errors import CheckFailed

    inflight = campaign.out / INFLIGHT
    task = campaign.plan.task(run.task)
    agent = next(a for a in campaign.plan.design.agents if a.agent == run.agent)
    path = Path(campaign.paths[run.task])
    changed = CheckFailed(
        f"task {task.id} at {path} is not the one the plan pinned (sha256 {task.sha256[:12]}…): it changed after "
        "the campaign started; restore it, or start a new campaign (new --out) for the new version"
    )
    if task.kind == "packet":
        from worldkit.run.infoorg_packet import run_packet

        if sha256_file(path / "overlay.json") != task.sha256:
            raise changed

        chosen = make_agent(agent.agent, {**agent.options, "task": task.id, "benchmark": "infoorg"})
        with Store.open(campaign.store_url) as store:
            result = run_packet(path, chosen, store, out=inflight, run_id=run_id)
        if result.status == "failed":  # its result.json (status failed) is kept as the run's record
            from worldkit.run.infoorg_packet import PacketRunFailed

            raise PacketRunFailed(f"run {run_id} failed: {result.error}")
        return Path(result.run_dir)
    from worldkit.grade.judge import make_judge
    from worldkit.run.runner import run_task

    judge_entry = campaign.plan.design.judge
    judge = make_judge(judge_entry.kind, judge_entry.factory_options()) if judge_entry else None
    pinned = campaign.plan.judge_calibration
    if judge is not None and pinned is not None:
        from worldkit.grade.calibration import attach_summary

        # the calibration the plan pinned; refused here too if this host configures the judge otherwise
        attach_summary(judge, pinned, f"{str(pinned['sha256'])[:12]} (pinned in the plan)")
    from worldkit.overlay import load_overlay, overlay_digest

    overlay = load_overlay(path)
    if overlay_digest(overlay) != task.sha256:
        raise changed
    result = run_task(
        overlay, agent.agent, condition=run.condition, runs_dir=inflight, store_url=campaign.store_url,
        agent_options=dict(agent.options), judge=judge, run_id=run_id,
    )  # fmt: skip
    return result.run_dir


def _purge_other_attempts(campaign: Campaign, claim: claims.Claim) -> None:
    """Remove this host's folders of earlier attempts of the claimed run (e.g. a failed one)."""
    runs_dir = campaign.out / RUNS
    prefix = f"{campaign.campaign_id}-{campaign.run_for(claim.seq).key}."
    for folder in runs_dir.glob(prefix + "*"):
        if folder.name != claim.run_id:
            shutil.rmtree(folder, ignore_errors=True)


def worker_main(campaign: Campaign, max_runs: int, coordinator: int | None = None, *,
                coordinator_id: str = "", max_rss_mb: int = 0) -> None:
    """A worker: claim, execute, record, until nothing is pending, `max_runs` are done, or its
    memory passed `max_rss_mb` (the coordinator then starts a fresh worker)."""
    if coordinator is not None:
        die_with_parent(coordinator)
    holder = claims.this_holder(coordinator_id)
    store = Store.open(campaign.store_url)
    (campaign.out / RUNS).mkdir(parents=True, exist_ok=True)
    done = 0
    try:
        while not max_runs or done < max_runs:
            rss = _rss_kb()
            if done and max_rss_mb and rss is not None and rss > max_rss_mb * 1024:
                return
            claim = claims.claim_next(store, campaign.campaign_id, holder, campaign.run_id)
            if claim is None:
                return
            run = campaign.run_for(claim.seq)
            final = campaign.out / RUNS / claim.run_id
            _purge_other_attempts(campaign, claim)
            try:
                run_dir = execute_run(campaign, run, claim.run_id)
                os.replace(run_dir, final)
            except Exception as error:  # noqa: BLE001 - any failure of one run is that run's result
                message = getattr(error, "message", None) or f"{type(error).__name__}: {error}"
                failed_dir = campaign.out / INFLIGHT / claim.run_id
                # A run that failed as `worldkit run` marks failures keeps its (failed) record.
                if (failed_dir / campaign.record_file(run)).is_file():
                    os.replace(failed_dir, final)
                shutil.rmtree(failed_dir, ignore_errors=True)
                if not claims.finish(store, campaign.campaign_id, claim, holder, status="failed", error=message, rss_kb=_rss_kb()):
                    shutil.rmtree(final, ignore_errors=True)
            else:
                digest = sha256_file(final / campaign.record_file(run))
                if not claims.finish(store, campaign.campaign_id, claim, holder, status="done", record_sha256=digest, rss_kb=_rss_kb()):
                    shutil.rmtree(final, ignore_errors=True)  # the claim was lost: another attempt counts
            done += 1
    finally:
        store.close()


def spawn_worker(campaign: Campaign, runs_per_worker: int, coordinator_id: str = "",
                 max_rss_mb: int = 0) -> subprocess.Popen[bytes]:
    """Start one worker process (`python -m worldkit.campaign.worker`); it dies with us.

    The store URL goes through the environment, not the command line (it may hold a password).
    """
    logs = campaign.out / WORKER_LOGS
    logs.mkdir(parents=True, exist_ok=True)
    job = {"out": str(campaign.out), "paths": campaign.paths, "runs_per_worker": runs_per_worker,
           "coordinator": os.getpid(), "coordinator_id": coordinator_id, "max_rss_mb": max_rss_mb}
    log = open(logs / f"worker-{time.time_ns()}.log", "wb")  # noqa: SIM115 - handed to the child
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "worldkit.campaign.worker"],
            stdin=subprocess.PIPE, stdout=log, stderr=log,
            env={**os.environ, "WORLDKIT_STORE": campaign.store_url},
        )
    finally:
        log.close()
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(job).encode("utf-8"))
    proc.stdin.close()
    return proc


# --- the coordinator ---------------------------------------------------------------------------


class _DirLock:
    """An exclusive lock on the campaign folder (released by the kernel when its holder dies)."""

    def __init__(self, out: Path) -> None:
        out.mkdir(parents=True, exist_ok=True)
        self.path = out / ".lock"
        self.handle = open(self.path, "a+", encoding="ascii")  # noqa: SIM115 - held for the campaign
        try:
            fcntl.flock(self.handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.handle.seek(0)
            owner = self.handle.read().strip() or "another process"
            self.handle.close()
            raise UsageError(
                f"campaign folder {out} is in use by {owner}; wait for it, or give this host its own --out"
            ) from None
        self.handle.seek(0)
        self.handle.truncate()
        self.handle.write(f"pid {os.getpid()}\n")
        self.handle.flush()

    def release(self) -> None:
        fcntl.flock(self.handle, fcntl.LOCK_UN)
        self.handle.close()


def reconcile(campaign: Campaign, store: Store, me: claims.Holder | None = None) -> None:
    """Make the folder and the store agree before workers start (the coordinator holds the lock).

    Claims of dead local workers go back to the pool; a released run whose record reached
    `runs/` is kept (adopted); everything in flight, and every run folder that is not the
    recorded attempt of its run, is deleted.
    """
    claims.release_dead(store, campaign.campaign_id, lease_s=LEASE_S, me=me or claims.this_holder())
    shutil.rmtree(campaign.out / INFLIGHT, ignore_errors=True)
    runs_dir = campaign.out / RUNS
    if not runs_dir.is_dir():
        return
    by_seq = {row.seq: row for row in claims.rows(store, campaign.campaign_id)}
    prefix = f"{campaign.campaign_id}-"
    for folder in sorted(runs_dir.iterdir()):
        name = folder.name
        if not name.startswith(prefix):
            continue
        try:
            seq = int(name[len(prefix):].split(".", 1)[0])
        except ValueError:
            continue
        row = by_seq.get(seq)
        if row is None or row.run_id != name:
            shutil.rmtree(folder, ignore_errors=True)
            continue
        record = folder / campaign.record_file(campaign.run_for(seq))
        if row.status in ("done", "failed"):
            continue
        if row.status == "pending" and record.is_file():
            if claims.adopt(store, campaign.campaign_id, seq, name, sha256_file(record), _record_status(record)):
                continue
        if row.status != "running":  # a live holder elsewhere owns a running row; leave it be
            shutil.rmtree(folder, ignore_errors=True)


def _record_status(record: Path) -> str:
    """`failed` for an execution record of a failed run, else `done`."""
    try:
        return "failed" if json.loads(record.read_text(encoding="utf-8")).get("status") == "failed" else "done"
    except (OSError, ValueError):
        return "done"


def counts(campaign: Campaign, store: Store) -> CampaignCounts:
    result = CampaignCounts(planned=len(campaign.plan.runs))
    for row in claims.rows(store, campaign.campaign_id):
        setattr(result, row.status, getattr(result, row.status) + 1)
        if row.status == "failed":
            result.failures.append({"seq": row.seq, "run_id": row.run_id, "error": row.error})
    result.discarded = [{"seq": row.seq, "run_id": row.run_id, "reason": row.reason}
                        for row in claims.discards(store, campaign.campaign_id)]
    runs_dir = campaign.out / RUNS
    if runs_dir.is_dir():
        result.records = sum(
            1 for folder in runs_dir.iterdir()
            if any((folder / name).is_file() for name in RECORD_FILES.values())
        )  # fmt: skip
    return result


def run_campaign(
    design_path: Path,
    out: Path,
    *,
    workers: int = 1,
    store_url: str | None = None,
    retry_failed: bool = False,
    runs_per_worker: int = RUNS_PER_WORKER,
    max_worker_rss_mb: int = MAX_WORKER_RSS_MB,
    on_progress: Callable[[CampaignCounts], None] | None = None,
    poll_s: float = 0.5,
) -> CampaignCounts:
    """Run (or resume) the campaign of `design_path` in `out` until every planned run is finished."""
    if workers < 1:
        raise UsageError(f"--workers {workers}: give at least 1 worker")
    out = Path(out).absolute()
    lock = _DirLock(out)
    try:
        campaign = open_campaign(design_path, out, store_url)
        with Store.open(campaign.store_url) as store, coordinating(store, campaign, "local") as me:
            reconcile(campaign, store, me)
            if retry_failed:
                claims.retry_failed(store, campaign.campaign_id)
            procs: list[Any] = []
            last_release = last_keep = time.monotonic()
            crashes, finished = 0, -1
            while True:
                state = counts(campaign, store)
                if on_progress:
                    on_progress(state)
                if state.done + state.failed != finished:
                    crashes, finished = 0, state.done + state.failed
                crashes += sum(1 for p in procs if p.poll() not in (None, 0))
                if crashes > 2 * workers:
                    raise WorldkitError(
                        f"campaign workers keep exiting without finishing a run; see their output in "
                        f"{campaign.out / WORKER_LOGS}, fix the cause, then start the campaign again"
                    )
                procs = [p for p in procs if p.poll() is None]
                if state.pending and len(procs) < workers:
                    for _ in range(min(workers - len(procs), state.pending)):
                        procs.append(spawn_worker(campaign, runs_per_worker, me.coordinator, max_worker_rss_mb))
                if not state.pending and not state.running and not procs:
                    return state
                if time.monotonic() - last_release > 5 or (not procs and state.running):
                    claims.release_dead(store, campaign.campaign_id, lease_s=LEASE_S, me=me)
                    last_release = time.monotonic()
                if time.monotonic() - last_keep > KEEP_S:
                    still_in_charge(store, campaign, me)
                    last_keep = time.monotonic()
                time.sleep(poll_s)
    finally:
        lock.release()


class _Coordinating:
    def __init__(self, store: Store, campaign: Campaign, executor: str) -> None:
        self.store, self.campaign, self.executor = store, campaign, executor
        self.holder = claims.this_holder(claims.new_coordinator_id())

    def __enter__(self) -> claims.Holder:
        claims.acquire(self.store, self.campaign.campaign_id, self.holder.coordinator, executor=self.executor,
                       folder=str(self.campaign.out))
        return self.holder

    def __exit__(self, *exc: object) -> None:
        try:
            claims.release(self.store, self.campaign.campaign_id, self.holder.coordinator)
        except WorldkitError:
            pass  # the store went away: the lease runs out by itself


def coordinating(store: Store, campaign: Campaign, executor: str) -> _Coordinating:
    """Hold the campaign as its one coordinator while the block runs (a fresh random coordinator id,
    the holder every claim of this coordinator names); given up on leaving."""
    return _Coordinating(store, campaign, executor)


def still_in_charge(store: Store, campaign: Campaign, me: claims.Holder) -> None:
    """Renew the coordinator's hold; stop (an error) if the campaign passed to another coordinator."""
    if not claims.keep(store, campaign.campaign_id, me.coordinator):
        raise WorldkitError(
            f"campaign {campaign.campaign_id} passed to another coordinator while this one was not heard "
            f"from for {claims.COORDINATOR_LEASE_S:.0f} s (stopped or cut off); nothing this one finishes "
            "from now on is recorded. See `worldkit campaign status` for where it stands."
        )


def read_state(out: Path) -> dict[str, Any]:
    path = Path(out) / STATE_FILE
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"{out} is not a campaign folder (no {STATE_FILE}); pass the --out of `worldkit campaign run`") from None


def load_campaign(out: Path, store_url: str | None = None) -> Campaign:
    """The campaign in folder `out`, from its written plan (its digest is checked)."""
    from worldkit.campaign.plan import DIGEST_FILE, PLAN_FILE

    out = Path(out).absolute()
    state = read_state(out)
    data = (out / PLAN_FILE).read_bytes()
    recorded = (out / DIGEST_FILE).read_text(encoding="utf-8").split()[0]
    if sha256_bytes(data) != recorded or recorded != state["plan_sha256"]:
        raise WorldkitError(f"{out / PLAN_FILE} does not match its digest {recorded[:12]}…; the plan was modified")
    plan = CampaignPlan.model_validate_json(data)
    return Campaign(plan=plan, paths={}, out=out, store_url=campaign_store(out, state, store_url))


def campaign_store(out: Path, state: dict[str, Any], given: str | None = None) -> str:
    """The store the campaign in `out` was run with (`campaign.json` names it, password masked).

    A URL given (`--store`, else $WORLDKIT_STORE) must name that same store: it supplies the
    password the folder does not keep."""
    recorded = str(state.get("store") or "")
    if not recorded:
        raise UsageError(f"{out / STATE_FILE} names no store; pass the campaign's store with --store URL")
    given = given or os.environ.get("WORLDKIT_STORE") or None
    if given is not None:
        url = resolve_url(given)
        if describe_url(url) != recorded:
            raise UsageError(
                f"--store {describe_url(url)} is not the store of campaign folder {out} ({recorded}, named in "
                f"{out / STATE_FILE}); pass that store's URL, or leave --store out"
            )
        return url
    if recorded != describe_url(recorded) or "***" in recorded:
        raise UsageError(
            f"campaign folder {out} was run with store {recorded}, whose password the folder does not keep; "
            "pass its URL with --store or $WORLDKIT_STORE"
        )
    return recorded

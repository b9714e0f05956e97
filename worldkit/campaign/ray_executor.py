"""Run a campaign's plan on a Ray cluster: the coordinator is the Ray driver, each run a Ray task.

`worldkit campaign run DESIGN --out DIR --executor ray [--ray-address ADDR]` (extra `ray`).

- The driver holds the campaign as its one coordinator (`claims.acquire`), holds `DIR/.lock`,
  reconciles the folder with the store exactly as the local executor does, then claims pending
  runs in plan order and submits each as a Ray task declaring its resources (CPUs, memory, and an
  optional custom resource for an agent endpoint's concurrency).
- A task executes the run with the same library function as `worldkit run`
  (`executor.execute_run`) in a scratch folder on its node, writing the run's event log into the
  campaign's store as it goes (every node must reach that store: PostgreSQL for a real cluster),
  and returns the run folder as a tar archive. The driver alone writes `DIR/runs/` and marks the
  run finished in the store, conditional on still holding that attempt.
- A run lost with its node or worker is given back to the pool and claimed again as a new attempt
  under a new run id (Ray's own task retries would rerun it under the old run id, whose event log
  the store already holds in part). A result for an attempt that no longer counts is discarded,
  and `worldkit campaign status` lists it.
- A killed driver resumes from the store and `DIR` like the local executor: start it again.
"""

from __future__ import annotations

import io
import os
import shutil
import tarfile
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from worldkit.campaign import claims
from worldkit.campaign.executor import (
    INFLIGHT,
    KEEP_S,
    RUNS,
    Campaign,
    CampaignCounts,
    _DirLock,
    _rss_kb,
    coordinating,
    counts,
    execute_run,
    open_campaign,
    reconcile,
    still_in_charge,
)
from worldkit.campaign.plan import CampaignPlan
from worldkit.canon import sha256_file
from worldkit.errors import UsageError, WorldkitError
from worldkit.store import Store

__all__ = ["RayOptions", "run_campaign_ray"]

MAX_LOSSES = 3
"""A run lost this many times with its node or worker is marked failed."""


@dataclass(frozen=True)
class RayOptions:
    """Where and how the runs go on the cluster."""

    address: str | None = None
    """The cluster (`ray start --head` prints it; `auto` finds a local one); None starts Ray on this machine."""
    cpus_per_run: float = 1.0
    memory_mb: int = 0
    """Memory each run reserves on its node (0: none declared)."""
    endpoint_resource: str | None = None
    """A custom resource each run takes one unit of (declare it on the nodes, e.g. `--resources
    '{"endpoint": 4}'`, to cap the concurrency of an agent endpoint)."""
    max_in_flight: int = 0
    """Runs submitted at once (0: as many as the cluster's CPUs allow)."""


@dataclass
class _Submitted:
    claim: claims.Claim
    started: float = field(default_factory=time.monotonic)


def _execute_remote(job: dict[str, Any]) -> dict[str, Any]:
    """A Ray task: one planned run executed in a scratch folder on this node; the folder comes back
    as a tar archive (or the reason it could not be made)."""
    plan = CampaignPlan.model_validate_json(job["plan"])
    scratch = Path(tempfile.mkdtemp(prefix="worldkit-ray-"))
    campaign = Campaign(plan=plan, paths=dict(job["paths"]), out=scratch, store_url=job["store_url"])
    run = campaign.run_for(int(job["seq"]))
    run_id = str(job["run_id"])
    result: dict[str, Any] = {"seq": job["seq"], "run_id": run_id, "error": None, "tar": None,
                              "host": os.uname().nodename}
    try:
        try:
            folder = execute_run(campaign, run, run_id)
        except Exception as error:  # noqa: BLE001 - any failure of one run is that run's result
            result["error"] = getattr(error, "message", None) or f"{type(error).__name__}: {error}"
            folder = scratch / INFLIGHT / run_id
            if not (folder / campaign.record_file(run)).is_file():
                return result  # no record: nothing to keep
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as archive:
            archive.add(folder, arcname=run_id)
        result["tar"] = buffer.getvalue()
        result["rss_kb"] = _rss_kb()
        return result
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _unpack(data: bytes, run_id: str, into: Path) -> Path:
    """The archive's one folder `run_id`, extracted under `into` (nothing outside it: tarfile's
    `data` filter refuses links out, absolute names and devices)."""
    into.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r") as archive:
        names = {member.name.split("/", 1)[0] for member in archive.getmembers()}
        if names != {run_id}:
            raise WorldkitError(f"the result of run {run_id} holds {sorted(names)}, not one folder {run_id}")
        archive.extractall(into, filter="data")
    return into / run_id


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise UsageError(
            "--executor ray needs Ray: install worldkit with its `ray` extra (pip install 'worldkit[ray]')"
        ) from None
    return ray


def run_campaign_ray(
    design_path: Path,
    out: Path,
    *,
    options: RayOptions = RayOptions(),
    store_url: str | None = None,
    retry_failed: bool = False,
    on_progress: Callable[[CampaignCounts], None] | None = None,
    on_finished: Callable[[str], None] | None = None,
    poll_s: float = 0.5,
) -> CampaignCounts:
    """Run (or resume) the campaign of `design_path` in `out` on a Ray cluster."""
    ray = _ray()
    out = Path(out).absolute()
    lock = _DirLock(out)
    started_ray = False
    try:
        campaign = open_campaign(design_path, out, store_url)
        if not ray.is_initialized():
            ray.init(address=options.address, include_dashboard=False, log_to_driver=False,
                     configure_logging=False)  # fmt: skip
            started_ray = True
        with Store.open(campaign.store_url) as store, coordinating(store, campaign, "ray") as me:
            reconcile(campaign, store, me)
            if retry_failed:
                claims.retry_failed(store, campaign.campaign_id)
            return _drive(ray, campaign, store, me, options, on_progress, on_finished, poll_s)
    finally:
        if started_ray:
            ray.shutdown()
        lock.release()


def _capacity(ray: Any, options: RayOptions) -> int:
    if options.max_in_flight:
        return options.max_in_flight
    cpus = float(ray.cluster_resources().get("CPU", 1))
    return max(1, int(cpus // max(options.cpus_per_run, 0.01)))


def _drive(ray: Any, campaign: Campaign, store: Store, me: claims.Holder, options: RayOptions,
           on_progress: Callable[[CampaignCounts], None] | None, on_finished: Callable[[str], None] | None,
           poll_s: float) -> CampaignCounts:
    from worldkit.campaign.plan import plan_bytes

    remote_options: dict[str, Any] = {"num_cpus": options.cpus_per_run, "max_retries": 0}
    if options.memory_mb:
        remote_options["memory"] = options.memory_mb * 1024 * 1024
    if options.endpoint_resource:
        remote_options["resources"] = {options.endpoint_resource: 1}
    task = ray.remote(_execute_remote).options(**remote_options)
    plan_json = plan_bytes(campaign.plan).decode("utf-8")
    (campaign.out / RUNS).mkdir(parents=True, exist_ok=True)
    inflight: dict[Any, _Submitted] = {}
    losses: dict[int, int] = {}
    recorded: set[int] = set()
    last_keep = time.monotonic()
    capacity = _capacity(ray, options)
    while True:
        while len(inflight) < capacity:
            claim = claims.claim_next(store, campaign.campaign_id, me, campaign.run_id)
            if claim is None:
                break
            job = {"plan": plan_json, "paths": campaign.paths, "store_url": campaign.store_url,
                   "seq": claim.seq, "run_id": claim.run_id}
            inflight[task.remote(job)] = _Submitted(claim)
        state = counts(campaign, store)
        if on_progress:
            on_progress(state)
        if not inflight and not state.pending and not state.running:
            return state
        if not inflight and state.running and not claims.release_dead(store, campaign.campaign_id, lease_s=0, me=me):
            raise WorldkitError(f"internal error: campaign {campaign.campaign_id} has running runs this driver "
                                "did not submit and cannot release")
        ready, _ = ray.wait(list(inflight), num_returns=1, timeout=poll_s) if inflight else ([], [])
        for ref in ready:
            submitted = inflight.pop(ref)
            line = _collect(ray, ref, submitted.claim, campaign, store, me, losses, recorded)
            if on_finished and line:
                on_finished(line)
        if time.monotonic() - last_keep > KEEP_S:
            still_in_charge(store, campaign, me)
            last_keep = time.monotonic()


def _collect(ray: Any, ref: Any, claim: claims.Claim, campaign: Campaign, store: Store, me: claims.Holder,
             losses: dict[int, int], recorded: set[int]) -> str:
    """Record one task's result (or its loss); the line a person sees for it."""
    cid = campaign.campaign_id
    try:
        result = ray.get(ref)
    except ray.exceptions.RayError as error:  # the node or worker was lost: the run never finished
        losses[claim.seq] = losses.get(claim.seq, 0) + 1
        reason = f"lost on the cluster ({type(error).__name__})"
        if losses[claim.seq] >= MAX_LOSSES:
            claims.finish(store, cid, claim, me, status="failed", error=f"{reason}, {MAX_LOSSES} times")
            return f"failed {claim.run_id}: {reason}, {MAX_LOSSES} times"
        claims.requeue(store, cid, claim, me, reason)
        return f"lost   {claim.run_id}: {reason}; runs again as a new attempt"
    if claim.seq in recorded:
        claims.discard(store, cid, claim.seq, claim.run_id, "its planned run was already recorded")
        return f"discarded {claim.run_id}: its planned run was already recorded"
    run = campaign.run_for(claim.seq)
    final = campaign.out / RUNS / claim.run_id
    shutil.rmtree(final, ignore_errors=True)
    if result["tar"] is not None:
        staged = _unpack(result["tar"], claim.run_id, campaign.out / INFLIGHT)
        os.replace(staged, final)
    status = "failed" if result["error"] else "done"
    record = final / campaign.record_file(run)
    digest = sha256_file(record) if record.is_file() else None
    if not claims.finish(store, cid, claim, me, status=status, error=result["error"], record_sha256=digest,
                         rss_kb=result.get("rss_kb")):
        shutil.rmtree(final, ignore_errors=True)
        claims.discard(store, cid, claim.seq, claim.run_id, "the attempt no longer held its claim")
        return f"discarded {claim.run_id}: the attempt no longer held its claim"
    recorded.add(claim.seq)
    if status == "failed":
        return f"failed {claim.run_id} on {result['host']}: {result['error']}"
    return f"done   {claim.run_id} on {result['host']}"

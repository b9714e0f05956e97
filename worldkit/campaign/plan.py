"""Expand a campaign design into its plan: every run, in a deterministic interleaved schedule.

The schedule is the paper's run ledger's: within each task × agent cell the runs fall into
collection blocks, each block holding an equal share of every condition (the paper: two blocks of
2 full-projection runs and 1 run per curator's packet), in a seeded order; `order` numbers a
cell's runs 1…n across its blocks (the ledger's `scheduled_order_within_task_agent`). Execution
goes block by block; within a block, the cells take turns at each position in a seeded order,
so tasks, agents and conditions progress together in the same collection period.

The plan's bytes depend only on the design, on the content digests of its tasks and on the
judge's calibration (its digest and figures, read when the plan is made) — never on paths, hosts
or clocks — so workers on several hosts derive the same plan and campaign id.
"""

from __future__ import annotations

import hashlib
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from worldkit.campaign.design import CampaignDesign, InvalidDesign, OmitWhenNone
from worldkit.canon import canonical_bytes, canonical_json, sha256_bytes, sha256_file

__all__ = [
    "PLAN_FILE",
    "PLAN_SCHEMA_VERSION",
    "CampaignPlan",
    "PlannedRun",
    "PlannedTask",
    "ResolvedTask",
    "expand",
    "plan_bytes",
    "resolve_calibration",
    "resolve_tasks",
    "write_plan",
]

PLAN_SCHEMA_VERSION = 1
_UNSAFE = re.compile(r"[^A-Za-z0-9._@+-]")
PLAN_FILE = "plan.json"
DIGEST_FILE = "plan.sha256"

TaskKind = Literal["overlay", "packet"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class PlannedTask(_Frozen):
    """A task of the campaign, pinned by the digest of its content."""

    id: str
    """The overlay's or packet's task id."""
    ref: str
    """The task as the design names it."""
    kind: TaskKind
    """`overlay` (a WorkWorlds task) or `packet` (an InfoOrgBench packet)."""
    sha256: str
    """Overlay digest (`overlay_digest`) or SHA-256 of the packet's overlay.json."""
    packets: list[str]
    """The curated packets the overlay declares (sorted)."""


class PlannedRun(_Frozen):
    """One scheduled run."""

    seq: int
    """Position in the execution order, 1-based."""
    task: str
    """Task id."""
    agent: str
    """Agent spec from the design."""
    condition: str
    """`full` or `curated:NAME`."""
    block: int
    """Collection block, 1-based."""
    order: int
    """Scheduled order within the task × agent cell, 1-based across blocks."""

    @property
    def key(self) -> str:
        return f"{self.seq:04d}"


class CampaignPlan(OmitWhenNone):
    """The expanded plan; its canonical bytes are written to `plan.json` before any run."""

    omit_when_none = ("judge_calibration",)

    schema_version: int
    """Version of the plan format."""
    design: CampaignDesign
    """The design it was expanded from."""
    tasks: list[PlannedTask]
    """Every task, in design order."""
    runs: list[PlannedRun]
    """Every run, in execution order."""
    judge_calibration: dict[str, Any] | None = None
    """The design judge's calibration as every run records it (`Calibration.summary()`: digest,
    judge, figures), read from `judge.calibration` when the plan was made; None without one."""

    @property
    def digest(self) -> str:
        return sha256_bytes(plan_bytes(self))

    @property
    def campaign_id(self) -> str:
        """Short, content-derived id of the campaign (used in run ids and in the store)."""
        return "c" + self.digest[:12]

    def task(self, task_id: str) -> PlannedTask:
        return next(t for t in self.tasks if t.id == task_id)

    def run_id(self, run: PlannedRun, attempt: int) -> str:
        """The run id of one attempt: each attempt gets its own event log."""
        slug = _UNSAFE.sub("-", f"{run.task}.{run.agent}.{run.condition}".replace(":", "-"))
        head, tail = f"{self.campaign_id}-{run.key}.", f".a{attempt}"
        return head + slug[: 128 - len(head) - len(tail)] + tail


@dataclass(frozen=True)
class ResolvedTask:
    """A planned task and where this host finds it (paths are not part of the plan)."""

    planned: PlannedTask
    path: Path


def _is_packet(path: Path) -> bool:
    return (path / "overlay.json").is_file() and (path / "packet.json").is_file()


def _resolve_one(ref: str, base: Path) -> ResolvedTask:
    from worldkit.overlay import load_overlay, overlay_digest, resolve_overlay

    local = (base / ref) if not Path(ref).is_absolute() else Path(ref)
    if local.is_dir() and _is_packet(local):
        from worldkit.infoorg.overlays import load_overlay as load_packet_overlay

        overlay = load_packet_overlay(local)
        planned = PlannedTask(id=overlay.id, ref=ref, kind="packet", sha256=sha256_file(local / "overlay.json"), packets=[])
        return ResolvedTask(planned, local.resolve())
    try:
        path = resolve_overlay(local if local.exists() else ref)
    except Exception as error:  # noqa: BLE001 - every way of not finding a task is the same user error
        message = getattr(error, "message", str(error))
        raise InvalidDesign(f"task {ref!r} is neither an overlay nor a packet directory ({message})", field="tasks") from None
    overlay = load_overlay(path)
    planned = PlannedTask(id=overlay.id, ref=ref, kind="overlay", sha256=overlay_digest(overlay), packets=sorted(overlay.curated))
    return ResolvedTask(planned, path)


def resolve_tasks(design: CampaignDesign, base: Path) -> list[ResolvedTask]:
    """Find and pin every task of the design; relative paths are read from `base`."""
    resolved = [_resolve_one(ref, Path(base)) for ref in design.tasks]
    ids = [r.planned.id for r in resolved]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        raise InvalidDesign(f"tasks name the same task twice: {', '.join(repeated)}; list each once", field="tasks")
    if design.conditions.curated:
        bare = [r.planned.id for r in resolved if not r.planned.packets]
        if bare:
            raise InvalidDesign(
                f"conditions.curated is {design.conditions.curated} but {', '.join(bare)} declare no curated "
                "packet; set conditions.curated to 0 or drop those tasks",
                field="conditions.curated",
            )
    return resolved


def resolve_calibration(design: CampaignDesign, design_file: Path) -> dict[str, Any] | None:
    """The summary of the design judge's calibration file (relative to the design file's folder),
    checked: sealed by its sha256 and made with this judge's configuration. None without one."""
    from worldkit.errors import UsageError
    from worldkit.grade.calibration import attach_summary, read_calibration
    from worldkit.grade.judge import make_judge

    entry = design.judge
    if entry is None or entry.calibration is None:
        return None
    path = Path(entry.calibration)
    path = path if path.is_absolute() else Path(design_file).parent / path
    if not path.is_file():
        raise InvalidDesign(f"no calibration file at {path}; give the file `worldkit judge calibrate --out` wrote, "
                            "relative to the design file's folder", file=design_file, field="judge.calibration")  # fmt: skip
    try:
        summary = read_calibration(path).summary()
        judge = make_judge(entry.kind, entry.factory_options())
        if judge is None:
            raise UsageError("judge.calibration needs a judge: set judge.kind to the judge it calibrates")
        attach_summary(judge, summary, str(path))
    except UsageError as error:
        raise InvalidDesign(error.message, file=design_file, field="judge.calibration") from None
    return summary


def _rng(*parts: object) -> random.Random:
    seed = int.from_bytes(hashlib.sha256(canonical_json(list(parts)).encode("utf-8")).digest()[:8], "big")
    return random.Random(seed)


def expand(design: CampaignDesign, tasks: list[PlannedTask], judge_calibration: dict[str, Any] | None = None) -> CampaignPlan:
    """The plan of `design` over its pinned `tasks` and judge calibration (a pure function of them)."""
    blocks = design.block_count
    full_per_block = design.conditions.full // blocks
    curated_per_block = design.conditions.curated // blocks
    # cell (task, agent) → per block, its conditions in the seeded order
    cells: list[tuple[str, str]] = [(t.id, a.name) for t in tasks for a in design.agents]
    schedule: dict[tuple[str, str, int], list[str]] = {}
    for task in tasks:
        units = ["full"] * full_per_block + [f"curated:{p}" for p in task.packets for _ in range(curated_per_block)]
        for agent in design.agents:
            for block in range(1, blocks + 1):
                order = list(units)
                _rng(design.seed, "cell", task.id, agent.name, block).shuffle(order)
                schedule[(task.id, agent.name, block)] = order
    runs: list[PlannedRun] = []
    for block in range(1, blocks + 1):
        width = max(len(schedule[(t, a, block)]) for t, a in cells)
        for position in range(width):
            turn = list(cells)
            _rng(design.seed, "turn", block, position).shuffle(turn)
            for task_id, agent in turn:
                units = schedule[(task_id, agent, block)]
                if position < len(units):
                    runs.append(PlannedRun(
                        seq=len(runs) + 1, task=task_id, agent=agent, condition=units[position], block=block,
                        order=(block - 1) * len(units) + position + 1,
                    ))  # fmt: skip
    return CampaignPlan(schema_version=PLAN_SCHEMA_VERSION, design=design, tasks=tasks, runs=runs,
                        judge_calibration=judge_calibration)  # fmt: skip


def plan_bytes(plan: CampaignPlan) -> bytes:
    """The plan's canonical bytes (sorted keys, fixed separators): what its digest covers."""
    return canonical_bytes(plan.model_dump(mode="json"))


def write_plan(plan: CampaignPlan, out: Path) -> Path:
    """Write `plan.json` and `plan.sha256` into `out`; a folder holding another plan is refused."""
    from worldkit.errors import UsageError

    out = Path(out)
    data = plan_bytes(plan)
    target = out / PLAN_FILE
    if target.exists():
        if target.read_bytes() != data:
            raise UsageError(
                f"{out} holds another campaign's plan ({target}); give a new --out, or the design "
                "this folder was started with"
            )
        return target
    out.mkdir(parents=True, exist_ok=True)
    scratch = out / f".{PLAN_FILE}.tmp"
    scratch.write_bytes(data)
    (out / DIGEST_FILE).write_text(f"{sha256_bytes(data)}  {PLAN_FILE}\n", encoding="utf-8")
    scratch.replace(target)
    return target

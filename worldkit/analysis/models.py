"""What the analysis reports: pydantic models, every rate a proportion in [0, 1].

Differences are curated minus full. A figure the data cannot support is None beside a
`reason` that says why, never a number.
"""

from __future__ import annotations

from worldkit._model import Model

__all__ = [
    "AgentContrast",
    "Analysis",
    "BootstrapInterval",
    "Contrast",
    "GeeEstimate",
    "LeaveOneOut",
    "PacketContrast",
    "TaskContrast",
    "TaskDelta",
    "UnknownRecoding",
]


class BootstrapInterval(Model):
    """A 95% percentile task-cluster bootstrap interval."""


    lower: float
    """2.5th percentile of the replicate differences."""
    upper: float
    """97.5th percentile."""
    replicates: int
    """Replicates drawn."""
    valid: int
    """Replicates whose estimate was finite (the rest are dropped)."""
    saturated: int = 0
    """Of the valid GEE replicates, those whose refit diverged until a standardized probability
    reached 0 or 1; kept, as the study's code keeps them, but their values depend on the
    platform's floating point, and so may the interval's last digit."""
    seed: int
    """Seed of numpy's `default_rng`."""
    method: str
    """`gee` (each replicate refits the GEE) or `raw` (summed task counts)."""


class Contrast(Model):
    """An outcome under each condition and their difference."""


    full: float
    """Full projection."""
    curated: float
    """Curated subset."""
    difference: float
    """curated - full."""
    interval: BootstrapInterval | None = None
    """Bootstrap interval of the difference, where computed."""
    interval_reason: str | None = None
    """Why there is no interval, when one was asked for."""


class GeeEstimate(Model):
    """A GEE-standardized outcome, or the reason it cannot be estimated."""


    executions: int
    """Executions the model was fitted on (graded ones for pass, observable for access)."""
    contrast: Contrast | None
    """Standardized probabilities and risk difference; None with `reason`."""
    working_correlation: float | None = None
    """Exchangeable within-task correlation."""
    coefficients: dict[str, float] = {}
    """Logit coefficients (curated and the first agent are the references)."""
    reason: str | None = None
    """Why there is no estimate."""


class TaskDelta(Model):
    """One task's pass difference (raw)."""


    task: str
    """Task id."""
    difference: float
    """curated - full pass rate for this task."""


class TaskContrast(Model):
    """Raw per-task rates (Table E2)."""


    task: str
    """Task id."""
    executions: dict[str, int]
    """Condition → the task's criterion executions."""
    passed: Contrast | None
    """Pass rate by condition; None when the task lacks a condition."""
    access: Contrast | None
    """Access rate (observable labels) by condition."""
    search_reduced: bool | None
    """True when curation reduced every search-burden mean of the task."""


class LeaveOneOut(Model):
    """The pooled raw difference with each task held out."""


    passed: dict[str, float]
    """Held-out task → pooled pass difference without it."""
    access: dict[str, float]
    """Held-out task → pooled access difference without it."""
    pass_range: tuple[float, float]
    """Smallest and largest pass difference."""
    access_range: tuple[float, float]
    """Smallest and largest access difference."""


class UnknownRecoding(Model):
    """Access over all executions with the unknown labels recoded."""


    all_accessed: Contrast
    """Every unknown counted as accessed."""
    all_not_accessed: Contrast
    """Every unknown counted as not accessed."""
    adversarial_lower: Contrast
    """Unknowns against curation: accessed under full, not accessed under curation."""
    adversarial_upper: Contrast
    """Unknowns for curation: not accessed under full, accessed under curation."""


class PacketContrast(Model):
    """One curated packet (curator) against the full projection, raw pass rates."""


    packet: str
    """Packet name."""
    passed: int
    """Passed executions in the packet's runs."""
    graded: int
    """Graded executions in the packet's runs."""
    contrast: Contrast
    """Pass under the full projection (all its runs) and under this packet."""
    tasks: int
    """Tasks run under both this packet and the full projection."""
    positive: int
    """Tasks where this packet's pass rate is above the full projection's."""
    reversals: list[TaskDelta]
    """Tasks where it is below."""


class AgentContrast(Model):
    """One agent's raw rates (Table E3)."""


    agent: str
    """Agent id."""
    passed: Contrast | None
    """Pass rate by condition."""
    pass_counts: dict[str, tuple[int, int]]
    """Condition → (passed, graded)."""
    access: Contrast | None
    """Access rate (observable labels) by condition."""


class Analysis(Model):
    """The paper's estimates for one source of runs, or the reason they cannot be computed."""


    source: str
    """The rows' source (a ledger directory's name, or `runs`)."""
    reason: str | None = None
    """Why nothing could be estimated (e.g. one condition only, too few task clusters)."""
    tasks: list[str] = []
    """Task clusters."""
    agents: list[str] = []
    """Agents (the standardization panel)."""
    runs: int = 0
    """Runs."""
    executions: int = 0
    """Criterion executions."""
    replicates: int = 0
    """Bootstrap replicates asked for (0: no intervals)."""
    seed: int = 0
    """Bootstrap seed."""
    passed: GeeEstimate | None = None
    """Criterion pass, GEE-standardized."""
    access: GeeEstimate | None = None
    """Sufficient-evidence access among observable labels, GEE-standardized."""
    pass_given_access: Contrast | None = None
    """Raw pass among accessed executions (descriptive), raw bootstrap interval."""
    raw_pass: Contrast | None = None
    """Raw pooled pass rates."""
    raw_access: Contrast | None = None
    """Raw pooled access rates (observable labels)."""
    equal_task_pass: Contrast | None = None
    """Mean over tasks of each task's pass rate."""
    equal_task_access: Contrast | None = None
    """Mean over tasks of each task's access rate."""
    leave_one_task_out: LeaveOneOut | None = None
    """Pooled raw differences with each task removed."""
    unknown_recoding: UnknownRecoding | None = None
    """Access bounds from recoding unknown labels."""
    by_task: list[TaskContrast] = []
    """Raw per-task rates."""
    positive_tasks: int = 0
    """Tasks whose pass rate is higher under curation."""
    reversals: list[TaskDelta] = []
    """Tasks whose pass rate is lower under curation."""
    search_reduced_tasks: int = 0
    """Tasks where curation reduced all three search-burden means."""
    packets: list[PacketContrast] = []
    """Each curated packet against the full projection."""
    packet_gap: float | None = None
    """Mean over tasks of the absolute pass-rate difference between that task's packets."""
    by_agent: list[AgentContrast] = []
    """Raw per-agent rates."""

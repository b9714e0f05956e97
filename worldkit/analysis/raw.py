"""The study's descriptive and sensitivity estimators, from raw counts.

Pooled and per-task rates, equal task weighting, leave-one-task-out, unknown-label recoding
with the condition-adversarial bounds, each curated packet against the full projection with
its raw task-cluster bootstrap, and per-agent rates. Pass uses graded executions; access uses
observable labels unless a recoding says otherwise. Nothing here fits a model.
"""

from __future__ import annotations

import numpy as np

from worldkit.analysis.bootstrap import count_bootstrap, percentile
from worldkit.analysis.executions import Executions
from worldkit.analysis.models import (
    AgentContrast,
    BootstrapInterval,
    Contrast,
    LeaveOneOut,
    PacketContrast,
    TaskContrast,
    TaskDelta,
    UnknownRecoding,
)

__all__ = [
    "by_agent",
    "by_task",
    "equal_task",
    "leave_one_task_out",
    "packets",
    "pass_given_access",
    "pooled",
    "unknown_recoding",
]


def _rate(values: np.ndarray) -> float | None:
    known = values[~np.isnan(values)]
    return float(known.mean()) if len(known) else None


def _contrast(full: float | None, curated: float | None) -> Contrast | None:
    if full is None or curated is None:
        return None
    return Contrast(full=full, curated=curated, difference=curated - full)


def _split(data: Executions, values: np.ndarray) -> Contrast | None:
    return _contrast(_rate(values[~data.curated]), _rate(values[data.curated]))


def pooled(data: Executions) -> tuple[Contrast | None, Contrast | None]:
    """Raw pass and access (observable) rates by condition."""
    return _split(data, data.passed), _split(data, data.accessed)


def _counts(data: Executions, mask_full: np.ndarray, mask_curated: np.ndarray,
            value: np.ndarray, among: np.ndarray | None = None) -> np.ndarray:
    """Per task: [curated successes, curated trials, full successes, full trials]."""
    keep = ~np.isnan(value) if among is None else (~np.isnan(value) & among)
    rows = []
    for t in range(len(data.tasks)):
        here = keep & (data.task == t)
        row = []
        for mask in (mask_curated, mask_full):
            chosen = here & mask
            row += [float(value[chosen].sum()), float(chosen.sum())]
        rows.append(row)
    return np.asarray(rows)


def _difference(sampled: np.ndarray) -> np.ndarray:
    return sampled[:, 0] / sampled[:, 1] - sampled[:, 2] / sampled[:, 3]


def _interval(counts: np.ndarray, replicates: int, seed: int) -> tuple[
        BootstrapInterval | None, str | None]:
    if replicates <= 0:
        return None, None
    values = count_bootstrap(counts, _difference, replicates, seed)
    bounds = percentile(values, replicates)
    valid = int(np.isfinite(values).sum())
    if bounds is None:
        return None, f"only {valid} of {replicates} bootstrap replicates had both conditions"
    return BootstrapInterval(lower=bounds[0], upper=bounds[1], replicates=replicates,
                             valid=valid, seed=seed, method="raw"), None


def pass_given_access(data: Executions, replicates: int, seed: int) -> Contrast | None:
    """Pass among accessed executions (descriptive), with the raw task-cluster bootstrap."""
    accessed = data.accessed == 1.0
    contrast = _contrast(_rate(data.passed[accessed & ~data.curated]),
                         _rate(data.passed[accessed & data.curated]))
    if contrast is None:
        return None
    interval, reason = _interval(_counts(data, ~data.curated, data.curated, data.passed,
                                         accessed), replicates, seed)
    return contrast.model_copy(update={"interval": interval, "interval_reason": reason})


def _task_rates(data: Executions, values: np.ndarray) -> list[Contrast | None]:
    return [_split(data.subset(data.task == t), values[data.task == t])
            for t in range(len(data.tasks))]


def equal_task(data: Executions) -> tuple[Contrast | None, Contrast | None]:
    """Each task weighs the same: the mean over tasks of each task's rates."""
    out = []
    for values in (data.passed, data.accessed):
        rates = [c for c in _task_rates(data, values) if c is not None]
        out.append(_contrast(float(np.mean([c.full for c in rates])),
                             float(np.mean([c.curated for c in rates]))) if rates else None)
    return out[0], out[1]


def leave_one_task_out(data: Executions) -> LeaveOneOut | None:
    """The pooled raw differences with each task removed in turn."""
    passed, access = {}, {}
    for t, name in enumerate(data.tasks):
        rest = data.subset(data.task != t)
        p, a = pooled(rest)
        if p is not None:
            passed[name] = p.difference
        if a is not None:
            access[name] = a.difference
    if not passed or not access:
        return None
    return LeaveOneOut(passed=passed, access=access,
                       pass_range=(min(passed.values()), max(passed.values())),
                       access_range=(min(access.values()), max(access.values())))


def unknown_recoding(data: Executions) -> UnknownRecoding | None:
    """Access over all executions, unknown labels recoded each way and adversarially."""
    rates = {}
    for curated in (False, True):
        labels = data.accessed[data.curated == curated]
        if not len(labels):
            return None
        accessed, unknown = float((labels == 1.0).sum()), float(np.isnan(labels).sum())
        rates[curated] = ((accessed + unknown) / len(labels), accessed / len(labels))

    def pair(full: float, curated: float) -> Contrast:
        return Contrast(full=full, curated=curated, difference=curated - full)

    return UnknownRecoding(
        all_accessed=pair(rates[False][0], rates[True][0]),
        all_not_accessed=pair(rates[False][1], rates[True][1]),
        adversarial_lower=pair(rates[False][0], rates[True][1]),
        adversarial_upper=pair(rates[False][1], rates[True][0]),
    )


def by_task(data: Executions) -> list[TaskContrast]:
    """Raw per-task pass and access by condition, and whether curation cut search burden."""
    out = []
    for t, name in enumerate(data.tasks):
        here = data.subset(data.task == t)
        passed, access = pooled(here)
        sizes = {"full": int((~here.curated).sum()), "curated": int(here.curated.sum())}
        out.append(TaskContrast(task=name, executions=sizes, passed=passed, access=access,
                                search_reduced=_search_reduced(here)))
    return out


def _run_means(data: Executions) -> np.ndarray:
    """Per-run burden, one row per run."""
    _, first = np.unique(data.run, return_index=True)
    return data.burden[first]


def _search_reduced(data: Executions) -> bool | None:
    full, curated = _run_means(data.subset(~data.curated)), _run_means(data.subset(data.curated))
    if not len(full) or not len(curated):
        return None
    means = []
    for column in range(3):
        a, b = full[:, column], curated[:, column]
        a, b = a[~np.isnan(a)], b[~np.isnan(b)]
        if not len(a) or not len(b):
            return None
        means.append(b.mean() < a.mean())
    return all(means)


def _deltas(data: Executions, curated_mask: np.ndarray) -> list[TaskDelta]:
    out = []
    for t, name in enumerate(data.tasks):
        here = data.task == t
        full, cur = _rate(data.passed[here & ~data.curated]), _rate(data.passed[here & curated_mask])
        if full is not None and cur is not None:
            out.append(TaskDelta(task=name, difference=cur - full))
    return out


def task_deltas(data: Executions) -> list[TaskDelta]:
    """Each task's raw pass difference (tasks holding both conditions)."""
    return _deltas(data, data.curated)


def packets(data: Executions, replicates: int, seed: int) -> tuple[list[PacketContrast],
                                                                  float | None]:
    """Each packet's raw pass difference from the full projection, with its raw bootstrap,
    and the mean absolute gap between the packets of a task."""
    out = []
    full_rate = _rate(data.passed[~data.curated])
    by_packet: dict[int, dict[str, float]] = {}
    for code, name in enumerate(data.packets):
        mask = data.packet == code
        graded = mask & ~np.isnan(data.passed)
        rate = _rate(data.passed[mask])
        if rate is None or full_rate is None:
            continue
        interval, reason = _interval(_counts(data, ~data.curated, mask, data.passed),
                                     replicates, seed)
        deltas = _deltas(data, mask)
        by_packet[code] = {d.task: d.difference for d in deltas}
        out.append(PacketContrast(
            packet=name, passed=int(data.passed[graded].sum()), graded=int(graded.sum()),
            contrast=Contrast(full=full_rate, curated=rate, difference=rate - full_rate,
                              interval=interval, interval_reason=reason),
            tasks=len(deltas), positive=sum(d.difference > 0 for d in deltas),
            reversals=[d for d in deltas if d.difference < 0],
        ))
    gaps = []
    for task in data.tasks:
        values = [deltas[task] for deltas in by_packet.values() if task in deltas]
        if len(values) >= 2:
            gaps.append(np.mean([abs(a - b) for i, a in enumerate(values) for b in values[i + 1:]]))
    return out, (float(np.mean(gaps)) if gaps else None)


def by_agent(data: Executions) -> list[AgentContrast]:
    """Raw pass and access by condition for each agent."""
    out = []
    for code, name in enumerate(data.agents):
        here = data.subset(data.agent == code)
        passed, access = pooled(here)
        counts = {}
        for label, mask in (("full", ~here.curated), ("curated", here.curated)):
            values = here.passed[mask]
            known = values[~np.isnan(values)]
            counts[label] = (int(known.sum()), len(known))
        out.append(AgentContrast(agent=name, passed=passed, pass_counts=counts, access=access))
    return out

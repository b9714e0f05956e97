"""The analysis on small synthetic runs: what it refuses and why, determinism, parallelism."""

from __future__ import annotations

import random

import numpy as np
import pytest

from worldkit.analysis import analyze
from worldkit.analysis.bootstrap import count_bootstrap, gee_bootstrap, task_draws
from worldkit.analysis.executions import executions
from worldkit.analysis.gee import fit, outcome_data
from worldkit.record.execution import CriterionOutcome, ExecutionRecord, RunStats
from worldkit.record.results import ResultRow


def synthetic(tasks: int = 5, agents: tuple[str, ...] = ("a", "b"), runs: int = 3,
              criteria: int = 6, seed: int = 1, lift: float = 0.2) -> list[ExecutionRecord]:
    """Records whose curated runs pass and access more often, task by task."""
    rng = random.Random(seed)
    out = []
    for t in range(tasks):
        base = rng.uniform(0.3, 0.7)
        for agent in agents:
            for condition in ("full", "curated:p1", "curated:p2"):
                for r in range(runs):
                    p = base + (lift if condition != "full" else 0.0)
                    outcomes = []
                    for c in range(criteria):
                        access = rng.random() < p + 0.1
                        label = "unknown" if rng.random() < 0.05 else (
                            "accessed" if access else "not_accessed")
                        result = "pass" if rng.random() < (p if access else p / 3) else "fail"
                        outcomes.append(CriterionOutcome(id=f"C{c}", route="deterministic",
                                                         result=result, access=label))
                    calls = rng.randint(10, 40)
                    out.append(ExecutionRecord(
                        schema_version=1, run_id=f"T{t}.{agent}.{condition}.{r}", task=f"T{t}",
                        agent=agent, condition=condition, criteria=outcomes,
                        stats=RunStats(inspections=rng.randint(5, 30), tool_calls=calls,
                                       tool_calls_before_first_access=rng.randint(0, calls)),
                    ))
    return out


def rows_of(records: list[ExecutionRecord]) -> list[ResultRow]:
    return [row for record in records for row in record.rows()]


def test_one_condition_is_refused_plainly() -> None:
    rows = [r for r in rows_of(synthetic()) if r.condition == "full"]
    [result] = analyze(rows, replicates=0)
    assert result.passed is None and result.reason is not None
    assert "no curated runs" in result.reason


def test_one_task_is_too_few_clusters() -> None:
    rows = [r for r in rows_of(synthetic()) if r.task == "T0"]
    [result] = analyze(rows, replicates=0)
    assert result.reason is not None and result.reason.startswith("too few task clusters: 1")


def test_tasks_with_one_condition_are_not_clusters() -> None:
    rows = rows_of(synthetic(tasks=3))
    rows = [r for r in rows if not (r.task == "T2" and r.condition == "curated")]
    [result] = analyze(rows, replicates=0)
    assert result.reason is None and result.tasks == ["T0", "T1"]


def test_perfect_separation_is_named_not_estimated() -> None:
    records = synthetic()
    rows = [r.model_copy(update={"passed": True}) if r.condition == "curated" else r
            for r in rows_of(records)]
    [result] = analyze(rows, replicates=0)
    assert result.passed is not None and result.passed.contrast is None
    assert result.passed.reason.startswith("perfect separation: every curated execution passed")
    assert result.access is not None and result.access.contrast is not None  # access unaffected


def test_agent_separation_is_named() -> None:
    rows = [r.model_copy(update={"accessed": False}) if r.agent == "b" else r
            for r in rows_of(synthetic())]
    [result] = analyze(rows, replicates=0)
    assert result.access.contrast is None
    assert "every agent b execution missed their evidence" in result.access.reason


def test_estimates_do_not_depend_on_row_order() -> None:
    rows = rows_of(synthetic())
    shuffled = list(rows)
    random.Random(5).shuffle(shuffled)
    a = analyze(rows, replicates=40, workers=1)
    b = analyze(shuffled, replicates=40, workers=1)
    assert a == b


def test_workers_give_the_same_replicates_as_one_process() -> None:
    data = executions(rows_of(synthetic()))
    rows = outcome_data(data, "pass")
    start = fit(rows.y, rows.x, rows.task, rows.agents).params
    draws = task_draws(data.tasks, 60, seed=7)
    one = gee_bootstrap({"pass": (rows, start)}, len(data.tasks), draws, workers=1)
    two = gee_bootstrap({"pass": (rows, start)}, len(data.tasks), draws, workers=2)
    np.testing.assert_array_equal(one["pass"], two["pass"])
    assert np.isfinite(one["pass"]).all()


def test_task_draws_follow_default_rng_choice() -> None:
    tasks = ("x", "y", "z")
    rng = np.random.default_rng(11)
    expected = [[tasks.index(t) for t in rng.choice(np.array(tasks), 3, replace=True)]
                for _ in range(4)]
    assert task_draws(tasks, 4, 11).tolist() == expected


def test_count_bootstrap_sums_whole_tasks() -> None:
    counts = np.array([[1.0, 2.0], [3.0, 4.0]])
    values = count_bootstrap(counts, lambda s: s[:, 0] + s[:, 1], 5, seed=3)
    draws = np.random.default_rng(3).integers(0, 2, size=(5, 2))
    np.testing.assert_array_equal(values, counts[draws].sum(axis=1).sum(axis=1))


def test_synthetic_lift_is_recovered_and_raw_figures_are_counts() -> None:
    [result] = analyze(rows_of(synthetic(tasks=6, lift=0.25)), replicates=0)
    assert result.passed.contrast.difference > 0.1
    assert result.access.contrast.difference > 0.1
    # Raw pooled pass is passed/graded per condition.
    rows = rows_of(synthetic(tasks=6, lift=0.25))
    full = [r.passed for r in rows if r.condition == "full"]
    assert result.raw_pass.full == pytest.approx(sum(full) / len(full))
    assert [p.packet for p in result.packets] == ["p1", "p2"]
    assert result.positive_tasks + len(result.reversals) <= 6


def test_a_diverged_fit_is_flagged_saturated() -> None:
    rows = [r.model_copy(update={"passed": True}) if r.condition == "curated" else r
            for r in rows_of(synthetic())]
    data = outcome_data(executions(rows), "pass")
    diverged = fit(data.y, data.x, data.task, data.agents, strict=False)
    assert diverged.saturated and diverged.curated > 1 - 1e-9
    healthy = outcome_data(executions(rows_of(synthetic())), "pass")
    assert not fit(healthy.y, healthy.x, healthy.task, healthy.agents).saturated

"""Criterion executions as arrays, the unit every estimator of `worldkit.analysis` works on.

One element per result row. Tasks and agents are coded by their position in sorted order, so
the coding (and every estimate) depends only on the rows, never on their order. Unknowns stay
missing: an ungraded row has `passed = nan`, an unknown access label has `accessed = nan`.
This module never estimates anything.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from worldkit.record.results import ResultRow, check_rows

__all__ = ["Executions", "executions", "support_problem"]


@dataclass(frozen=True)
class Executions:
    """Criterion executions of one source, in canonical row order."""

    tasks: tuple[str, ...]
    """Task ids in sorted order; `task` indexes into it."""
    agents: tuple[str, ...]
    """Agent ids in sorted order; `agent` indexes into it."""
    packets: tuple[str, ...]
    """Curated packet names in sorted order (empty when no curated run names one)."""
    task: np.ndarray
    agent: np.ndarray
    curated: np.ndarray
    """True for the curated condition, False for the full projection."""
    packet: np.ndarray
    """Index into `packets` for curated rows that name a packet, else -1."""
    passed: np.ndarray
    """1.0 pass, 0.0 fail, nan ungraded."""
    accessed: np.ndarray
    """1.0 accessed, 0.0 not accessed, nan unknown."""
    run: np.ndarray
    """Run code per row (runs numbered in canonical order)."""
    burden: np.ndarray
    """(rows, 3): the run's inspections, tool calls and tool calls before first access (nan
    when not recorded), repeated on each of its rows."""

    @property
    def runs(self) -> int:
        """Distinct runs."""
        return len(np.unique(self.run))

    def __len__(self) -> int:
        return len(self.task)

    def subset(self, mask: np.ndarray) -> Executions:
        """The executions where `mask` holds (codes keep their meaning)."""
        return Executions(
            tasks=self.tasks, agents=self.agents, packets=self.packets, task=self.task[mask],
            agent=self.agent[mask], curated=self.curated[mask], packet=self.packet[mask],
            passed=self.passed[mask], accessed=self.accessed[mask], run=self.run[mask],
            burden=self.burden[mask],
        )


def _value(flag: bool | None) -> float:
    return np.nan if flag is None else float(flag)


def _count(value: int | None) -> float:
    return np.nan if value is None else float(value)


def executions(rows: Iterable[ResultRow]) -> Executions:
    """Arrays from result rows (checked and put in canonical order first)."""
    ordered = check_rows(rows)
    tasks = tuple(sorted({row.task for row in ordered}))
    agents = tuple(sorted({row.agent for row in ordered}))
    packets = tuple(sorted({row.packet for row in ordered if row.packet}))
    task_code = {name: i for i, name in enumerate(tasks)}
    agent_code = {name: i for i, name in enumerate(agents)}
    packet_code = {name: i for i, name in enumerate(packets)}
    run_code = {key: i for i, key in enumerate(sorted({row.run_key for row in ordered}))}
    return Executions(
        tasks=tasks,
        agents=agents,
        packets=packets,
        task=np.array([task_code[row.task] for row in ordered], dtype=np.int64),
        agent=np.array([agent_code[row.agent] for row in ordered], dtype=np.int64),
        curated=np.array([row.condition == "curated" for row in ordered], dtype=bool),
        packet=np.array([packet_code.get(row.packet or "", -1) for row in ordered],
                        dtype=np.int64),
        passed=np.array([_value(row.passed) for row in ordered], dtype=float),
        accessed=np.array([_value(row.accessed) for row in ordered], dtype=float),
        run=np.array([run_code[row.run_key] for row in ordered], dtype=np.int64),
        burden=np.array([[_count(row.inspections), _count(row.tool_calls),
                          _count(row.tool_calls_before_first_access)] for row in ordered],
                        dtype=float).reshape(len(ordered), 3),
    )


def support_problem(data: Executions) -> str | None:
    """Why the executions cannot support the condition contrast at all, or None if they can.

    The contrast needs both conditions, and a task-cluster analysis needs at least two tasks
    that each hold both conditions.
    """
    if not len(data):
        return "there are no criterion executions"
    have = {bool(value) for value in data.curated}
    if have != {False, True}:
        missing = "curated" if True not in have else "full"
        return (f"every execution is in one condition; there are no {missing} runs to compare "
                "with — run the same tasks under both `full` and `curated:NAME`")
    both = [name for i, name in enumerate(data.tasks)
            if {bool(v) for v in data.curated[data.task == i]} == {False, True}]
    if len(both) < 2:
        held = ", ".join(both) or "none"
        return (f"too few task clusters: {len(both)} task(s) ran under both conditions ({held}); "
                "task-cluster estimates need at least 2 — run more tasks under both conditions")
    return None

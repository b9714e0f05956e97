"""Oracle and noop runs of a world's tasks, for the world tests (one place for the set-up they share).

`task_conditions(overlays)` lists every (overlay, condition) pair as pytest params: the full view and
each curated packet. `oracle_and_noop(path, condition, tmp_path)` runs the oracle, then noop, on one
task under one condition (offline facts judge, one SQLite store under `tmp_path`) and returns both
run summaries; each test asserts on them itself.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from worldkit.grade.judge import make_judge
from worldkit.overlay import load_overlay
from worldkit.run.runner import run_task


def task_conditions(overlays: Iterable[Path]) -> list[Any]:
    """`pytest.param(path, condition)` for each task: "full" and "curated:<name>" per packet, id `<task>-<condition>`."""
    return [
        pytest.param(path, condition, id=f"{load_overlay(path).id}-{condition}")
        for path in overlays
        for condition in ["full", *(f"curated:{name}" for name in sorted(load_overlay(path).curated))]
    ]


def oracle_and_noop(overlay_path: Path, condition: str, tmp_path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The summaries of an oracle run and a noop run of the task at `overlay_path` under `condition`."""
    overlay = load_overlay(overlay_path)
    store = f"sqlite:///{tmp_path / 'store.db'}"
    facts = make_judge("facts")
    summaries = []
    for agent in ("oracle", "noop"):
        run = run_task(overlay, agent, condition=condition, runs_dir=tmp_path / "runs", store_url=store, judge=facts)
        summaries.append(run.summary())
    return summaries[0], summaries[1]

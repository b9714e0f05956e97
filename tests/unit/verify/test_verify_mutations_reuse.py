"""The mutation campaign's reuse of the untouched copy gives exactly the report of verifying each mutation from scratch."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.unit.verify.conftest import Frozen
from worldkit.errors import InvalidWorld, WorldkitError
from worldkit.verify.fanout import ChildFailed, fork_map
from worldkit.verify.mutations import run_mutations
from worldkit.verify.reuse import (
    ALL,
    INPUTS,
    LOG,
    MANIFESTS,
    SERVER,
    STAGED,
    WORLD,
    context_attributes,
    inputs_of,
    traced_baseline,
)
from worldkit.verify.scratch import ScratchCopy
from worldkit.verify.seeded import load_pristine


def test_the_incremental_campaign_equals_verifying_each_mutation_from_scratch(tasks_world: Frozen) -> None:
    args = (tasks_world.world, 30, 11)
    where = {"manifests": tasks_world.manifests, "overlays": tasks_world.overlays}
    reference = run_mutations(*args, **where, jobs=1, incremental=False).as_json()
    assert reference["projection_changing"] > 0 and len(reference["by_kind"]) > 10
    assert run_mutations(*args, **where, jobs=2).as_json() == reference
    assert run_mutations(*args, **where, jobs=1).as_json() == reference


def test_without_overlays_too(mini: Frozen) -> None:
    reference = run_mutations(mini.world, 12, 2, manifests=mini.manifests, jobs=1, incremental=False).as_json()
    assert run_mutations(mini.world, 12, 2, manifests=mini.manifests, jobs=2).as_json() == reference


def test_every_context_attribute_says_what_it_is_built_from() -> None:
    # A new VerifyContext attribute must be classified here, else every check reading it reruns always.
    assert context_attributes() <= set(INPUTS)
    assert inputs_of({"an_attribute_added_later"}) == ALL


def test_the_baseline_notes_the_inputs_each_check_read(tasks_world: Frozen, tmp_path: Path) -> None:
    copy = ScratchCopy.make(tmp_path / "base", tasks_world.world, "mini", tasks_world.manifests, tasks_world.overlays)
    traced = traced_baseline(copy, tmp_path / "work", load_pristine(copy).package)
    reads = traced.reads
    assert reads["event-logs"] == {LOG}
    assert SERVER in reads["tool-surface"] and STAGED not in reads["tool-surface"]
    assert reads["revision-digests"] == {WORLD, MANIFESTS}
    assert all(STAGED in reads[c] for c in ("access-audit", "package-integrity", "separation"))
    watched = list(reads)
    assert "revision-digests" not in traced.to_run(watched, frozenset({STAGED}))
    assert traced.to_run(watched, frozenset({LOG})) == ["event-logs"]
    world = traced.to_run(watched, frozenset({WORLD}))
    assert {"revision-digests", "projection-rebuild", "access-audit"} <= set(world) and "event-logs" not in world
    assert traced.to_run(["a-check-the-baseline-did-not-run"], frozenset({LOG})) == ["a-check-the-baseline-did-not-run"]


def test_the_baseline_spread_over_processes_equals_the_one_in_this_process(tasks_world: Frozen, tmp_path: Path) -> None:
    # With jobs > 1 the shared work is built before the checks that read it, in this process, and
    # the checks run in three processes: the same verdicts, builds and staged tasks, and each check
    # the same inputs, although the attributes read while building the shared work are not noted.
    copy = ScratchCopy.make(tmp_path / "base", tasks_world.world, "mini", tasks_world.manifests, tasks_world.overlays)
    package = load_pristine(copy).package
    alone = traced_baseline(copy, tmp_path / "alone", package)
    spread = traced_baseline(copy, tmp_path / "spread", package, jobs=2)
    assert spread.reads == alone.reads and list(spread.reads) == list(alone.reads)
    assert (spread.baseline.failed, spread.baseline.errored) == (alone.baseline.failed, alone.baseline.errored)
    assert sorted(spread.baseline.builds) == sorted(alone.baseline.builds)
    assert sorted(spread.baseline.staged) == sorted(alone.baseline.staged)
    assert any(alone.attributes[c] - spread.attributes[c] for c in alone.attributes)  # the shared work was built first


def test_forked_jobs_come_back_in_order() -> None:
    seen: list[tuple[int, dict]] = []
    fork_map(iter(range(7)), lambda n: {"n": n, "pid": os.getpid()}, 2, lambda i, row: seen.append((i, row)))
    assert [i for i, _ in seen] == list(range(7)) and [row["n"] for _, row in seen] == list(range(7))
    assert os.getpid() not in {row["pid"] for _, row in seen}


def test_a_forked_job_that_fails_fails_here() -> None:
    def refuse(n: int) -> dict:
        if n == 2:
            raise InvalidWorld("the mutated world is broken")
        return {"n": n}

    with pytest.raises(WorldkitError, match="the mutated world is broken") as caught:
        fork_map(range(4), refuse, 2, lambda i, row: None)
    assert int(caught.value.exit_code) == int(InvalidWorld.exit_code)

    def crash(n: int) -> dict:
        raise KeyError("a bug")

    with pytest.raises(ChildFailed, match="KeyError"):
        fork_map(range(3), crash, 2, lambda i, row: None)

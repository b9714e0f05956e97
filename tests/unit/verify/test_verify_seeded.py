"""Seeded violations: the known faults (the paper's ten, three log attacks, seven staged-package attacks), each caught by the check meant for it, in scratch copies only."""

from __future__ import annotations

import pytest

from tests.unit.verify.conftest import Frozen, tree_digest
from worldkit.verify.seeded import CASES, run_seeded


@pytest.fixture(scope="module")
def seeded(tasks_world: Frozen) -> tuple[dict, str, str]:
    before = tree_digest(tasks_world.world, tasks_world.manifests, tasks_world.overlays)
    report = run_seeded(tasks_world.world, manifests=tasks_world.manifests, overlays=tasks_world.overlays).as_json()
    after = tree_digest(tasks_world.world, tasks_world.manifests, tasks_world.overlays)
    return report, before, after


def test_every_case_is_caught(seeded: tuple[dict, str, str]) -> None:
    report, _, _ = seeded
    assert len(CASES) >= 12 and (report["attempted"], report["detected"]) == (len(CASES), len(CASES))
    assert report["baseline_failures"] == []
    assert [c["name"] for c in report["cases"]] == [c.name for c in CASES]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_each_case_is_caught_by_its_check(seeded: tuple[dict, str, str], case) -> None:
    row = next(r for r in seeded[0]["cases"] if r["name"] == case.name)
    assert row["expected_check"] == case.expected_check
    assert case.expected_check in row["detected_by"], row
    assert row["detected"] is True and row["injection"]


def test_the_real_world_and_manifests_are_untouched(seeded: tuple[dict, str, str]) -> None:
    _, before, after = seeded
    assert before == after


def test_without_overlays_the_task_cases_are_not_applicable(mini: Frozen) -> None:
    told: list[tuple[str, int, int]] = []
    report = run_seeded(mini.world, manifests=mini.manifests, progress=lambda *a: told.append(a)).as_json()
    assert told[0] == ("baseline verified", 0, len(CASES)) and told[-1] == ("done", len(CASES), len(CASES))
    assert [t[1] for t in told] == list(range(len(CASES) + 1))
    missing = {c["name"] for c in report["cases"] if c.get("applicable") is False}
    assert missing == {"renamed-verifier-file", "deleted-evidence-source", "verifier-file-on-candidate-side",
                       "rehashed-package", "directory-symlink", "fifo-in-workspace", "setuid-file", "empty-directory",
                       "duplicate-key-manifest", "world-writable-directory"}
    assert report["attempted"] == report["detected"] == len(CASES) - 10

"""`materialize(office_workers=True)` (the CLI's) renders a projection's office documents in forked
workers when at least `_PARALLEL_MIN_OFFICE` of them are to be rendered: the same tree as one process;
a process that goes on after the projection keeps rendering them itself."""

from __future__ import annotations

import datetime as dt
import multiprocessing
import os
from pathlib import Path

import pytest

from tests.builders import WorldSpec
from worldkit.materialize import materialize, write
from worldkit.materialize.memo import _MEMO, fresh_renders
from worldkit.materialize.project import plan_projection
from worldkit.world import load_world

pytestmark = pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods() or len(os.sched_getaffinity(0)) < 2,
    reason="workers are forked, on two cores or more",
)

OFFICE = 42


def _world(root: Path) -> Path:
    spec = WorldSpec()
    for i in range(OFFICE):
        ext = ("docx", "xlsx", "pdf")[i % 3]
        text = "a,b\n1,2\n" if ext == "xlsx" else f"# Report {i}\n\nBody of report {i}.\n"
        spec.data["documents"].append(
            {"id": f"D-OFF-{i}", "path": f"Reports/report-{i:02d}.{ext}", "system": "drive", "text": text,
             "visible_from": "2025-01-01"}
        )
    return spec.write(root / "worlds" / "mini")


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("WORLDKIT_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("WORLDKIT_RENDER_CACHE", raising=False)
    monkeypatch.delenv("WORLDKIT_JOBS", raising=False)
    _MEMO.clear()
    yield tmp_path / "cache"
    _MEMO.clear()


def _spy_jobs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    chosen: list[int] = []
    real = write._jobs

    def jobs(*args: object) -> int:
        chosen.append(real(*args))  # type: ignore[arg-type]
        return chosen[-1]

    monkeypatch.setattr(write, "_jobs", jobs)
    return chosen


def test_office_documents_to_render_are_counted_until_rendered(cache: Path, tmp_path: Path) -> None:
    package = load_world(_world(tmp_path))
    state = package.revision("r1")
    projection = plan_projection(state, dt.date(2025, 7, 1), "S1")
    assert projection.office_renders() == OFFICE  # the .md documents are not counted
    materialize(package, "r1", "2025-07-01", "S1", tmp_path / "first")
    assert plan_projection(state, dt.date(2025, 7, 1), "S1").office_renders() == 0  # in the memo
    _MEMO.clear()
    assert plan_projection(state, dt.date(2025, 7, 1), "S1").office_renders() == 0  # in the rendered store
    with fresh_renders():  # nothing is read from either: every one is rendered
        assert plan_projection(state, dt.date(2025, 7, 1), "S1").office_renders() == OFFICE


def test_the_cli_path_forks_and_writes_the_same_tree(cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = load_world(_world(tmp_path))
    with fresh_renders():
        reference = materialize(package, "r1", "2025-07-01", "S1", tmp_path / "reference")
    chosen = _spy_jobs(monkeypatch)
    ours = materialize(package, "r1", "2025-07-01", "S1", tmp_path / "ours", office_workers=True)
    assert chosen == [min(4, len(os.sched_getaffinity(0)))]
    assert ours.fingerprint == reference.fingerprint
    for entry in reference.manifest.files:
        assert (tmp_path / "ours" / entry.path).read_bytes() == (tmp_path / "reference" / entry.path).read_bytes()
        assert (tmp_path / "ours" / entry.path).stat().st_mtime == (tmp_path / "reference" / entry.path).stat().st_mtime


def test_a_process_that_goes_on_renders_alone(cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = load_world(_world(tmp_path))
    chosen = _spy_jobs(monkeypatch)
    materialize(package, "r1", "2025-07-01", "S1", tmp_path / "library")
    assert chosen == [1]


def test_fewer_office_documents_than_the_threshold_render_alone(cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = load_world(_world(tmp_path))
    monkeypatch.setattr(write, "_PARALLEL_MIN_OFFICE", OFFICE + 1)
    chosen = _spy_jobs(monkeypatch)
    materialize(package, "r1", "2025-07-01", "S1", tmp_path / "few", office_workers=True)
    assert chosen == [1]

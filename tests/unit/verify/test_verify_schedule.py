"""Verify's scheduler: shared work done once, checks in forked workers, the same report as in order."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.unit.verify.conftest import Frozen
from worldkit.overlay import load_overlay
from worldkit.overlay.apply import apply_overlay
from worldkit.verify.runner import open_context, verify_world
from worldkit.verify.schedule import selected_checks, warm

REPO = Path(__file__).resolve().parents[3]

_SCRIPT = """
import json, sys
from pathlib import Path
from worldkit.verify.runner import verify_world
world, manifests, overlays, jobs = sys.argv[1:]
seen = []
report = verify_world(Path(world), manifests=Path(manifests), overlays=Path(overlays), repeats=2, jobs=int(jobs),
                      progress=lambda label, done, total: seen.append([label, done, total]))
print(json.dumps({"report": report.as_json(), "progress": seen}))
"""


def _verify_in_a_fresh_process(frozen: Frozen, jobs: int) -> dict:
    """A single-threaded interpreter, so the scheduler really forks (pytest-xdist workers have threads)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(frozen.world), str(frozen.manifests), str(frozen.overlays), str(jobs)],
        capture_output=True, text=True, env=env, timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_parallel_and_sequential_runs_report_the_same(tasks_world: Frozen) -> None:
    parallel = _verify_in_a_fresh_process(tasks_world, 2)
    sequential = _verify_in_a_fresh_process(tasks_world, 1)
    assert parallel["report"]["status"] == "pass"
    assert [c["id"] for c in parallel["report"]["checks"]] == [c["id"] for c in sequential["report"]["checks"]]
    assert parallel["report"] == sequential["report"]
    for run in (parallel, sequential):
        labels = [p[0] for p in run["progress"]]
        total = run["progress"][-1][2]
        assert run["progress"][-1][1] == total == len(run["report"]["checks"])
        assert any(label.startswith("rebuild ") for label in labels) or run is sequential
        assert all(0 <= done <= total for _, done, total in run["progress"])


def test_warm_builds_each_projection_once_and_stages_tasks_from_them(tasks_world: Frozen) -> None:
    with open_context(tasks_world.world, manifests=tasks_world.manifests, overlays=tasks_world.overlays) as ctx:
        built: list[tuple[str, str, str]] = []
        real = ctx.builder

        def counting(package, rev, date, seat, work):
            built.append((rev, date, seat))
            return real(package, rev, date, seat, work)

        ctx.builder = counting
        warm(ctx, selected_checks(None, ()))
        assert sorted(built) == sorted(set(built)) == sorted(ctx.readable)
        assert all(task.out is not None for task in ctx.tasks)
        warm(ctx, selected_checks(None, ()))
        assert len(built) == len(ctx.readable)  # nothing built twice


def test_a_curated_packet_from_a_rebuild_is_byte_identical(tasks_world: Frozen, tmp_path: Path) -> None:
    overlay = load_overlay(next(p for p in sorted(tasks_world.overlays.iterdir()) if p.name == "cc1-triage"))
    curated = next(c for c in overlay.conditions if c.startswith("curated:"))
    with open_context(tasks_world.world, manifests=tasks_world.manifests, overlays=tasks_world.overlays) as ctx:
        rebuilt = ctx.rebuild((overlay.rev, str(overlay.date), overlay.seat))
        plain = apply_overlay(overlay, tmp_path / "plain", curated, allow_stale=True)
        reused = apply_overlay(overlay, tmp_path / "reused", curated, allow_stale=True, source=rebuilt.root)
        assert rebuilt.root.is_dir()  # read, never moved or removed
        # a projection of another view is not used (the packet is then built from a fresh materialization)
        other = next(k for k in ctx.readable if k[2] != overlay.seat or k[0] != overlay.rev)
        elsewhere = apply_overlay(overlay, tmp_path / "other", curated, allow_stale=True, source=ctx.rebuild(other).root)
    assert reused.summary() | {"out": ""} == plain.summary() | {"out": ""} == elsewhere.summary() | {"out": ""}


def test_verify_world_in_process_is_unchanged(tasks_world: Frozen) -> None:
    report = verify_world(tasks_world.world, manifests=tasks_world.manifests, overlays=tasks_world.overlays, repeats=2)
    assert report.status == "pass"

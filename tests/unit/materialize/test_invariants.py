"""The five materialization invariants of DESIGN §3, on a small world built in a few lines."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.builders import WorldSpec
from worldkit.materialize import materialize
from worldkit.materialize.manifest import diff_tree, read_manifest, scan_tree
from worldkit.world import load_world
from worldkit.world.synthetic import write_synthetic_world


@pytest.fixture()
def world(tmp_path: Path) -> Path:
    return WorldSpec().write(tmp_path / "world")


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _cli_materialize(world: Path, out: Path, seat: str, hashseed: str) -> dict:
    env = {**os.environ, "PYTHONHASHSEED": hashseed}
    done = subprocess.run(
        [sys.executable, "-m", "worldkit", "materialize", "--world", str(world), "--rev", "r1",
         "--date", "2025-07-01", "--seat", seat, "--out", str(out), "--json"],
        capture_output=True, text=True, env=env, check=True,
    )
    return json.loads(done.stdout)


@pytest.mark.slow
def test_reproducible_across_processes_and_hash_seeds(world: Path, tmp_path: Path) -> None:
    a = _cli_materialize(world, tmp_path / "a", "S1", "1")
    b = _cli_materialize(world, tmp_path / "b", "S1", "987654")
    assert a["fingerprint"] == b["fingerprint"]
    assert _tree(tmp_path / "a") == _tree(tmp_path / "b")
    other = _cli_materialize(world, tmp_path / "c", "S2", "3")
    assert other["fingerprint"] != a["fingerprint"]


def test_manifest_matches_tree(world: Path, tmp_path: Path) -> None:
    result = materialize(world, "r1", "2025-07-01", "S1", tmp_path / "p")
    manifest = read_manifest(tmp_path / "p")
    assert manifest.fingerprint == result.fingerprint
    assert [e.path for e in manifest.files] == sorted(e.path for e in manifest.files)
    assert diff_tree(tmp_path / "p", manifest.files).clean


def _shuffled(spec: WorldSpec, seed: int) -> WorldSpec:
    rng = random.Random(seed)
    out = spec.copy()
    for items in out.data.values():
        rng.shuffle(items)
    keys = list(out.data)
    rng.shuffle(keys)
    out.data = {k: out.data[k] for k in keys}
    return out


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), split=st.booleans())
def test_entity_order_changes_no_digest(tmp_path_factory: pytest.TempPathFactory, seed: int, split: bool) -> None:
    base_dir = tmp_path_factory.mktemp("base")
    base = materialize(WorldSpec().write(base_dir / "w"), "r2", "2025-07-01", "S1", base_dir / "p")
    shuffled_dir = tmp_path_factory.mktemp("shuffled")
    world = _shuffled(WorldSpec(), seed).write(shuffled_dir / "w", split=split)
    again = materialize(world, "r2", "2025-07-01", "S1", shuffled_dir / "p")
    assert load_world(world).revision("r2").digest == load_world(base_dir / "w").revision("r2").digest
    assert again.fingerprint == base.fingerprint


def test_one_source_one_byte_string(world: Path, tmp_path: Path) -> None:
    a = materialize(world, "r1", "2025-07-01", "S1", tmp_path / "a")
    b = materialize(world, "r1", "2025-07-01", "S2", tmp_path / "b")
    shared = a.manifest.by_path().keys() & b.manifest.by_path().keys()
    assert "files/Shared/SOPs/SOP-001.md" in shared and "records/qms/CC-1.json" in shared
    for path in shared - {"tools.json", "seat.json", "records/_relations.json"}:
        assert (tmp_path / "a" / path).read_bytes() == (tmp_path / "b" / path).read_bytes(), path


def test_record_invisible_before_effective_date_rest_unchanged(world: Path, tmp_path: Path) -> None:
    before = materialize(world, "r1", "2025-06-09", "S1", tmp_path / "before").manifest.by_path()
    after = materialize(world, "r1", "2025-06-10", "S1", tmp_path / "after").manifest.by_path()
    assert "records/qms/APP-1.json" not in before
    assert "records/qms/APP-1.json" in after
    changed = {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}
    assert changed == {"records/qms/APP-1.json", "seat.json"}  # the seat card carries the date


def test_record_shows_state_as_of_date(world: Path, tmp_path: Path) -> None:
    materialize(world, "r1", "2025-03-15", "S1", tmp_path / "p")
    record = json.loads((tmp_path / "p" / "records/qms/CC-1.json").read_text())
    assert record["status"] == "pending"
    assert [e["kind"] for e in record["history"]] == ["created"]
    assert "approved" not in (tmp_path / "p" / "records/qms/CC-1.json").read_text()


def test_no_future_file(world: Path, tmp_path: Path) -> None:
    early = materialize(world, "r1", "2025-07-01", "S1", tmp_path / "early").manifest.by_path()
    late = materialize(world, "r1", "2025-12-01", "S1", tmp_path / "late").manifest.by_path()
    assert "files/Shared/Notes/future.md" not in early
    assert "files/Shared/Notes/future.md" in late


def test_personal_and_hr_material_stay_with_owner_and_role(world: Path, tmp_path: Path) -> None:
    seen = {
        seat: materialize(world, "r1", "2025-07-01", seat, tmp_path / seat).manifest.by_path()
        for seat in ("S1", "S2", "S4")
    }
    assert "files/Desk/P1/todo.md" in seen["S1"]
    assert "files/Desk/P1/todo.md" not in seen["S2"] and "files/Desk/P1/todo.md" not in seen["S4"]
    assert "files/HR/Reviews/P1 review.md" in seen["S4"]
    assert "files/HR/Reviews/P1 review.md" not in seen["S1"] and "files/HR/Reviews/P1 review.md" not in seen["S2"]
    assert "mail/M2.json" in seen["S1"] and "mail/M2.json" not in seen["S2"]
    assert "mail/M1.json" in seen["S4"]  # via the mailing list's member roles


def test_verifier_only_never_projected(tmp_path: Path) -> None:
    spec = WorldSpec()
    spec.item("documents", "D-SOP")["verifier_only"] = True
    root = spec.write(tmp_path / "w")
    for seat in ("S1", "S2", "S4"):
        paths = materialize(root, "r1", "2025-07-01", seat, tmp_path / seat).manifest.by_path()
        assert "files/Shared/SOPs/SOP-001.md" not in paths


@pytest.mark.slow
def test_killed_materialize_leaves_nothing(tmp_path: Path) -> None:
    world = write_synthetic_world(tmp_path / "big", 20_000)
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "worldkit", "materialize", "--world", str(world), "--rev", "r1",
         "--date", "2026-01-01", "--seat", "EMP-1", "--out", str(out)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not list(tmp_path.glob(".out.tmp-*/files")):
        time.sleep(0.02)
    time.sleep(0.2)
    assert proc.poll() is None, "materialize finished before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not out.exists()
    # The next run sweeps the dead run's temp dir and succeeds.
    materialize(world, "r1", "2026-01-01", "EMP-1", out)
    assert not list(tmp_path.glob(".out.tmp-*"))
    assert len(scan_tree(out)) == 20_002


@pytest.mark.slow
def test_parallel_rendering_gives_identical_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    world = write_synthetic_world(tmp_path / "w", 5_000)
    results = {}
    for jobs in ("1", "2", "3"):
        monkeypatch.setenv("WORLDKIT_JOBS", jobs)
        results[jobs] = materialize(world, "r1", "2026-01-01", "EMP-1", tmp_path / f"j{jobs}")
    assert len({r.fingerprint for r in results.values()}) == 1
    assert (tmp_path / "j1" / "manifest.json").read_bytes() == (tmp_path / "j3" / "manifest.json").read_bytes()

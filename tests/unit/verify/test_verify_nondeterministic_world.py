"""`verify` rebuilds the world once from source in a fresh process with the world cache off: a
generator that reads the clock is caught (rebuild-repeat fails on the revision digest) even when
the warm cache would hand every other load the digest that was frozen. A seeded generator passes,
and the check says which generator it ran."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.builders import WorldSpec
from tests.unit.verify.conftest import DATE
from worldkit.verify import freeze_world
from worldkit.verify.checks import REGISTRY, run_one
from worldkit.verify.runner import open_context

CLOCK = '''import time
def generate(world, rng):
    return {"documents": [{"id": "D-GEN", "path": "Gen/stamp.md", "system": "drive",
                           "text": f"built at {time.time_ns()}\\n", "visible_from": "2025-01-01"}]}
'''
SEEDED = '''def generate(world, rng):
    return {"documents": [{"id": "D-GEN", "path": "Gen/stamp.md", "system": "drive",
                           "text": f"value {rng.randint(0, 10**9)}\\n", "visible_from": "2025-01-01"}]}
'''


def _frozen_world(root: Path, generator: str) -> tuple[Path, Path]:
    spec = WorldSpec()
    spec.world["generator"] = {"module": "generator.py", "seed": 7}
    world = spec.write(root / "worlds" / "mini")
    (world / "generator.py").write_text(generator, encoding="utf-8")
    manifests = root / "manifests" / "mini"
    freeze_world(world, [DATE], manifests=manifests)
    return world, manifests


def _rebuild_repeat(world: Path, manifests: Path):
    with open_context(world, manifests=manifests, repeats=2) as ctx:
        return run_one(REGISTRY["rebuild-repeat"](), ctx)


@pytest.mark.parametrize(("generator", "status"), [(CLOCK, "fail"), (SEEDED, "pass")])
def test_a_generator_that_reads_the_clock_fails_verify(tmp_path: Path, monkeypatch, generator: str, status: str) -> None:
    monkeypatch.setenv("WORLDKIT_CACHE", str(tmp_path / "cache"))  # warm after freezing: loads in here hit it
    world, manifests = _frozen_world(tmp_path, generator)
    result = _rebuild_repeat(world, manifests)
    assert result.status == status, [i.line() for i in result.items]
    assert result.counts["generator"] == str(world / "generator.py")
    if status == "fail":
        assert {i.kind for i in result.items} >= {"revision-not-reproduced"}

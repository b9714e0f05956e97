"""A forked materialize worker freezes what it inherited (`gc.freeze`), so its collections walk only
what it allocates: the loaded world stays out of its collector's sight (and its pages uncopied)."""

from __future__ import annotations

import gc
import multiprocessing
import os
from pathlib import Path

import pytest

from worldkit.materialize import materialize
from worldkit.materialize.memo import fresh_renders
from worldkit.render import Renderer
from worldkit.world.synthetic import write_synthetic_world

pytestmark = pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="workers are forked")


def test_a_worker_renders_with_what_it_inherited_frozen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    world = write_synthetic_world(tmp_path / "w", 300)
    log = tmp_path / "frozen.log"
    real = Renderer.document_dated

    def document_dated(self: Renderer, doc: object) -> object:
        with open(log, "a") as handle:
            handle.write(f"{os.getpid()} {gc.get_freeze_count()}\n")
        return real(self, doc)

    monkeypatch.setattr(Renderer, "document_dated", document_dated)
    monkeypatch.setenv("WORLDKIT_JOBS", "2")
    here = gc.get_freeze_count()
    with fresh_renders():
        materialize(world, "r1", "2026-01-01", "EMP-1", tmp_path / "out")
    assert gc.get_freeze_count() <= here  # nothing frozen here (frozen objects may be freed meanwhile)
    seen = [line.split() for line in log.read_text().splitlines()]
    assert len(seen) >= 300
    assert all(pid != str(os.getpid()) and int(count) > here for pid, count in seen)

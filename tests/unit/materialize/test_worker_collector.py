"""A forked materialize worker freezes what it inherited (`gc.freeze`), so its collections walk only
what it allocates: the loaded world stays out of its collector's sight (and its pages uncopied).

The projection is made in a fresh interpreter: the probe (`gc.get_freeze_count`, once per document
rendered) walks every frozen object, and a worker forked from a test worker inherits millions."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
from pathlib import Path

import pytest

from worldkit.world.synthetic import write_synthetic_world

pytestmark = pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="workers are forked")

_MATERIALIZE = """
import gc, os, sys
from worldkit.materialize import materialize, write
from worldkit.materialize.memo import fresh_renders
from worldkit.render import Renderer

world, out, log = sys.argv[1:]
real = Renderer.document_dated

def document_dated(self, doc):
    with open(log, "a") as handle:
        handle.write(f"{os.getpid()} {gc.get_freeze_count()}\\n")
    return real(self, doc)

def write_projection(*args, **kwargs):
    print("writing with", gc.get_freeze_count(), "frozen here")  # what the workers are forked from
    return real_write(*args, **kwargs)

Renderer.document_dated = document_dated
real_write, write.write_projection = write.write_projection, write_projection
here = gc.get_freeze_count()
with fresh_renders():
    materialize(world, "r1", "2026-01-01", "EMP-1", out)
print(os.getpid(), here, gc.get_freeze_count())
"""


def test_a_worker_renders_with_what_it_inherited_frozen(tmp_path: Path) -> None:
    world = write_synthetic_world(tmp_path / "w", 300)
    log = tmp_path / "frozen.log"
    done = subprocess.run([sys.executable, "-c", _MATERIALIZE, str(world), str(tmp_path / "out"), str(log)],
                          capture_output=True, text=True, env={**os.environ, "WORLDKIT_JOBS": "2"}, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    writing, last = done.stdout.splitlines()
    pid, here, after = last.split()
    assert int(after) <= int(here)  # nothing frozen there (frozen objects may be freed meanwhile)
    inherited = int(writing.split()[2])  # frozen while the projection is written (`heap_frozen`)
    seen = [line.split() for line in log.read_text().splitlines()]
    assert len(seen) >= 300
    # Each worker froze more: what was made after that freeze (the plan) and before its fork.
    assert all(worker != pid and int(count) > max(int(here), inherited) for worker, count in seen)

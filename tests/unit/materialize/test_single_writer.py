"""With forked workers and nothing in a pack, the workers render and this process alone creates the
files (`write._render_apart`): the same tree as one process, each file written by the parent, each
document rendered in a worker, and the rendered runs waiting to be written bounded (`_in_order`)."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

import pytest

from worldkit.materialize import materialize, write
from worldkit.materialize.memo import fresh_renders
from worldkit.render import Renderer
from worldkit.world.synthetic import write_synthetic_world

pytestmark = pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="workers are forked"
)


def _pids_of(monkeypatch: pytest.MonkeyPatch, target: object, name: str, log: Path) -> None:
    """Append the pid of every process that calls `target.name` to `log` (forked workers inherit it)."""
    real = getattr(target, name)

    def spy(*args: object, **kwargs: object) -> object:
        with open(log, "a") as handle:
            handle.write(f"{os.getpid()}\n")
        return real(*args, **kwargs)

    monkeypatch.setattr(target, name, spy)


def test_workers_render_and_the_parent_alone_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    world = write_synthetic_world(tmp_path / "w", 600)
    with fresh_renders():
        monkeypatch.setenv("WORLDKIT_JOBS", "1")
        alone = materialize(world, "r1", "2026-01-01", "EMP-1", tmp_path / "alone")
        monkeypatch.setenv("WORLDKIT_JOBS", "2")
        writes, renders = tmp_path / "writes.log", tmp_path / "renders.log"
        _pids_of(monkeypatch, write, "_write_new", writes)
        _pids_of(monkeypatch, Renderer, "document_dated", renders)
        apart = materialize(world, "r1", "2026-01-01", "EMP-1", tmp_path / "apart")
    assert apart.fingerprint == alone.fingerprint
    assert (tmp_path / "apart" / "manifest.json").read_bytes() == (tmp_path / "alone" / "manifest.json").read_bytes()
    for entry in alone.manifest.files:
        assert (tmp_path / "apart" / entry.path).read_bytes() == (tmp_path / "alone" / entry.path).read_bytes()
        assert (tmp_path / "apart" / entry.path).stat().st_mtime == (tmp_path / "alone" / entry.path).stat().st_mtime
    writers = writes.read_text().split()
    renderers = renders.read_text().split()
    assert len(writers) == len(alone.manifest.files)
    assert set(writers) == {str(os.getpid())}
    assert len(renderers) >= 600 and str(os.getpid()) not in renderers


class _CountingPool:
    """A pool that runs each job when its result is asked for, counting what was handed to it."""

    def __init__(self) -> None:
        self.submitted = 0

    def apply_async(self, fn, args):  # noqa: ANN001, ANN201 - the part of `multiprocessing.Pool` used
        self.submitted += 1
        return _Later(fn, args)


class _Later:
    def __init__(self, fn, args) -> None:  # noqa: ANN001
        self.fn, self.args = fn, args

    def get(self):  # noqa: ANN201
        return self.fn(*self.args)


@pytest.mark.parametrize("window", [1, 3])
def test_rendered_runs_wait_within_the_window(window: int) -> None:
    pool = _CountingPool()
    out = []
    for value in write._in_order(pool, lambda i: i * i, list(range(20)), window):
        # Handed out and not yet consumed: the window, and the one just taken.
        assert pool.submitted - len(out) <= window + 1
        out.append(value)
    assert out == [i * i for i in range(20)]
    assert pool.submitted == 20


@pytest.mark.parametrize("n", [0, 1, 7, 600, 4000, 10_000, 100_003, 1_000_000])
@pytest.mark.parametrize("jobs", [2, 3, 4])
def test_runs_cover_the_plan_in_order_bounded_and_ramped(n: int, jobs: int) -> None:
    cuts = write._cuts(n, jobs)
    sizes = [b - a for a, b in zip(cuts, cuts[1:])]
    assert cuts[0] == 0 and cuts[-1] == n and min(sizes) >= 0
    assert max(sizes) <= write._MAX_RUN and len(sizes) >= jobs * write._RUNS_PER_JOB
    if n >= 10_000:  # the first and last runs are short, the writing process waits little at either end
        assert sizes[0] == sizes[-1] == write._FIRST_RUN
        assert sizes[1] == 2 * write._FIRST_RUN and max(sizes) > 2 * write._FIRST_RUN

"""Longest tests first on every xdist worker (`--dist worksteal`, as `make test` runs).

Worksteal hands worker i the i-th contiguous slice of the collection and, when a worker runs dry,
moves the *tail* of the busiest worker's queue to it: a long test runs where and when its slice
puts it, and one near the end of a slice is the last thing the session waits for. So the collection
is reordered (the same order in every worker, as xdist requires): the long tests are dealt out to
the slices longest first, each to the slice with the least long work so far, and open their
slice; the other tests keep their order and fill the slices. The tests and what they check are
unchanged; only when each one starts.

`LONG` holds the seconds a test took on a quiet 2-core machine (`pytest --durations`, setup
included); a test marked `slow` that is not listed counts as `SLOW_DEFAULT` seconds. A key is a
node id, or a node id without its `[parameters]` (then it covers every parameter set).
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

SLOW_DEFAULT = 5.0
DIST_KEY = "worldkit_dist"

LONG: dict[str, float] = {}


def weight(item: pytest.Item) -> float:
    nodeid = item.nodeid
    if nodeid in LONG:
        return LONG[nodeid]
    base = nodeid.split("[", 1)[0]
    if base in LONG:
        return LONG[base]
    return SLOW_DEFAULT if item.get_closest_marker("slow") is not None else 0.0


def slice_sizes(count: int, workers: int) -> list[int]:
    """How many tests worksteal's first hand-out gives each worker (`len(pending) // nodes_left`)."""
    sizes = []
    for i in range(workers):
        sizes.append(count // (workers - i))
        count -= sizes[-1]
    return sizes


def order(weights: Sequence[float], workers: int) -> list[int]:
    """A permutation of `range(len(weights))`: per worker slice, its share of the weighted (long)
    indices, longest first, then unweighted ones in their original order."""
    sizes = slice_sizes(len(weights), workers)
    long = sorted((i for i, w in enumerate(weights) if w > 0), key=lambda i: (-weights[i], i))
    dealt: list[list[int]] = [[] for _ in sizes]
    load = [0.0] * len(sizes)
    for i in long:
        open_slices = [s for s in range(len(sizes)) if len(dealt[s]) < sizes[s]]
        target = min(open_slices, key=lambda s: (load[s], s))
        dealt[target].append(i)
        load[target] += weights[i]
    rest = iter(i for i, w in enumerate(weights) if w <= 0)
    result: list[int] = []
    for size, mine in zip(sizes, dealt, strict=True):
        result += mine
        result += [next(rest) for _ in range(size - len(mine))]
    return result


def tell_worker(config: pytest.Config, workerinput: dict) -> None:
    """In the controller: the worker's own config says `--dist no`, so pass it the real mode."""
    workerinput[DIST_KEY] = config.getoption("dist", None)


def reorder(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Reorder `items` in place, in an xdist worker under `--dist worksteal` with 2+ workers."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is None or workerinput.get(DIST_KEY) != "worksteal":
        return
    workers = int(workerinput["workercount"])
    if workers < 2 or not items:
        return
    items[:] = [items[i] for i in order([weight(item) for item in items], workers)]

"""The cyclic garbage collector around work that allocates much and frees little.

A loaded world is a few million objects that live as long as the process. The collector walks
every object of a generation when that generation is collected, so a world unpickled into the young
generation is walked at the next collections, and everything the work allocates after it (the plan,
rendered runs, manifest columns) sets off collections that walk it again. Neither walk finds garbage.

Whether anything is frozen is asked often (each projection, each cache read), and
`gc.get_freeze_count` answers by walking the frozen set: in a process that froze its start-up (the
`worldkit` program, a test worker: 10^5 to 10^6 objects) that walk cost more than the work it
guarded (0.047 s a call with 452,000 objects frozen, as in a pytest worker here; some 150 CPU-s of
the test suite). So freezes that are the process's own go through `freeze_process`, which records
them, and `anything_frozen` trusts the record; it walks only where nothing of worldkit's froze,
where the frozen set is empty or someone else's.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

_process_frozen = False  # `freeze_process` ran and no `thaw_all` since


def freeze_process() -> None:
    """Freeze everything alive for as long as the process runs (`gc.freeze`), and record it: a
    program's start-up, a forked worker's inheritance, a test worker's collection."""
    global _process_frozen
    gc.freeze()
    _process_frozen = True


def thaw_all() -> None:
    """Unfreeze everything (`gc.unfreeze`), the process's own frozen set included."""
    global _process_frozen
    gc.unfreeze()
    _process_frozen = False


def anything_frozen() -> bool:
    """Whether the collector has a frozen set: at once where the process froze its own
    (`freeze_process`), else by `gc.get_freeze_count` (which walks the set: it is empty unless code
    other than worldkit's froze objects)."""
    return _process_frozen or gc.get_freeze_count() > 0


@contextmanager
def collector_paused() -> Iterator[None]:
    """The collector off while the block runs (unpickling makes no garbage for it to find), then on
    again if it was on."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def promote_all() -> None:
    """Move every object the collector tracks to its oldest generation without walking them (`gc.freeze`
    then `gc.unfreeze`), when nothing is frozen: what a paused collector let pile up in the youngest
    generation (a world just unpickled) is then not walked by the next young collections (0.08 s for
    100,000 documents here). A process that froze objects itself keeps its frozen set: nothing moves."""
    if not anything_frozen():
        gc.freeze()
        gc.unfreeze()


@contextmanager
def heap_frozen() -> Iterator[None]:
    """What is alive when the block starts out of the collector's sight while it runs (`gc.freeze`),
    back in the oldest generation after it (`gc.unfreeze`): the collector then walks only what the
    block allocates, and the objects alive before it are never walked as young objects again.

    Nothing is kept that would otherwise be freed: a frozen object whose last reference goes is freed
    as usual; only garbage in a reference cycle among them waits for the unfreeze. A process that
    already froze objects (the CLI freezes its start-up) manages its own frozen set: there this does
    nothing, so nothing of its set is unfrozen."""
    if not gc.isenabled() or anything_frozen():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()

"""The cyclic garbage collector around work that allocates much and frees little.

A loaded world is a few million objects that live as long as the process. The collector walks
every object of a generation when that generation is collected, so a world unpickled into the young
generation is walked at the next collections, and everything the work allocates after it (the plan,
rendered runs, manifest columns) sets off collections that walk it again. Neither walk finds garbage.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


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
    if gc.get_freeze_count() == 0:
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
    if gc.get_freeze_count() or not gc.isenabled():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()

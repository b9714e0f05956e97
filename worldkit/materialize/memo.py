"""Rendered bytes of shared sources, reused across the seats, conditions and rebuilds of one process.

A document, record, mail or chat log is rendered from the seat-independent snapshot of one
revision on one date, so its bytes are a function of (revision digest, date, path, source) alone:
the digest covers every entity and every template, and the renderer is the code running in this
process. Six seats of PharmaCo on one date share most of their files; overlays staged for a verify
run, or the oracle and noop runs of one task, materialize the same projection again. The memo
renders each such file once.

Bounded by bytes (least recently used out first), so memory does not grow with the size of the
world; `fresh_renders()` turns it off for a block, and `new_memo()` gives a block its own empty
memo — the reproducibility checks use these so that each repeat really renders again (once per
source and repeat, with `new_memo()`: a repeat of several seats renders each shared file anew, once).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager

Key = tuple[str, str, str, str]
"""(revision digest, date, path, source)."""
Rendered = tuple[bytes, str]
"""A file's bytes and its intended modification time (`worldkit.materialize.project.stamp`)."""

BUDGET = 96 * 1024 * 1024
"""Bytes of rendered content kept at most."""
MAX_ENTRIES = 32_768
"""Files kept at most; a projection with more files than this bypasses the memo (`Projection.files`)."""
ENTRY_OVERHEAD = 512
"""Bytes counted per entry besides its content: its key, its stamp and the map's own node."""


class RenderMemo:
    """An LRU map from `Key` to rendered bytes, bounded by the total size of the values."""

    def __init__(self, budget: int = BUDGET, max_entries: int = MAX_ENTRIES) -> None:
        self.budget = budget
        self.max_entries = max_entries
        self.size = 0
        self.hits = 0
        self.misses = 0
        self._items: OrderedDict[Key, Rendered] = OrderedDict()

    def bytes_for(self, key: Key, produce: Callable[[], Rendered]) -> Rendered:
        found = self._items.get(key)
        if found is not None:
            self._items.move_to_end(key)
            self.hits += 1
            return found
        self.misses += 1
        data = produce()
        if len(data[0]) <= self.budget // 8:
            self._items[key] = data
            self.size += len(data[0]) + ENTRY_OVERHEAD
            while self.size > self.budget or len(self._items) > self.max_entries:
                _, old = self._items.popitem(last=False)
                self.size -= len(old[0]) + ENTRY_OVERHEAD
        return data

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def clear(self) -> None:
        self._items.clear()
        self.size = 0

    def __len__(self) -> int:
        return len(self._items)


_MEMO = RenderMemo()
_STACK: list[RenderMemo | None] = [_MEMO]
"""The memo in force is the last one; None: render every file anew."""


def process_memo() -> RenderMemo:
    """The process's own memo (in force outside `fresh_renders()` and `new_memo()` blocks)."""
    return _MEMO


def current_memo() -> RenderMemo | None:
    """The memo in force: the process's, a `new_memo()` block's, or None inside `fresh_renders()`."""
    return _STACK[-1]


@contextmanager
def _pushed(memo: RenderMemo | None) -> Iterator[RenderMemo | None]:
    _STACK.append(memo)
    try:
        yield memo
    finally:
        _STACK.pop()


@contextmanager
def fresh_renders() -> Iterator[None]:
    """Within the block, every planned file is rendered anew (nothing read from or added to the memo)."""
    from worldkit.render.office.cache import fresh

    with _pushed(None), fresh():
        yield


@contextmanager
def new_memo(budget: int = BUDGET) -> Iterator[RenderMemo]:
    """Within the block, a memo of its own, empty at the start: every source renders anew, once, and
    nothing rendered before or elsewhere is read (the process's memo is neither read nor filled).

    Office bytes still come from the cross-process office cache (`worldkit.render.office.cache`):
    their text is rendered anew and the cache is keyed by it; that the format libraries themselves
    reproduce is shown by `rebuild-repeat`'s first rebuild, which renders them in a fresh process
    with the cache off."""
    with _pushed(RenderMemo(budget)) as memo:
        assert memo is not None
        yield memo

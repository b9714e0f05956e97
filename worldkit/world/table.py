"""The world cache's document table: documents' bulky fields kept on disk, read by offset when used.

A loaded world of 100,000 generated documents held ~2.2 KB per document, half of it each document's
template variables (`vars`), which only the render of that one document reads. A cache entry
(`worldkit.world.cache`) therefore stores each document's `vars` and `text` (when set) as a row of a
table written after the entry's pickle, and the loaded document holds, in their place, a `Row`: the
table and the row's offset. The document is a `LazyDocument`, a `Document` whose `vars` and `text`
read their row (one `pread` and a small unpickle, nothing kept) when asked for.

Nothing observable changes: a `LazyDocument` is a `Document`, equal to the document it stands for,
dumps, copies, deep-copies and pickles as it (pickling writes a plain `Document` with its fields
filled in), and the entry's digest covers the table, checked when the entry is read. The table is
read through a descriptor of the entry file opened then; entries are replaced by rename and never
rewritten, so the rows read are those that were hashed, even if the entry is pruned meanwhile.
Platforms without `os.pread` keep every field in memory (no rows are written).
"""

from __future__ import annotations

import os
import pickle
import weakref
from typing import Any

from worldkit.world.models import Document

DEFERRED = ("vars", "text")
"""Document fields kept as rows when they hold anything (`vars` non-empty, `text` set)."""
AVAILABLE = hasattr(os, "pread")


class Table:
    """The rows of one cache entry, read from the entry file's descriptor at `base + offset`."""

    __slots__ = ("fd", "base", "__weakref__")

    def __init__(self, fd: int, base: int) -> None:
        self.fd = fd
        self.base = base
        weakref.finalize(self, os.close, fd)

    def row(self, pos: int) -> dict[str, Any]:
        offset, size = pos >> 32, pos & 0xFFFFFFFF
        data = os.pread(self.fd, size, self.base + offset)
        if len(data) != size:  # the entry was hashed whole when read: only a vanished disk gets here
            raise OSError(f"world cache entry truncated under a loaded world (row at {offset})")
        return pickle.loads(data)


class Row:
    """Stands, in a `LazyDocument`'s fields, for the deferred fields stored at `pos` of `table`."""

    __slots__ = ("table", "pos")

    def __init__(self, table: Table, pos: int) -> None:
        self.table = table
        self.pos = pos

    def load(self) -> dict[str, Any]:
        return self.table.row(self.pos)

    def __copy__(self) -> Row:
        return self

    def __deepcopy__(self, memo: dict) -> Row:
        return self

    def __reduce__(self) -> Any:
        raise TypeError("a world-cache row is not picklable; pickle the document it belongs to")

    def __repr__(self) -> str:
        return f"Row({self.pos >> 32}, {self.pos & 0xFFFFFFFF})"


_NEW = object.__new__
_SET = object.__setattr__


def _filled(self: Document) -> dict[str, Any]:
    """The document's fields with every `Row` replaced by the values it stands for (in field order)."""
    fields = self.__dict__
    loaded: dict[str, Any] | None = None
    out = dict(fields)
    for name in DEFERRED:
        value = fields.get(name)
        if type(value) is Row:
            if loaded is None:
                loaded = value.load()
            out[name] = loaded[name]
    return out


def _make(cls: type[Document], fields: dict[str, Any], fields_set: set[str]) -> Any:
    doc = _NEW(cls)
    _SET(doc, "__dict__", fields)
    _SET(doc, "__pydantic_fields_set__", fields_set)
    _SET(doc, "__pydantic_extra__", None)
    _SET(doc, "__pydantic_private__", None)
    return doc


def plain_document(fields: dict[str, Any], fields_set: set[str]) -> Document:
    """A `Document` of trusted fields (how a `LazyDocument` pickles: as the plain document it stands for)."""
    return _make(Document, fields, fields_set)


def _deferred(name: str) -> property:
    def get(self: Document) -> Any:
        value = self.__dict__[name]
        return value.load()[name] if type(value) is Row else value

    get.__name__ = name
    return property(get, doc=f"`Document.{name}`, read from the world cache's table when it is a row.")


class LazyDocument(Document):
    """A `Document` whose `vars` and `text` may be rows of a world-cache table (read when asked for)."""

    def document(self) -> Document:
        """The plain `Document` this one stands for (its fields read from the table)."""
        return _make(Document, _filled(self), self.__pydantic_fields_set__)

    def _loaded(self) -> Document:  # what `Document`'s serializer dumps: every field filled in
        return _make(LazyDocument, _filled(self), self.__pydantic_fields_set__)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Document):
            return self.document() == (other.document() if isinstance(other, LazyDocument) else other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.document())

    def __reduce_ex__(self, protocol: Any) -> Any:
        return plain_document, (_filled(self), self.__pydantic_fields_set__)

    def __repr_args__(self) -> Any:
        return self.document().__repr_args__()

    def __repr__(self) -> str:
        return repr(self.document())


for _name in DEFERRED:
    setattr(LazyDocument, _name, _deferred(_name))


TABLE = object()
"""Stands for the entry's table in its pickle (a persistent id): the reader gives the real one."""


def lazy_document(table: Table, fields: dict[str, Any], names: tuple[str, ...], pos: int, fields_set: set[str]) -> Any:
    """A `LazyDocument` from its pickled fields (deferred ones None) and its row (what the reader calls)."""
    row = Row(table, pos)
    for name in names:
        fields[name] = row
    return _make(LazyDocument, fields, fields_set)


class TablePickler(pickle.Pickler):
    """Pickles a world package with each document's deferred fields written as rows to `table`."""

    def __init__(self, file: Any, table: bytearray) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.table = table

    def persistent_id(self, obj: Any) -> Any:
        return "table" if obj is TABLE else None

    def reducer_override(self, obj: Any) -> Any:
        kind = type(obj)
        if kind is not Document and kind is not LazyDocument:
            return NotImplemented
        fields = _filled(obj) if kind is LazyDocument else obj.__dict__
        names = tuple(n for n in DEFERRED if fields.get(n) is not None and (n != "vars" or fields[n]))
        if not names:
            return obj.__reduce_ex__(pickle.HIGHEST_PROTOCOL) if kind is LazyDocument else NotImplemented
        row = pickle.dumps({n: fields[n] for n in names}, protocol=pickle.HIGHEST_PROTOCOL)
        pos = len(self.table) << 32 | len(row)
        self.table += row
        kept = {k: (None if k in names else v) for k, v in fields.items()}
        return lazy_document, (TABLE, kept, names, pos, obj.__pydantic_fields_set__)


class TableUnpickler(pickle.Unpickler):
    """Reads a pickle written by `TablePickler`, its documents' rows from `table`."""

    def __init__(self, file: Any, table: Table) -> None:
        super().__init__(file)
        self._table = table

    def persistent_load(self, pid: Any) -> Any:
        if pid == "table":
            return self._table
        raise pickle.UnpicklingError(f"unknown persistent id {pid!r}")

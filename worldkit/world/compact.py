"""Share equal immutable values across a loaded world's entities before it is cached.

A world of 100,000 documents held ~2.8 KB per document after a load from the cache; about a third
of it was copies of equal values: every pydantic model keeps its own `__pydantic_fields_set__` (a
728-byte set, identical for every document written the same way), every date its own object, and
the `origin` map its own copy of each entity id. `compact` makes equal values one object (one set
per distinct fields-set, one date or string per distinct value, one empty list for every empty list
field), in place. Pickle keeps shared objects shared, so a package compacted before
`cache.write_entry` loads compact too.

The `origin` map becomes an `Origins` (each collection's common file and the exceptions).

Nothing observable changes: the values are equal, the models are frozen (pydantic copies the
fields-set before any `model_copy(update=...)` adds to it), and digests are over values. No code appends
to a model's list in place: the models are frozen and their copies shallow, so such an append would already
reach every copy.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

if TYPE_CHECKING:
    from worldkit.world.load import WorldPackage
    from worldkit.world.state import WorldState

_SHARED = (str, dt.date)
"""Immutable field values made one object per distinct value."""


class _Sharer:
    def __init__(self) -> None:
        self.values: dict[Any, Any] = {}
        self.fields_sets: dict[frozenset[str], set[str]] = {}
        self.seen: set[int] = set()
        self.empty_list: list[Any] = []
        """The one empty list every model's empty list field becomes (a document's `shared_with`, most often)."""

    def value(self, value: Any) -> Any:
        if type(value) in _SHARED:
            return self.values.setdefault((type(value), value), value)
        self.walk(value)
        return value

    def walk(self, value: Any) -> None:
        if isinstance(value, BaseModel):
            if id(value) in self.seen:
                return
            self.seen.add(id(value))
            fields = value.__dict__
            empty = self.empty_list
            for name, item in fields.items():
                shared = empty if type(item) is list and not item else self.value(item)
                if shared is not item:
                    fields[name] = shared
            key = frozenset(value.__pydantic_fields_set__)
            object.__setattr__(value, "__pydantic_fields_set__", self.fields_sets.setdefault(key, set(key)))
        elif isinstance(value, list):
            for index, item in enumerate(value):
                shared = self.value(item)
                if shared is not item:
                    value[index] = shared
        elif isinstance(value, dict):
            for key, item in value.items():
                shared = self.value(item)
                if shared is not item:
                    value[key] = shared


def compact(package: WorldPackage) -> WorldPackage:
    """`package` with equal strings, dates and fields-sets shared across its entities (in place)."""
    sharer = _Sharer()
    states: list[WorldState] = list(package._revisions.values())
    for entities in package.base.values():
        for entity in entities.values():
            sharer.walk(entity)
    for state in states:
        for name in ("people", "roles", "groups", "seats", "permissions", "documents", "records", "messages"):
            for entity in state.collection(name).values():
                sharer.walk(entity)
        sharer.walk(state.company)
    origin = {
        (sharer.value(kind), sharer.value(key)): sharer.value(path) for (kind, key), path in package.origin.items()
    }
    object.__setattr__(package, "origin", Origins.of(package.base, origin))
    return package


class Origins(Mapping[tuple[str, str], str]):
    """`WorldPackage.origin` (collection, id) → the file an entity came from, held as each collection's
    most common file plus the exceptions: a generated world's 100,000 documents come from one file,
    and a dict of their 100,000 keys cost ~9 MB."""

    __slots__ = ("_base", "_common", "_other")

    def __init__(self, base: Mapping[str, Mapping[str, Any]], common: dict[str, str], other: dict[tuple[str, str], str]) -> None:
        self._base = base
        self._common = common
        self._other = other

    @classmethod
    def of(cls, base: Mapping[str, Mapping[str, Any]], origin: Mapping[tuple[str, str], str]) -> Mapping[tuple[str, str], str]:
        """`origin` compacted, or `origin` itself when its keys are not exactly the base entities."""
        if len(origin) != sum(len(items) for items in base.values()) or any(
            key not in base.get(kind, ()) for kind, key in origin
        ):
            return origin
        counts: dict[str, Counter[str]] = {}
        for (kind, _), path in origin.items():
            counts.setdefault(kind, Counter())[path] += 1
        common = {kind: found.most_common(1)[0][0] for kind, found in counts.items()}
        other = {key: path for key, path in origin.items() if common[key[0]] != path}
        return cls(base, common, other)

    def __getitem__(self, key: tuple[str, str]) -> str:
        found = self._other.get(key)
        if found is not None:
            return found
        kind, entity = key
        if entity in self._base.get(kind, ()):
            return self._common[kind]
        raise KeyError(key)

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, tuple) or len(key) != 2:
            return False
        return key in self._other or key[1] in self._base.get(key[0], ())

    def __iter__(self) -> Iterator[tuple[str, str]]:
        for kind, items in self._base.items():
            for entity in items:
                yield kind, entity

    def __len__(self) -> int:
        return sum(len(items) for items in self._base.values())

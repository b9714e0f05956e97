"""What a projection's shared file is rendered from, and whether a change to the world state reaches it.

A document, record, mail or chat file is rendered from the seat-independent snapshot of one
(revision, date) (`worldkit.materialize.project`). Its bytes are a function of what the render
reads: its own entity, the entities its page names (a successor, an owner, a sender), the
templates it pulls in, and whatever its template looks up in `world` — noted here while the
template renders (`TracingRenderer`). `Reads` is that set; `Change` is the difference between two
states of one revision; a file whose reads the change does not reach has the same bytes in both.

The mutation campaign uses this to re-render, for a mutated world, only the files a mutation can
reach. Nothing here writes; rendering through `TracingRenderer` gives the same text as `Renderer`.
Where a read cannot be pinned to entities (an unknown `world` key, a dynamic template include),
the file counts as reached by any change.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from jinja2 import meta

from worldkit.render import Renderer
from worldkit.render.env import RenderContext, lazy_as_of
from worldkit.timeline import Snapshot
from worldkit.world.models import COLLECTIONS, Message
from worldkit.world.state import WorldState

Entity = tuple[str, str]
"""(collection, id); ("chat", channel) stands for the set of messages in a channel."""

ANY = "*"
"""In `Reads.whole`: the render read something no change can be ruled out for."""

_COMPANY_KEYS = {"company": "company", "departments": "company", "products": "company"}
"""`world` keys drawn from the company (its departments and products live in it)."""


@dataclass(frozen=True)
class Reads:
    """What one file's bytes were rendered from."""

    entities: frozenset[Entity]
    """Entities read one by one (looked up, tested for, or the file's own)."""
    whole: frozenset[str]
    """Collections read as a whole (iterated or counted), `company`, or `ANY`."""
    templates: frozenset[str] | None
    """Templates rendered or pulled in; None: it cannot be told which (any template change reaches it)."""


@dataclass(frozen=True)
class Change:
    """The difference between two states of one revision."""

    entities: frozenset[Entity]
    """Entities changed, added or removed (and the channels of changed chat messages)."""
    collections: frozenset[str]
    """Collections with any such entity, and `company` if the company changed."""
    templates: frozenset[str]
    """Templates whose source changed, appeared or disappeared."""

    def reaches(self, reads: Reads) -> bool:
        if ANY in reads.whole:
            return bool(self.entities or self.collections or self.templates)
        if reads.entities & self.entities or reads.whole & self.collections:
            return True
        return bool(self.templates) if reads.templates is None else bool(reads.templates & self.templates)


def change_between(old: WorldState, new: WorldState) -> Change:
    entities: set[Entity] = set()
    collections: set[str] = set()
    for name in COLLECTIONS:
        before, after = old.collection(name), new.collection(name)
        for key in before.keys() | after.keys():
            a, b = before.get(key), after.get(key)
            if a == b:
                continue
            entities.add((name, key))
            collections.add(name)
            if name == "messages":
                entities.update(("chat", m.channel) for m in (a, b) if m is not None and m.kind == "chat")
    if old.company != new.company:
        collections.add("company")
    templates = {n for n in old.templates.keys() | new.templates.keys() if old.templates.get(n) != new.templates.get(n)}
    return Change(frozenset(entities), frozenset(collections), frozenset(templates))


# -- noting what a render reads --------------------------------------------------------------


@dataclass
class _Sink:
    """Where the reads of the file being rendered now go (None: nowhere)."""

    entities: set[Entity] | None = None
    whole: set[str] = field(default_factory=set)


class _Noted(Mapping[str, Any]):
    """A collection of `world` that notes each key looked up (and the whole, when iterated or counted)."""

    __slots__ = ("_data", "_name", "_sink", "_links")

    def __init__(self, data: Mapping[str, Any], name: str, sink: _Sink, links: Mapping[str, Any] | None = None) -> None:
        self._data, self._name, self._sink, self._links = data, name, sink, links

    def _note(self, key: object) -> None:
        if self._sink.entities is not None and isinstance(key, str):
            self._sink.entities.add((self._name, key))
            record = self._links.get(key) if self._links is not None else None
            if record is not None:  # a record's JSON lists the links that exist on the date
                self._sink.entities.update(("records", x) for x in record.links)

    def __getitem__(self, key: str) -> Any:
        self._note(key)
        return self._data[key]

    def __contains__(self, key: object) -> bool:
        self._note(key)
        return key in self._data

    def __iter__(self) -> Iterator[str]:
        self._sink.whole.add(self._name)
        return iter(self._data)

    def __len__(self) -> int:
        self._sink.whole.add(self._name)
        return len(self._data)


class _NotedWorld(Mapping[str, Any]):
    """`world` as a template sees it, noting what it reads."""

    __slots__ = ("_data", "_sink", "_state", "_wrapped")

    def __init__(self, data: Mapping[str, Any], sink: _Sink, state: WorldState) -> None:
        self._data, self._sink, self._state = data, sink, state
        self._wrapped: dict[str, Any] = {}

    def __getitem__(self, key: str) -> Any:
        value = self._data[key]
        if key == "as_of":  # the date: the same for both states compared
            return value
        if key in _COMPANY_KEYS:
            self._sink.whole.add(_COMPANY_KEYS[key])
            return value
        if key in ("people", "records", "documents"):
            if key not in self._wrapped:
                links = self._state.records if key == "records" else None
                self._wrapped[key] = _Noted(value, key, self._sink, links)
            return self._wrapped[key]
        self._sink.whole.add(ANY)
        return value

    def __iter__(self) -> Iterator[str]:
        self._sink.whole.add(ANY)
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)


@dataclass(frozen=True)
class _NotedContext(RenderContext):
    sink: _Sink = field(default_factory=_Sink, compare=False)

    @cached_property
    def world(self) -> Any:  # type: ignore[override]
        return _NotedWorld(RenderContext.world.func(self), self.sink, self.snapshot.state)


class TracingRenderer(Renderer):
    """A `Renderer` whose templates' reads of `world` (on the snapshot date and every eve) are noted."""

    def __init__(self, snapshot: Snapshot) -> None:
        super().__init__(snapshot)
        self.sink = _Sink()
        self.context = _NotedContext(snapshot, sink=self.sink)
        self._contexts = {snapshot.date: self.context}
        self._closures: dict[str, frozenset[str] | None] = {}

    def _context_on(self, date: dt.date) -> RenderContext:
        context = self._contexts.get(date)
        if context is None:
            context = self._contexts[date] = _NotedContext(lazy_as_of(self.context.snapshot.state, date), self.context,
                                                           sink=self.sink)
        return context

    def closure(self, name: str) -> frozenset[str] | None:
        """`name` and every template it includes, imports or extends (None: a name computed at render time)."""
        if name not in self._closures:
            templates = self.context.snapshot.state.templates
            found: set[str] = set()
            todo = [name]
            dynamic = False
            while todo and not dynamic:
                current = todo.pop()
                if current in found:
                    continue
                found.add(current)
                source = templates.get(current)
                if source is None:
                    continue
                for ref in meta.find_referenced_templates(self.env.parse(source)):
                    if ref is None:
                        dynamic = True
                    else:
                        todo.append(ref)
            self._closures[name] = None if dynamic else frozenset(found)
        return self._closures[name]

    def reads(self, surface: str, source: str) -> Reads:
        """What the shared file of `surface` rendered from `source` (a document, record or message
        id, or a chat channel) reads on the snapshot date; its template renders once to see."""
        snap = self.context.snapshot
        self.sink.entities, self.sink.whole = set(), set()
        templates: set[str] | None = set()
        try:
            if surface == "files":
                doc = snap.documents[source]
                self.sink.entities.add(("documents", doc.id))
                if doc.superseded_by:
                    self.sink.entities.add(("documents", doc.superseded_by))
                if doc.owner:
                    self.sink.entities.add(("people", doc.owner))
                templates = self._add(templates, doc.template)
                self.document_text(doc)
            elif surface == "records":
                self.sink.entities.add(("records", source))
            elif surface == "mail":
                templates = self._message(snap.messages[source], templates)
            elif surface == "chat":
                self.sink.entities.add(("chat", source))
                for msg in snap.messages.values():
                    if msg.kind == "chat" and msg.channel == source:
                        templates = self._message(msg, templates)
            else:
                self.sink.whole.add(ANY)
            return Reads(frozenset(self.sink.entities), frozenset(self.sink.whole),
                         None if templates is None else frozenset(templates))
        except Exception:  # noqa: BLE001 - a render that cannot be traced is reached by every change
            return Reads(frozenset(), frozenset({ANY}), None)
        finally:
            self.sink.entities, self.sink.whole = None, set()

    def _message(self, msg: Message, templates: set[str] | None) -> set[str] | None:
        assert self.sink.entities is not None
        self.sink.entities.add(("messages", msg.id))
        for who in (msg.sender, *msg.to, *msg.cc):
            self.sink.entities.update({("people", who), ("groups", who)})
        templates = self._add(templates, msg.template)
        self.message_body(msg)
        return templates

    def _add(self, templates: set[str] | None, name: str | None) -> set[str] | None:
        if templates is None or not name:
            return templates
        closure = self.closure(name)
        return None if closure is None else templates | closure

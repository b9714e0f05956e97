"""Decide what a seat sees on a date and how each visible item becomes bytes.

Pure: produces a plan (paths, sources, byte producers); `write.py` puts it on disk. Every file a
seat sees is rendered from the seat-independent snapshot, so the same source has the same bytes
for every seat that sees it; seat-specific facts (relations among the records this seat can see,
the tool bundle, the seat card) live in their own files.
"""

from __future__ import annotations

import copy
import datetime as dt
import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache, partial
from typing import Any, NamedTuple

from worldkit.access import Policy
from worldkit.canon import canonical_json, pretty_json
from worldkit.errors import UsageError
from worldkit.materialize.memo import RenderMemo, current_memo
from worldkit.materialize.rendered import RenderedStore
from worldkit.materialize.rendered import store as rendered_store
from worldkit.render import Renderer
from worldkit.render.office import format_of
from worldkit.timeline import RecordView, Snapshot, as_of
from worldkit.tools import tool_bundle
from worldkit.world.models import Document, Message, Seat
from worldkit.world.state import WorldState


@lru_cache(maxsize=64)
def _bundle(seat: str, surfaces: tuple[str, ...]) -> dict:
    """`tool_bundle`, once per (seat, surfaces) in a process: its JSON schemas are the code's (pydantic
    builds them anew on every call, twice per materialization). Callers get a deep copy."""
    return tool_bundle(seat, list(surfaces))


NOON = dt.time(12, 0)
"""A date-only item's time of day (UTC): its date reads the same in every time zone from UTC-11 to UTC+11."""


@lru_cache(maxsize=8192)
def stamp(day: dt.date, time: dt.time = NOON) -> str:
    """A file's intended modification time as recorded in the manifest: `YYYY-MM-DDTHH:MM:SSZ` (UTC).

    Memoized: a world has few distinct days, and the files of one day share one string."""
    return dt.datetime.combine(day, time).strftime("%Y-%m-%dT%H:%M:%SZ")


@lru_cache(maxsize=8192)
def stamp_seconds(value: str) -> int:
    """Seconds since the epoch of a `stamp` (what `os.utime` sets); a world has few distinct ones."""
    if len(value) == 20 and value[4] == value[7] == "-" and value[10] == "T" and value[13] == value[16] == ":" and value[19] == "Z":
        parsed = dt.datetime.fromisoformat(value[:19])  # the stamp's own layout: parsed in C, not by strptime's regex
    else:
        parsed = dt.datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ")  # anything else is refused as it always was
    return int(parsed.replace(tzinfo=dt.timezone.utc).timestamp())


def _time_of(msg: Message) -> dt.time:
    try:
        return dt.time.fromisoformat(msg.time).replace(microsecond=0, tzinfo=None)
    except ValueError:
        return NOON


def message_stamp(msg: Message) -> str:
    return stamp(msg.date, _time_of(msg))


class PlannedFile(NamedTuple):
    """One planned file: where it goes, what it is, and how its bytes are made (a tuple: one is made
    for every file a worker renders)."""

    path: str
    surface: str
    source: str
    render: Callable[[], tuple[bytes, str]]
    """The file's bytes and its intended modification time (a `stamp`: its last change on or before D)."""

    def produce(self) -> bytes:
        return self.render()[0]


_DOCUMENT, _RECORD, _MAIL, _MADE = range(4)
"""Kinds of planned file: planned when reached from an id (documents, records, mail), or made up front."""
_SURFACE = {_DOCUMENT: "files", _RECORD: "records", _MAIL: "mail"}


class PlannedFiles:
    """A projection's planned files in path order: a path, a kind and an id per file, held as three
    columns (a tuple per file was 6 MB more at 100,000 files), each `PlannedFile` made when iteration
    reaches it (`part` gives a forked worker its run)."""

    __slots__ = ("_paths", "_kinds", "_keys", "_make")

    def __init__(self, paths: list[str], kinds: bytes, keys: list[Any], make: Callable[[int, Any, str], PlannedFile]) -> None:
        self._paths = paths
        self._kinds = kinds
        self._keys = keys
        self._make = make

    @classmethod
    def sorted(cls, paths: list[str], kinds: bytearray, keys: list[Any], make: Callable[[int, Any, str], PlannedFile]) -> PlannedFiles:
        """The files given in any order, put in path order (stable: files of one path, none in a valid
        world, stay in the order given)."""
        order = sorted(range(len(paths)), key=paths.__getitem__)
        return cls([paths[i] for i in order], bytes([kinds[i] for i in order]), [keys[i] for i in order], make)

    def __len__(self) -> int:
        return len(self._paths)

    def __iter__(self) -> Iterator[PlannedFile]:
        return self.part(0, len(self._paths))

    def part(self, start: int, stop: int) -> Iterator[PlannedFile]:
        make = self._make
        for path, kind, key in zip(self._paths[start:stop], self._kinds[start:stop], self._keys[start:stop]):
            yield make(kind, key, path)

    def digest(self) -> str:
        """SHA-256 of every planned (path, surface, source), in order: what the plan is."""
        return hashlib.sha256("\n".join(f"{p}\0{u}\0{o}" for p, u, o in self.meta(0, len(self._paths))).encode()).hexdigest()

    def columns(self, start: int, stop: int) -> tuple[list[str], list[str], list[str]]:
        """The paths, surfaces and sources of a run (`meta` as three lists)."""
        kinds, keys = self._kinds[start:stop], self._keys[start:stop]
        surface = _SURFACE.get
        return (
            self._paths[start:stop],
            [surface(kind) or key.surface for kind, key in zip(kinds, keys)],
            [key.source if kind == _MADE else key for kind, key in zip(kinds, keys)],
        )

    def meta(self, start: int, stop: int) -> Iterator[tuple[str, str, str]]:
        """(path, surface, source) of each file of a run, without planning it (what a manifest entry
        records besides the bytes' digest, size and date)."""
        for path, kind, key in zip(self._paths[start:stop], self._kinds[start:stop], self._keys[start:stop]):
            if kind == _MADE:
                yield path, key.surface, key.source
            else:
                yield path, _SURFACE[kind], key


@dataclass(frozen=True)
class Projection:
    """Everything one seat sees on one date of one revision."""

    state: WorldState
    snapshot: Snapshot
    seat: Seat
    policy: Policy
    documents: list[str]
    records: list[str]
    messages: list[str]
    renderer: Renderer

    @property
    def date(self) -> dt.date:
        return self.snapshot.date

    def document_path(self, doc_id: str) -> str:
        doc = self.state.documents[doc_id]
        return self._folder_of(doc.system) + doc.path

    def _folder_of(self, system: str) -> str:
        """The folder (with its trailing slash) a system's documents are under: `files/<mount>/`."""
        return f"files/{self.state.systems[system].mount or system}/"

    def record_path(self, rec_id: str) -> str:
        rec = self.state.records[rec_id]
        return f"records/{rec.system}/{rec.id}.json"

    def message_path(self, msg: Message) -> str:
        return f"mail/{msg.id}.json" if msg.kind == "mail" else f"chat/{msg.channel}.jsonl"

    def surfaces(self) -> list[str]:
        surfaces = ["files"] if self.documents else []
        if self.records:
            surfaces.append("records")
        surfaces.append("communication")
        return surfaces

    def bundle(self) -> dict:
        return copy.deepcopy(_bundle(self.seat.id, tuple(self.surfaces())))

    def files(self) -> PlannedFiles:
        """Planned files in path order, each planned only when reached: the plan of a projection holds
        a path and an id per file, never its bytes or its producer."""
        snap = self.snapshot
        render = self.renderer
        memo, disk, digest = self._render_caches()
        iso = snap.date.isoformat()

        def shared(
            path: str, surface: str, source: str, produce: Callable[[], tuple[bytes, str]], slow: bool = False
        ) -> PlannedFile:
            """A file rendered from the seat-independent snapshot: its bytes may come from the memo, or
            (a `slow` kind: documents, whose templates, eves and formats cost) from the cross-process store."""
            if memo is not None or (slow and disk is not None):
                key = (digest, iso, path, source)
                if slow and disk is not None:
                    produce = partial(disk.through, key, produce)
                if memo is not None:
                    produce = partial(memo.bytes_for, key, produce)
            return PlannedFile(path, surface, source, produce)

        def document(doc: Document) -> tuple[bytes, str]:
            data, day = render.document_dated(doc)
            return data, stamp(day)

        def record(view: RecordView) -> tuple[bytes, str]:
            return pretty_json(view.as_json([])).encode(), stamp(view.updated)

        def mail(msg: Message) -> tuple[bytes, str]:
            return self._mail_bytes(msg), message_stamp(msg)

        paths: list[str] = []
        kinds = bytearray()
        keys: list[Any] = []

        def add(path: str, kind: int, key: Any) -> None:
            paths.append(path)
            kinds.append(kind)
            keys.append(key)

        documents = self.state.documents
        folders: dict[str, str] = {}  # `document_path`, each system's folder made once
        add_path = paths.append
        for doc_id in self.documents:  # `add`, inlined: once per document
            doc = documents[doc_id]
            folder = folders.get(doc.system)
            if folder is None:
                folder = folders[doc.system] = self._folder_of(doc.system)
            add_path(folder + doc.path)
        kinds += bytes([_DOCUMENT]) * len(self.documents)
        keys += self.documents
        for rec_id in self.records:
            add(self.record_path(rec_id), _RECORD, rec_id)
        if self.records:
            visible = set(self.records)
            relations = {
                r: sorted(x for x in snap.records[r].record.links if x in visible) for r in self.records
            }
            relations = {k: v for k, v in relations.items() if v}
            # Links never change: the relations last changed when the latest record among them appeared.
            involved = {x for k, v in relations.items() for x in (k, *v)} or visible
            since = (max if relations else min)(snap.records[x].created for x in involved)
            add("records/_relations.json", _MADE, PlannedFile("records/_relations.json", "records", self.seat.id,
                                                              lambda: (pretty_json(relations).encode(), stamp(since))))
        chats: dict[str, list[Message]] = {}
        for msg_id in self.messages:
            msg = snap.messages[msg_id]
            if msg.kind == "mail":
                add(self.message_path(msg), _MAIL, msg_id)
            else:
                assert msg.channel is not None
                chats.setdefault(msg.channel, [])
        for channel in chats:
            # A channel is one log: every message in it up to D, the same bytes for every member.
            in_channel = sorted(
                (m for m in snap.messages.values() if m.kind == "chat" and m.channel == channel),
                key=lambda m: (m.date, m.time, m.id),
            )
            add(f"chat/{channel}.jsonl", _MADE, shared(f"chat/{channel}.jsonl", "chat", channel,
                                                       lambda ms=in_channel: (self._chat_bytes(ms), message_stamp(ms[-1]))))
        add("tools.json", _MADE, PlannedFile("tools.json", "tools", self.seat.id,
                                             lambda: (pretty_json(self.bundle()).encode(), stamp(self._surfaces_since()))))
        add("seat.json", _MADE, PlannedFile("seat.json", "seat", self.seat.id,
                                            lambda: (pretty_json(self.seat_card()).encode(), stamp(self.date))))

        def make(kind: int, key: Any, path: str) -> PlannedFile:
            if kind == _DOCUMENT:
                return shared(path, "files", key, partial(document, snap.documents[key]), slow=True)
            if kind == _RECORD:
                return shared(path, "records", key, partial(record, snap.records[key]))
            if kind == _MAIL:
                return shared(path, "mail", key, partial(mail, snap.messages[key]))
            return key

        return PlannedFiles.sorted(paths, kinds, keys, make)

    def _render_caches(self) -> tuple[RenderMemo | None, RenderedStore | None, str]:
        """(the memo, the cross-process store, the revision digest keying both) that `files` reads."""
        memo = current_memo()
        disk = rendered_store() if memo is not None else None
        if memo is not None and len(self.documents) + len(self.records) + len(self.messages) > memo.max_entries:
            # An LRU smaller than one projection reuses nothing across seats (each pass evicts what the
            # next would read): a projection that large streams past it, holding no bytes.
            memo = None
        return memo, disk, self.state.digest if memo is not None or disk is not None else ""

    def office_renders(self) -> int:
        """How many of the projection's documents would be written in an office format (DOCX, XLSX, PDF,
        EML) by rendering them here: those whose bytes neither the memo nor the cross-process store
        that `files` reads holds. Each costs milliseconds (the format library), a hundred times a text file."""
        memo, disk, digest = self._render_caches()
        iso = self.snapshot.date.isoformat()
        documents = self.state.documents
        count = 0
        for doc_id in self.documents:
            if format_of(documents[doc_id].path) is None:
                continue
            key = (digest, iso, self.document_path(doc_id), doc_id)
            if not ((memo is not None and key in memo) or (disk is not None and disk.holds(key))):
                count += 1
        return count

    def _surfaces_since(self) -> dt.date:
        """The day the seat's set of surfaces (what `tools.json` lists) last changed."""
        snap = self.snapshot
        starts = []
        if self.documents:
            starts.append(min(snap.documents[d].visible_from for d in self.documents))
        if self.records:
            starts.append(min(snap.records[r].created for r in self.records))
        if not starts:
            span = self.state.date_span()
            return span[0] if span is not None and span[0] <= self.date else self.date
        return max(starts)

    def seat_card(self) -> dict:
        person = self.state.people[self.seat.person]
        return {
            "seat": self.seat.id,
            "person": person.id,
            "name": person.name,
            "title": person.title,
            "department": person.department,
            "email": person.email,
            "roles": self.policy.roles_of(person.id),
            "date": self.date.isoformat(),
        }

    def _person(self, pid: str) -> str:
        person = self.state.people.get(pid)
        if person is not None:
            return f"{person.name} <{person.email or pid}>"
        group = self.state.groups[pid]
        return f"{group.name} <{pid}>"

    def _mail_bytes(self, msg: Message) -> bytes:
        return pretty_json(
            {
                "id": msg.id,
                "date": msg.date.isoformat(),
                "time": msg.time,
                "from": self._person(msg.sender),
                "to": [self._person(x) for x in msg.to],
                "cc": [self._person(x) for x in msg.cc],
                "subject": msg.subject,
                "thread": msg.thread,
                "classification": msg.classification.value,
                "body": self.renderer.message_body(msg),
            }
        ).encode()

    def _chat_bytes(self, messages: list[Message]) -> bytes:
        return "".join(
            canonical_json(
                {
                    "id": m.id,
                    "date": m.date.isoformat(),
                    "time": m.time,
                    "from": self._person(m.sender),
                    "thread": m.thread,
                    "body": self.renderer.message_body(m),
                }
            )
            for m in messages
        ).encode()


def plan_projection(state: WorldState, date: dt.date, seat_id: str, policy: Policy | None = None) -> Projection:
    seat = state.seats.get(seat_id)
    if seat is None:
        raise UsageError(f"unknown seat {seat_id!r} in {state.world_id} {state.revision}; valid seats: {', '.join(sorted(state.seats))}")
    snapshot = as_of(state, date)
    policy = policy or Policy(state)
    person = seat.person
    documents = sorted(k for k, d in snapshot.documents.items() if policy.document(person, d))
    records = sorted(k for k, v in snapshot.records.items() if policy.record(person, v.record))
    messages = sorted(k for k, m in snapshot.messages.items() if policy.message(person, m))
    return Projection(
        state=state,
        snapshot=snapshot,
        seat=seat,
        policy=policy,
        documents=documents,
        records=records,
        messages=messages,
        renderer=Renderer(snapshot),
    )

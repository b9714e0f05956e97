"""Decide what a seat sees on a date and how each visible item becomes bytes.

Pure: produces a plan (paths, sources, byte producers); `write.py` puts it on disk. Every file a
seat sees is rendered from the seat-independent snapshot, so the same source has the same bytes
for every seat that sees it; seat-specific facts (relations among the records this seat can see,
the tool bundle, the seat card) live in their own files.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from worldkit.access import Policy
from worldkit.canon import canonical_json, pretty_json
from worldkit.errors import UsageError
from worldkit.materialize.memo import current_memo
from worldkit.render import Renderer
from worldkit.timeline import Snapshot, as_of
from worldkit.tools import tool_bundle
from worldkit.world.models import Message, Seat
from worldkit.world.state import WorldState


@dataclass(frozen=True)
class PlannedFile:
    path: str
    surface: str
    source: str
    produce: Callable[[], bytes]


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
        return f"files/{self.state.systems[doc.system].mount or doc.system}/{doc.path}"

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
        return tool_bundle(self.seat.id, self.surfaces())

    def files(self) -> Iterator[PlannedFile]:
        """Planned files in path order."""
        planned: list[PlannedFile] = []
        snap = self.snapshot
        render = self.renderer
        memo = current_memo()
        digest = self.state.digest if memo is not None else ""
        iso = snap.date.isoformat()

        def shared(path: str, surface: str, source: str, produce: Callable[[], bytes]) -> PlannedFile:
            """A file rendered from the seat-independent snapshot: its bytes may come from the memo."""
            if memo is None:
                return PlannedFile(path, surface, source, produce)
            key = (digest, iso, path, source)
            return PlannedFile(path, surface, source, lambda: memo.bytes_for(key, produce))

        for doc_id in self.documents:
            doc = snap.documents[doc_id]
            planned.append(shared(self.document_path(doc_id), "files", doc_id, lambda d=doc: render.document(d)))
        for rec_id in self.records:
            view = snap.records[rec_id]
            planned.append(
                shared(self.record_path(rec_id), "records", rec_id, lambda v=view: pretty_json(v.as_json([])).encode())
            )
        if self.records:
            visible = set(self.records)
            relations = {
                r: sorted(x for x in snap.records[r].record.links if x in visible) for r in self.records
            }
            relations = {k: v for k, v in relations.items() if v}
            planned.append(PlannedFile("records/_relations.json", "records", self.seat.id, lambda: pretty_json(relations).encode()))
        chats: dict[str, list[Message]] = {}
        for msg_id in self.messages:
            msg = snap.messages[msg_id]
            if msg.kind == "mail":
                planned.append(shared(self.message_path(msg), "mail", msg_id, lambda m=msg: self._mail_bytes(m)))
            else:
                assert msg.channel is not None
                chats.setdefault(msg.channel, [])
        for channel in chats:
            # A channel is one log: every message in it up to D, the same bytes for every member.
            in_channel = sorted(
                (m for m in snap.messages.values() if m.kind == "chat" and m.channel == channel),
                key=lambda m: (m.date, m.time, m.id),
            )
            planned.append(
                shared(f"chat/{channel}.jsonl", "chat", channel, lambda ms=in_channel: self._chat_bytes(ms))
            )
        planned.append(PlannedFile("tools.json", "tools", self.seat.id, lambda: pretty_json(self.bundle()).encode()))
        planned.append(PlannedFile("seat.json", "seat", self.seat.id, lambda: pretty_json(self.seat_card()).encode()))
        planned.sort(key=lambda f: f.path)
        return iter(planned)

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

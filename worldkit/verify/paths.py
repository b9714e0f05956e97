"""Where each world item appears in a projection: the layout of DESIGN §3, stated once for verify.

Kept apart from `worldkit.materialize` on purpose: the audit compares what the materializer wrote
against this independent statement of where things belong.
"""

from __future__ import annotations

from worldkit.world.models import Document, Message, Record
from worldkit.world.state import WorldState

SEAT_SPECIFIC = frozenset({"seat.json", "tools.json", "records/_relations.json"})
"""Files whose bytes depend on the seat by design (not shared between seats)."""


def document_path(state: WorldState, doc: Document) -> str:
    system = state.systems.get(doc.system)
    mount = (system.mount if system else "") or doc.system
    return f"files/{mount}/{doc.path}"


def record_path(state: WorldState, rec: Record) -> str:
    return f"records/{rec.system}/{rec.id}.json"


def message_path(msg: Message) -> str:
    return f"mail/{msg.id}.json" if msg.kind == "mail" else f"chat/{msg.channel}.jsonl"

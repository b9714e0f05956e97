"""What the seat's tools return: the structured outputs (and output schemas) of the ten tools.

Pure pydantic models; `worldkit.mcp.seat` fills them and the server publishes their schemas
(`output_schema`). In a published schema a nullable scalar (`int | None`) reads
`{"type": ["integer", "null"]}` rather than pydantic's `anyOf` of two schemas: the same instances,
and a fraction of the work for a client that validates every result against it.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from worldkit._model import Model

__all__ = [
    "FileEntry",
    "FileList",
    "FileText",
    "MessageList",
    "MessageSummary",
    "MessageView",
    "RecordList",
    "RecordSummary",
    "RecordView",
    "SearchMatch",
    "SearchResult",
    "SendResult",
    "UpdateResult",
    "WriteResult",
    "output_schema",
]


class _NullableAsTypeList(GenerateJsonSchema):
    """`T | None` of a plain scalar `T` as a type list; anything else as pydantic renders it."""

    def nullable_schema(self, schema: core_schema.NullableSchema) -> JsonSchemaValue:
        inner = self.generate_inner(schema["schema"])
        kind = inner.get("type")
        if set(inner) == {"type"} and isinstance(kind, str) and kind != "null":
            return {"type": [kind, "null"]}
        return inner if inner == {"type": "null"} else self.get_union_of_schemas([inner, {"type": "null"}])


def output_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The output schema published for a tool returning `model`."""
    return model.model_json_schema(schema_generator=_NullableAsTypeList)


class FileEntry(Model):
    path: str
    """Path relative to the projection's `files/` (workspace files as `workspace/…`)."""
    size: int
    """Size in bytes."""
    sha256: str
    """SHA-256 of the bytes."""


class FileList(Model):
    entries: list[FileEntry]
    """One page of files, sorted by path."""
    next_offset: int | None
    """Offset of the next page, or null after the last."""
    total: int
    """Number of files in all pages."""


class FileText(Model):
    path: str
    """The file."""
    offset: int
    """First character returned."""
    text: str
    """The characters [offset, offset + length)."""
    next_offset: int | None
    """Where to continue reading, or null at the end of the file."""
    total_chars: int
    """Length of the whole file in characters."""
    sha256: str
    """SHA-256 of the whole file's bytes."""


class SearchMatch(Model):
    path: str
    """File containing the match."""
    line: int | None
    """Line number of a literal match (1-based); null for ranked matches."""
    snippet: str
    """Text around the match (ranked: matched words in **bold**)."""
    score: float | None
    """Relevance for ranked search (higher is better); null for literal."""


class SearchResult(Model):
    query: str
    """The query as given."""
    mode: str
    """`literal` or `ranked`."""
    matches: list[SearchMatch]
    """Matches (literal: by path and line; ranked: best first)."""
    truncated: bool
    """True if there were more matches than `limit`."""


class WriteResult(Model):
    path: str
    """The file as list_files shows it (`workspace/…`)."""
    size: int
    """Bytes written."""
    sha256: str
    """SHA-256 of the bytes written."""


class RecordSummary(Model):
    id: str
    """Record id."""
    system: str
    """Records system."""
    type: str
    """Record type."""
    title: str
    """Title."""
    status: str | None
    """Current status (including changes made in this run)."""
    updated: str
    """Date of the last change before the projection date."""


class RecordList(Model):
    records: list[RecordSummary]
    """One page of matching records, by id."""
    next_offset: int | None
    """Offset of the next page, or null after the last."""
    total: int
    """Number of matching records."""


class RecordView(Model):
    id: str
    """Record id."""
    status: str | None
    """Current status (including changes made in this run)."""
    record: dict[str, Any]
    """The record as of the projection date: fields, history, links to records you can see."""
    relations: list[str]
    """Records you can see that link to or from this one."""
    changes: list[dict[str, Any]]
    """Comments, status changes and attachments made in this run, in order."""


class UpdateResult(Model):
    id: str
    """Record id."""
    action: str
    """What was done."""
    status: str | None
    """The record's status afterwards."""
    changes: list[dict[str, Any]]
    """All changes made to the record in this run, in order."""


class MessageSummary(Model):
    id: str
    """Message id."""
    kind: str
    """`mail` or `chat`."""
    date: str
    """Date sent."""
    time: str | None
    """Time sent."""
    sender: str
    """Who sent it."""
    subject: str | None
    """Mail subject (null for chat)."""
    channel: str | None
    """Chat channel (null for mail)."""
    thread: str | None
    """Thread id."""
    sent_by_you: bool
    """True for mail sent in this run."""


class MessageList(Model):
    messages: list[MessageSummary]
    """One page of messages, oldest first."""
    next_offset: int | None
    """Offset of the next page, or null after the last."""
    total: int
    """Number of matching messages."""


class MessageView(MessageSummary):
    to: list[str]
    """Recipients (mail)."""
    cc: list[str]
    """Copied recipients (mail)."""
    reply_to: str | None
    """Message this replies to (mail sent in this run)."""
    body: str
    """Body text."""


class SendResult(Model):
    id: str
    """Id of the sent mail."""
    to: list[str]
    """Recipients."""
    subject: str
    """Subject."""

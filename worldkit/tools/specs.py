"""Tool specifications: one definition of every tool's arguments, used by the tool bundle in each
projection and by the MCP servers, so that what a projection promises is what a server serves.

Identity is never an argument: the seat is bound when a server starts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field

from worldkit._model import Model
from worldkit.canon import sha256_json


class ListFilesArgs(Model):
    offset: int = Field(0, ge=0)
    """First entry to return."""
    limit: int = Field(100, ge=1, le=500)
    """Entries per page."""


class ReadFileArgs(Model):
    path: str
    """Path relative to the projection's `files/`."""
    offset: int = Field(0, ge=0)
    """First character to return."""
    length: int = Field(20000, ge=1, le=100000)
    """Characters to return."""


class SearchFilesArgs(Model):
    query: str = Field(min_length=1, max_length=500)
    """Text to look for."""
    mode: Literal["literal", "ranked"] = "literal"
    """`literal`: case-insensitive substring; `ranked`: full-text ranking."""
    limit: int = Field(20, ge=1, le=100)
    """Maximum matches."""


class WriteFileArgs(Model):
    path: str
    """Path inside the writable workspace."""
    content: str
    """Full new content."""


class QueryRecordsArgs(Model):
    system: str | None = None
    """Records system (qms, lims, …)."""
    type: str | None = None
    """Record type."""
    status: str | None = None
    """Current status."""
    field: str | None = None
    """A field name to filter on (with `value`)."""
    value: str | None = None
    """Value the field must equal (string comparison)."""
    text: str | None = None
    """Case-insensitive text in title or fields."""
    offset: int = Field(0, ge=0)
    """First match to return."""
    limit: int = Field(50, ge=1, le=500)
    """Matches per page."""


class GetRecordArgs(Model):
    id: str
    """Record id."""


class UpdateRecordArgs(Model):
    id: str
    """Record id."""
    action: Literal["comment", "status", "attach"]
    """What to do (only what the task permits)."""
    text: str = ""
    """Comment text, new status, or the workspace path to attach."""


class ListMessagesArgs(Model):
    kind: Literal["mail", "chat"] | None = None
    """Only mail or only chat."""
    text: str | None = None
    """Case-insensitive text in subject or body."""
    offset: int = Field(0, ge=0)
    """First message to return."""
    limit: int = Field(50, ge=1, le=500)
    """Messages per page."""


class ReadMessageArgs(Model):
    id: str
    """Message id."""


class SendMessageArgs(Model):
    to: list[str] = Field(min_length=1)
    """Recipients (person ids or mailing lists)."""
    subject: str
    """Subject."""
    body: str
    """Body text."""
    reply_to: str | None = None
    """Message id this replies to."""


@dataclass(frozen=True)
class ToolSpec:
    name: str
    surface: str
    description: str
    args: type[Model]
    read_only: bool

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "surface": self.surface,
            "description": self.description,
            "read_only": self.read_only,
            "input_schema": self.args.model_json_schema(),
        }


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec("list_files", "files", "List the files you can see, a page at a time.", ListFilesArgs, True),
    ToolSpec("read_file", "files", "Read part of a file by path, offset and length.", ReadFileArgs, True),
    ToolSpec("search_files", "files", "Search file contents (literal or ranked).", SearchFilesArgs, True),
    ToolSpec("write_file", "files", "Write a file in your workspace (when the task permits).", WriteFileArgs, False),
    ToolSpec("query_records", "records", "Find records by system, type, status, field or text.", QueryRecordsArgs, True),
    ToolSpec("get_record", "records", "Get one record with its history.", GetRecordArgs, True),
    ToolSpec("update_record", "records", "Comment on, change the status of, or attach to a record.", UpdateRecordArgs, False),
    ToolSpec("list_messages", "communication", "List mail and chat messages you can see.", ListMessagesArgs, True),
    ToolSpec("read_message", "communication", "Read one message.", ReadMessageArgs, True),
    ToolSpec("send_message", "communication", "Send or reply to a mail (when the task permits).", SendMessageArgs, False),
)
SURFACES: tuple[str, ...] = ("files", "records", "communication")
TOOLS_BY_NAME = {t.name: t for t in TOOLS}


def tool_bundle(seat: str, surfaces: list[str]) -> dict[str, Any]:
    """The bundle written to `tools.json`: servers and tools with schemas, and its own digest."""
    servers = [
        {"name": f"worldkit-{surface}", "surface": surface, "tools": [t.as_json() for t in TOOLS if t.surface == surface]}
        for surface in SURFACES
        if surface in surfaces
    ]
    body = {"schema_version": 1, "seat": seat, "servers": servers}
    return {**body, "sha256": sha256_json(body)}

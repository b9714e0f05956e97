"""What a task lets the seat change, and the tool configuration handed to the servers.

Shared contract between the overlay (which declares it), the candidate package (which carries it
as `tool-config.json`) and the MCP servers (which enforce it). Seat identity is fixed here and
nowhere else; no tool can change it.
"""

from __future__ import annotations

import fnmatch
from typing import Annotated, Literal

from pydantic import Field

from worldkit._model import Model


class WriteFiles(Model):
    kind: Literal["write_file"] = "write_file"
    """Write files in the workspace."""
    paths: list[str] = Field(default_factory=lambda: ["*"])
    """Glob patterns relative to `workspace/` (e.g. `*.md`, `report/*`)."""


class UpdateRecords(Model):
    kind: Literal["update_record"] = "update_record"
    """Change records in a company system."""
    action: Literal["comment", "status", "attach"]
    """The mutation allowed."""
    records: list[str] = Field(default_factory=lambda: ["*"])
    """Record ids (or globs) it applies to."""
    statuses: list[str] = Field(default_factory=list)
    """For `status`: the statuses that may be set."""


class SendMessages(Model):
    kind: Literal["send_message"] = "send_message"
    """Send mail."""
    to: list[str] = Field(default_factory=lambda: ["*"])
    """Person ids or mailing lists (or globs) that may be addressed."""


PermittedChange = Annotated[WriteFiles | UpdateRecords | SendMessages, Field(discriminator="kind")]


class ToolConfig(Model):
    """`candidate/tool-config.json`: who the servers act as and what they may change."""

    schema_version: Literal[1] = 1
    """Format version."""
    world: str
    """World id."""
    rev: str
    """Revision."""
    date: str
    """Projection date (ISO)."""
    seat: str
    """Seat id the servers act as."""
    person: str
    """The seat's person."""
    surfaces: list[str]
    """Surfaces served (files, records, communication)."""
    permitted: list[PermittedChange] = Field(default_factory=list)
    """Everything the seat may change; anything else is refused."""

    def may_write(self, workspace_path: str) -> bool:
        return any(
            isinstance(p, WriteFiles) and any(fnmatch.fnmatchcase(workspace_path, g) for g in p.paths)
            for p in self.permitted
        )

    def may_update(self, record_id: str, action: str, status: str | None = None) -> bool:
        for p in self.permitted:
            if isinstance(p, UpdateRecords) and p.action == action and any(fnmatch.fnmatchcase(record_id, g) for g in p.records):
                if action != "status" or status in p.statuses:
                    return True
        return False

    def may_send(self, recipient: str) -> bool:
        return any(
            isinstance(p, SendMessages) and any(fnmatch.fnmatchcase(recipient, g) for g in p.to) for p in self.permitted
        )

"""Shared helpers for the seat-server tests: projections of the small builder world, configs, clients."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp import Client

from tests.builders import WorldSpec
from worldkit.materialize import materialize
from worldkit.materialize.manifest import read_manifest
from worldkit.mcp.seat import default_tool_config
from worldkit.mcp.server import build_seat_server
from worldkit.mcp.state import DiskWorkspace, SeatState
from worldkit.overlay.toolconfig import (
    SendMessages,
    ToolConfig,
    UpdateRecords,
    WriteFiles,
)
from worldkit.store import EventLog, Store, read_events

DATE = "2025-07-01"
MODES = ["auto", "legacy"]


def project(tmp: Path, seat: str, *, date: str = DATE) -> Path:
    """The projection of `seat` in the small builder world (rev r1) on `date`."""
    world = tmp / "world"
    if not world.exists():
        WorldSpec().write(world)
    out = tmp / f"{seat}-{date}"
    if not out.exists():
        materialize(world, "r1", date, seat, out)
    return out


def permissive(projection: Path) -> ToolConfig:
    """The seat's config with a few permitted changes (writes, comments, status, attach, mail to P3)."""
    base = default_tool_config(projection)
    return base.model_copy(
        update={
            "permitted": [
                WriteFiles(paths=["*.md", "report/*"]),
                UpdateRecords(action="comment", records=["CC-*"]),
                UpdateRecords(action="status", records=["CC-1"], statuses=["closed"]),
                UpdateRecords(action="attach", records=["CC-1"]),
                SendMessages(to=["P3", "list-all"]),
            ]
        }
    )


class Run:
    """A served seat with its store, event log and state, for one test."""

    def __init__(self, projection: Path, config: ToolConfig | None = None, *, workspace: Path | None = None,
                 run_id: str = "run-1", store_url: str = "sqlite:///:memory:") -> None:
        self.projection = projection
        self.config = config or default_tool_config(projection)
        self.store = Store.open(store_url)
        self.run_id = run_id
        self.log = EventLog(self.store, run_id, self.config.seat)
        self.workspace = workspace
        self.state = SeatState(
            read_manifest(projection).fingerprint, DiskWorkspace(workspace) if workspace is not None else None
        )
        self.server = build_seat_server(projection, self.config, workspace=workspace, event_log=self.log, state=self.state)

    @asynccontextmanager
    async def client(self, mode: str = "auto") -> AsyncIterator[Client]:
        async with Client(self.server, mode=mode) as client:
            yield client

    def events(self) -> list[Any]:
        return list(read_events(self.store, self.run_id))

    def close(self) -> None:
        self.log.close()
        self.store.close()


def bundle_tools(projection: Path) -> dict[str, dict[str, Any]]:
    bundle = json.loads((projection / "tools.json").read_text(encoding="utf-8"))
    return {tool["name"]: tool for server in bundle["servers"] for tool in server["tools"]}


def projection_files(projection: Path) -> list[str]:
    return [e.path[len("files/"):] for e in read_manifest(projection).files if e.path.startswith("files/")]


def error_text(result: Any) -> str:
    assert result.is_error, result
    return " ".join(c.text for c in result.content)

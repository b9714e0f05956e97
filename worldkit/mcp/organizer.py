"""The InfoOrgBench organizer as an MCP server: Table 9's five record operations as tools.

A thin adapter over `worldkit.infoorg.organizer.Organizer`: each tool calls one library method
and returns its pydantic model as structured output; a refusal becomes a `ToolError` that says
why (nothing changed). Every `tools/call` — successes, refusals, invalid arguments, unknown tools
and crashes — goes to the optional event log through a server middleware.

Run over stdio with `python -m worldkit.mcp.organizer --workspace DIR`.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Annotated, Any, TypeVar

from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

from worldkit.mcp.base import WorldkitMCPServer
from worldkit.mcp.calllog import CALL_NOTE, CallLogMiddleware, result_digest
from worldkit.store.eventlog import EventSink
from worldkit.infoorg.instructions import server_instructions
from worldkit.infoorg.organizer import (
    LIST_PAGE_MAX,
    READ_LENGTH_MAX,
    SEARCH_MATCHES_MAX,
    FileList,
    FileText,
    Inventory,
    MoveResult,
    Organizer,
    OrganizerRefused,
    SearchResult,
)

__all__ = ["EventMoveLog", "EventSink", "build_organizer_server", "main"]

INSTRUCTIONS = server_instructions()
"""Figure 11 (the ReAct-FC bounded tool instruction) verbatim; a served packet appends its request."""


Model = TypeVar("Model", bound=BaseModel)


def _run(action: Callable[[], Model], state_change: Callable[[Model], Any] | None = None) -> Model:
    """Call the library; turn a refusal into a ToolError and note the outcome for the log."""
    note = CALL_NOTE.get()
    try:
        result = action()
    except OrganizerRefused as refusal:
        if note is not None:
            note.update(outcome="denied", detail={"reason": refusal.message})
        raise ToolError(refusal.message) from refusal
    if note is not None:
        note["outcome"] = "ok"
        if state_change is not None:
            note["state_change"] = state_change(result)
    return result


def _move_change(result: MoveResult) -> dict[str, Any] | None:
    if not result.moved:
        return None
    return {
        "kind": "infoorg.move_files",
        "moves": [
            {"id": m.id, "from": m.from_path, "to": m.to_path} for m in result.moved
        ],
    }


class EventMoveLog:
    """The organizer's `MoveLog` over the server's event log.

    A move made by a call is logged as that call's event (the middleware then adds nothing);
    a move completed by journal recovery is logged as a `move_files` event with
    `detail.recovered`, unless the journal's run already holds the move's event (the kill came
    after the event was stored, before the journal was dropped).
    """

    def __init__(self, sink: EventSink) -> None:
        self.sink = sink

    def tag(self) -> dict[str, str]:
        run_id = getattr(self.sink, "run_id", None)
        return {"run_id": run_id} if isinstance(run_id, str) else {}

    def committed(self, result: MoveResult, plan: Mapping[str, Any]) -> None:
        note = CALL_NOTE.get()
        arguments = (note or {}).get("arguments") or {
            "ids": [m.id for m in result.moved] + list(result.already_there),
            "destination": list(result.destination),
        }
        change = {**(_move_change(result) or {}), "plan": plan["plan_id"]}
        body = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        self.sink.append(
            "move_files", arguments, "ok", result_digest(body), None, state_change=change
        )
        if note is not None:
            note["logged"] = True

    def recovered(self, result: MoveResult, plan: Mapping[str, Any]) -> None:
        plan_id = plan.get("plan_id")
        journal_run = (plan.get("log") or {}).get("run_id")
        if plan_id and journal_run and self._logged(journal_run, plan_id):
            return
        change = _move_change(result)
        if change is None:
            return
        self.sink.append(
            "move_files",
            {"ids": [m.id for m in result.moved], "destination": list(result.destination)},
            "ok",
            None,
            {"recovered": "completed from the journal of an interrupted move",
             "journal_run": journal_run or ""},
            state_change={**change, "plan": plan_id or ""},
        )  # fmt: skip

    def _logged(self, run_id: str, plan_id: str) -> bool:
        store = getattr(self.sink, "store", None)
        if store is None:
            return False
        from worldkit.errors import UsageError
        from worldkit.store import read_events

        try:
            events = list(read_events(store, run_id))
        except UsageError:  # the journal's run is not in this store
            return False
        return any((e.state_change or {}).get("plan") == plan_id for e in reversed(events))


_READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)


def build_organizer_server(
    workspace: Path,
    *,
    event_log: EventSink | None = None,
    inventory: Mapping[str, str] | None = None,
    request: str | None = None,
) -> WorldkitMCPServer:
    """An MCP server over the records in `workspace` (see `Organizer` for `inventory`).

    Recovers an interrupted move on start. `event_log`, when given, receives every tool call,
    and every move journal recovery completes (see `EventMoveLog`).
    The `initialize` instructions are Figure 11 verbatim followed by `request` (the packet's
    `candidate/request.md`) when given.
    """
    organizer = Organizer(
        workspace,
        inventory=inventory,
        move_log=EventMoveLog(event_log) if event_log is not None else None,
    )
    server = WorldkitMCPServer(
        "worldkit-organizer",
        instructions=server_instructions(request),
        log_level="WARNING",
        middleware=[CallLogMiddleware(event_log)] if event_log is not None else None,
    )

    @server.tool(annotations=_READ_ONLY)
    def list_files(
        offset: Annotated[int, Field(ge=0, description="Position to start listing from.")] = 0,
        limit: Annotated[
            int, Field(ge=1, le=LIST_PAGE_MAX, description="Entries per page (at most 200).")
        ] = LIST_PAGE_MAX,
    ) -> FileList:
        """List records (id, current folder path, format), ordered by id, one page at a time."""
        return _run(lambda: organizer.list_files(offset, limit))

    @server.tool(annotations=_READ_ONLY)
    def read_file(
        id: Annotated[str, Field(description="Record id, e.g. F001.")],  # noqa: A002 - Table 9
        offset: Annotated[int, Field(ge=0, description="Character offset to start at.")] = 0,
        length: Annotated[
            int,
            Field(ge=1, le=READ_LENGTH_MAX, description="Characters to return (≤ 100,000)."),
        ] = READ_LENGTH_MAX,
    ) -> FileText:
        """Read a record's exact text; continue from next_offset until it is None."""
        return _run(lambda: organizer.read_file(id, offset, length))

    @server.tool(annotations=_READ_ONLY)
    def search_files(
        query: Annotated[str, Field(description="Literal text; matched case-insensitively.")],
        limit: Annotated[
            int, Field(ge=1, le=SEARCH_MATCHES_MAX, description="Matches to return (≤ 40).")
        ] = SEARCH_MATCHES_MAX,
    ) -> SearchResult:
        """Search record bodies for a literal phrase; returns snippets (read_file for more)."""
        return _run(lambda: organizer.search_files(query, limit))

    @server.tool(
        annotations=ToolAnnotations(
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=False,
        )
    )
    def move_files(
        ids: Annotated[list[str], Field(min_length=1, description="Record ids to move.")],
        destination: Annotated[
            list[str],
            Field(description='Destination folder components, e.g. ["planning", "budget"].'),
        ],
    ) -> MoveResult:
        """Move records into a folder, creating it. Folder names must be non-empty, without
        '/' or '\\', not '.' or '..', not ending in '.txt' and not like a record id (F12); at
        most 32 levels and 1,024 bytes of path. Record contents never change."""
        return _run(lambda: organizer.move_files(ids, destination), _move_change)

    @server.tool(annotations=_READ_ONLY)
    def check_inventory() -> Inventory:
        """Report missing, duplicated, changed, unexpected and unplaced records (integrity and
        filing state only)."""
        return _run(organizer.check_inventory)

    return server


def main(argv: list[str] | None = None) -> None:
    """Serve one workspace over stdio."""
    parser = argparse.ArgumentParser(
        prog="python -m worldkit.mcp.organizer",
        description="Serve the InfoOrgBench organizer tools for one workspace over stdio.",
    )
    parser.add_argument("--workspace", type=Path, required=True, help="The agent's record tree.")
    parser.add_argument(
        "--request", type=Path, default=None,
        help="The packet's request (candidate/request.md), sent after Figure 11 as instructions.",
    )
    args = parser.parse_args(argv)
    try:
        request = args.request.read_text(encoding="utf-8") if args.request else None
    except OSError as error:
        parser.exit(3, f"error: {args.request}: cannot be read ({error}); pass the packet's "
                    "candidate/request.md\n")
    try:
        server = build_organizer_server(args.workspace, request=request)
    except OrganizerRefused as error:
        parser.exit(2, f"error: {error.message}\n")
    server.run("stdio")


if __name__ == "__main__":
    main()

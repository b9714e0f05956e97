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

from worldkit._model import Model as _Record
from worldkit.errors import UsageError
from worldkit.mcp.base import WorldkitMCPServer
from worldkit.mcp.calllog import CALL_NOTE, CallLogMiddleware, result_digest
from worldkit.store import Store
from worldkit.store.eventlog import EventSink
from worldkit.infoorg.instructions import server_instructions
from worldkit.infoorg.organizer import (
    LIST_PAGE_MAX,
    READ_LENGTH_MAX,
    SEARCH_MATCHES_MAX,
    FileList,
    FileText,
    InterruptedMove,
    Inventory,
    MoveResult,
    Organizer,
    OrganizerRefused,
    SearchResult,
    journal_owner,
    pending_plan,
)
from worldkit.infoorg.validity import ORGANIZER_STATE_DIR

__all__ = [
    "EventMoveLog",
    "EventSink",
    "OrganizerRecovery",
    "build_organizer_server",
    "check_settled",
    "main",
    "recover_organizer",
]

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

    A move made by a call is logged as that call's event (the middleware then adds nothing).
    A journal names the run (and session) of the call that wrote it. Recovery of a journal of
    this log's run logs the completed move as a `move_files` event with `detail.recovered`,
    unless the run already holds the move's event (the kill came after the event was stored,
    before the journal was dropped); a journal of another run is this log's to settle only when
    that run already holds the event (`may_settle`), so a killed run's move never lands in the
    next run's log.
    """

    def __init__(self, sink: EventSink) -> None:
        self.sink = sink

    def _run_id(self) -> str | None:
        run_id = getattr(self.sink, "run_id", None)
        return run_id if isinstance(run_id, str) else None

    def tag(self) -> dict[str, str]:
        run_id, session = self._run_id(), getattr(self.sink, "session", None)
        if run_id is None:
            return {}
        return {"run_id": run_id, **({"session": session} if isinstance(session, str) else {})}

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

    def may_settle(self, plan: Mapping[str, Any]) -> bool:
        owner = journal_owner(plan)
        if owner is None or owner[0] == self._run_id():
            return True
        plan_id = plan.get("plan_id")
        return isinstance(plan_id, str) and _logged(getattr(self.sink, "store", None), owner[0], plan_id)

    def recovered(self, result: MoveResult, plan: Mapping[str, Any]) -> None:
        plan_id = plan.get("plan_id")
        owner = journal_owner(plan)
        journal_run = owner[0] if owner else None
        if plan_id and journal_run and _logged(getattr(self.sink, "store", None), journal_run, plan_id):
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


def _logged(store: Store | None, run_id: str, plan_id: str) -> bool:
    """Whether run `run_id` in `store` holds the event of the journaled move `plan_id`."""
    if store is None:
        return False
    from worldkit.store import read_events

    try:
        events = list(read_events(store, run_id))
    except UsageError:  # the journal's run is not in this store
        return False
    return any((e.state_change or {}).get("plan") == plan_id for e in reversed(events))


class OrganizerRecovery(_Record):
    """What `worldkit log recover RUN` did to an organizer workspace a killed server left."""

    run_id: str
    """The run whose log settled the interrupted move."""
    workspace: str
    """The workspace folder settled."""
    moved: list[str]
    """Records the interrupted move put in place ([] when there was no interrupted move)."""
    destination: list[str]
    """Folder components of the move's destination."""
    logged: bool
    """True when the move's event was appended to the run's log now (False when the run already
    held it: the kill came after the event was stored)."""

    @property
    def message(self) -> str:
        if not self.moved and not self.logged and not self.destination:
            return f"workspace {self.workspace}: no interrupted move (run {self.run_id})"
        where = "/".join(self.destination) or "(root)"
        how = "logged now" if self.logged else "its event was already in the log"
        return (
            f"workspace {self.workspace} settled with run {self.run_id}'s log: the interrupted move of "
            f"{len(self.moved)} record(s) to {where} completed ({how})"
        )


def check_settled(workspace: Path, store: Store, run_id: str) -> None:
    """Refuse (`InterruptedMove`) to serve `workspace` as run `run_id` while it holds a move that
    another run's killed server did not finish and whose event that run does not hold yet.

    Called before the new run is claimed, so a refusal leaves the store untouched."""
    plan = pending_plan(workspace)
    owner = journal_owner(plan) if plan is not None else None
    if plan is None or owner is None or owner[0] == run_id:
        return
    plan_id = plan.get("plan_id")
    if not (isinstance(plan_id, str) and _logged(store, owner[0], plan_id)):
        raise InterruptedMove(Path(workspace).resolve(), owner[0])


def recover_organizer(store: Store, run_id: str, workspace: Path) -> OrganizerRecovery:
    """Finish the move a killed organizer server of run `run_id` left in `workspace`, logging it
    in that run's own log (as its session) unless the log already holds it.

    Refuses a journal that belongs to another run (naming it). After this, replaying each run's
    log gives the tree on disk, and the next server starts.
    """
    from worldkit.store import EventLog, get_run

    root = Path(workspace)
    if not (root / ORGANIZER_STATE_DIR).is_dir():
        raise UsageError(f"--workspace {root} is not an organizer workspace (no {ORGANIZER_STATE_DIR}/)")
    plan = pending_plan(root)
    if plan is None:
        Organizer(root)  # sets an unreadable journal aside, if any
        return OrganizerRecovery(run_id=run_id, workspace=str(root), moved=[], destination=[], logged=False)
    owner = journal_owner(plan)
    if owner is not None and owner[0] != run_id:
        raise UsageError(
            f"the interrupted move in {root} belongs to run {owner[0]}, not {run_id}; run "
            f"`worldkit log recover {owner[0]} --workspace {root}`"
        )
    head = get_run(store, run_id)
    before = head.seq
    if owner is None or not owner[1]:
        raise UsageError(
            f"the interrupted move in {root} names no logged session; any start of the organizer "
            "completes it (it was not made by a logged server)"
        )
    with EventLog(store, run_id, head.seat, resume_session=owner[1], key=None) as log:
        Organizer(root, move_log=EventMoveLog(log))
    logged = get_run(store, run_id).seq > before
    return OrganizerRecovery(
        run_id=run_id, workspace=str(root),
        moved=sorted(m["id"] for m in plan.get("moves", []) if isinstance(m, dict) and "id" in m),
        destination=[str(d) for d in plan.get("destination", [])], logged=logged,
    )  # fmt: skip


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

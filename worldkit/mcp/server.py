"""The seat's MCP server: the ten tools of `worldkit.tools.specs`, acting as one seat, logged.

A thin adapter over `worldkit.mcp.seat.SeatView`. Each tool is published with exactly the name,
description and input schema of its spec (the same ones the projection's `tools.json` promises)
and returns a pydantic model as structured output; read tools are annotated read-only, the three
mutating tools not. A refusal becomes a `ToolError` saying what is not allowed and why (nothing
changed). Every `tools/call` — results, refusals, invalid arguments, unknown tools and crashes —
is appended to the event log by a server middleware, with the digest of what the agent got back
and, for a permitted mutation, the state change that replay re-applies.

The seat is bound here, once, from the projection; no tool takes a seat, user or identity.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools.base import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel

from worldkit.mcp.results import (
    FileList,
    FileText,
    MessageList,
    MessageView,
    RecordList,
    RecordView,
    SearchResult,
    SendResult,
    UpdateResult,
    WriteResult,
    output_schema,
)
from worldkit.mcp.base import WorldkitMCPServer
from worldkit.mcp.calllog import CALL_NOTE, CallLogMiddleware
from worldkit.mcp.confine import bounded_arguments
from worldkit.mcp.seat import REFUSALS, SeatView
from worldkit.mcp.state import SeatState
from worldkit.overlay.toolconfig import ToolConfig
from worldkit.tools.specs import TOOLS, ToolSpec

if TYPE_CHECKING:
    from worldkit.store.eventlog import EventSink

__all__ = ["build_seat_server", "served_tools"]

INSTRUCTIONS = (
    "You are working as employee seat {seat} ({person}) on {date}. These tools reach the company "
    "systems this seat can see: files (list_files, read_file, search_files, write_file in your "
    "workspace), records (query_records, get_record, update_record) and communication "
    "(list_messages, read_message, send_message). Changes are allowed only where the task permits "
    "them; a refused call says why and changes nothing."
)

_RESULTS: dict[str, type[BaseModel]] = {
    "list_files": FileList,
    "read_file": FileText,
    "search_files": SearchResult,
    "write_file": WriteResult,
    "query_records": RecordList,
    "get_record": RecordView,
    "update_record": UpdateResult,
    "list_messages": MessageList,
    "read_message": MessageView,
    "send_message": SendResult,
}


# What the tool body learned about the call, read back by the logging middleware.


def _write_ahead(result: BaseModel, change: BaseModel) -> None:
    """Log a staged mutation's call (result digest and state change) before it is applied."""
    note = CALL_NOTE.get()
    if note is not None and "log_now" in note:
        note["log_now"](result.model_dump(mode="json"), change.model_dump(mode="json"))


def _annotations(spec: ToolSpec) -> ToolAnnotations:
    if spec.read_only:
        return ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
    # write_file replaces a file's content: destructive; record updates and mail only add.
    return ToolAnnotations(
        read_only_hint=False,
        destructive_hint=spec.name == "write_file",
        idempotent_hint=spec.name == "write_file",
        open_world_hint=False,
    )


def _handler(view: SeatView, spec: ToolSpec) -> Callable[..., Any]:
    method = getattr(view, spec.name)

    async def call(**arguments: Any) -> Any:
        note = CALL_NOTE.get()
        try:
            result = method(**arguments)
        except REFUSALS as refusal:
            if note is not None:  # a refused call's huge argument is logged as digest + size, not in full
                note.update(outcome="denied", detail={"reason": refusal.message}, arguments=bounded_arguments(arguments))
            raise ToolError(refusal.message) from refusal
        except Exception as error:
            if note is not None:
                note.update(outcome="error", detail={"reason": f"{type(error).__name__}: {error}"[:500]},
                            arguments=bounded_arguments(arguments))
            raise
        if isinstance(result, tuple):
            result, change = result
            if note is not None:
                note["state_change"] = change.model_dump(mode="json")
        if note is not None:
            note["outcome"] = "ok"
        # Built here (not by the SDK from the model) so the result is dumped once. The envelope's
        # validation is shallow (the payload dict is kept as is) and cheaper than model_construct.
        payload = result.model_dump(mode="json")
        text = TextContent(type="text", text=json.dumps(payload, ensure_ascii=False))
        answer = CallToolResult(content=[text], structured_content=payload, is_error=False)
        if note is not None:  # the logging middleware digests this body without dumping the answer again
            note["answer"], note["body"] = answer, payload
        return answer

    call.__name__ = spec.name
    return call


_SHAPES: dict[str, tuple[type[BaseModel], str, str]] = {}
"""Tool name → (argument model, input schema, output schema as JSON): the same for every server,
made once per process (a pydantic model class and two schemas cost more than the rest of a
server's start); each server gets its own copies of the schemas."""


def _shapes(spec: ToolSpec) -> tuple[type[BaseModel], dict[str, Any], dict[str, Any]]:
    made = _SHAPES.get(spec.name)
    if made is None or made[0].__bases__[0] is not spec.args:
        # The argument model is the spec's own (extra arguments refused), so the published input
        # schema is byte-for-byte the one in tools.json.
        arguments = type(f"{spec.name}Arguments", (spec.args, ArgModelBase), {})
        made = _SHAPES[spec.name] = (arguments, json.dumps(spec.args.model_json_schema()),
                                     json.dumps(output_schema(_RESULTS[spec.name])))
    return made[0], json.loads(made[1]), json.loads(made[2])


def _tool(view: SeatView, spec: ToolSpec) -> Tool:
    arguments, parameters, produces = _shapes(spec)
    return Tool(
        fn=_handler(view, spec),
        name=spec.name,
        description=spec.description,
        parameters=parameters,
        # A published schema without an output model: the handler returns a finished result.
        fn_metadata=FuncMetadata(arg_model=arguments, output_schema=produces),
        is_async=True,
        context_kwarg=None,
        annotations=_annotations(spec),
    )


def served_tools(view: SeatView) -> list[ToolSpec]:
    """The tools the projection's bundle promises, on the surfaces the config grants."""
    bundled = {tool["name"] for server in view.bundle["servers"] for tool in server["tools"]}
    return [t for t in TOOLS if t.name in bundled and t.surface in view.config.surfaces]


def build_seat_server(
    projection: Path,
    config: ToolConfig,
    *,
    workspace: Path | None = None,
    event_log: EventSink | None = None,
    state: SeatState | None = None,
) -> WorldkitMCPServer:
    """An MCP server acting as `config.seat` over the materialized `projection`.

    `workspace` (a folder) makes `write_file` possible where `config` permits it; `state` lets a
    caller supply (and later inspect) the run's mutable state; `event_log` receives every call.
    """
    view = SeatView(projection, config, workspace=workspace, state=state, write_ahead=_write_ahead)
    return WorldkitMCPServer(
        f"worldkit-seat-{view.seat}",
        instructions=INSTRUCTIONS.format(seat=view.seat, person=view.person, date=view.date),
        log_level="WARNING",
        tools=[_tool(view, spec) for spec in served_tools(view)],
        middleware=[CallLogMiddleware(event_log)] if event_log is not None else None,
    )

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

import asyncio
import contextlib
import json
import threading
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools.base import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel

from worldkit.canon import sha256_json
from worldkit.store.eventlog import EventSink
from worldkit.errors import StoreError
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
)
from worldkit.mcp.seat import REFUSALS, SeatView
from worldkit.mcp.state import SeatState
from worldkit.overlay.toolconfig import ToolConfig
from worldkit.tools.specs import TOOLS, ToolSpec

__all__ = ["EventSink", "WriteBehindLog", "build_seat_server", "served_tools"]

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
_NOTE: ContextVar[dict[str, Any] | None] = ContextVar("seat_call_note", default=None)


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
        note = _NOTE.get()
        try:
            result = method(**arguments)
        except REFUSALS as refusal:
            if note is not None:
                note.update(outcome="denied", detail={"reason": refusal.message})
            raise ToolError(refusal.message) from refusal
        except Exception as error:
            if note is not None:
                note.update(outcome="error", detail={"reason": f"{type(error).__name__}: {error}"[:500]})
            raise
        if isinstance(result, tuple):
            result, change = result
            if note is not None:
                note["state_change"] = change.model_dump(mode="json")
        if note is not None:
            note["outcome"] = "ok"
        # Built here (not by the SDK from the model) so the result is dumped once, not re-validated:
        # the payload comes from our own validated model, so the envelope needs no validation either.
        payload = result.model_dump(mode="json")
        text = TextContent.model_construct(type="text", text=json.dumps(payload, ensure_ascii=False))
        return CallToolResult.model_construct(content=[text], structured_content=payload, is_error=False)

    call.__name__ = spec.name
    return call


def _tool(view: SeatView, spec: ToolSpec) -> Tool:
    # The argument model is the spec's own (extra arguments refused), so the published input
    # schema is byte-for-byte the one in tools.json.
    arguments = type(f"{spec.name}Arguments", (spec.args, ArgModelBase), {})
    return Tool(
        fn=_handler(view, spec),
        name=spec.name,
        description=spec.description,
        parameters=spec.args.model_json_schema(),
        # A published schema without an output model: the handler returns a finished result.
        fn_metadata=FuncMetadata(arg_model=arguments, output_schema=_RESULTS[spec.name].model_json_schema()),
        is_async=True,
        context_kwarg=None,
        annotations=_annotations(spec),
    )


def served_tools(view: SeatView) -> list[ToolSpec]:
    """The tools the projection's bundle promises, on the surfaces the config grants."""
    bundled = {tool["name"] for server in view.bundle["servers"] for tool in server["tools"]}
    return [t for t in TOOLS if t.name in bundled and t.surface in view.config.surfaces]


class _LogCalls:
    """Appends every tools/call to the event log with its outcome and the digest of its result."""

    def __init__(self, sink: EventSink) -> None:
        self.sink = sink

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        if ctx.method != "tools/call":
            return await call_next(ctx)
        params = ctx.params or {}
        tool = str(params.get("name", ""))[:200] or "(none)"
        arguments = _loggable(params.get("arguments") or {})
        if not isinstance(arguments, dict):
            arguments = {"_not_an_object": arguments}
        if isinstance(self.sink, WriteBehindLog):
            self.sink.check()  # fail closed before the tool runs, not after it changed something
        note: dict[str, Any] = {}
        token = _NOTE.set(note)
        try:
            result = await call_next(ctx)
        except Exception as error:
            self.sink.append(tool, arguments, "error", None, {"reason": type(error).__name__})
            raise
        finally:
            _NOTE.reset(token)
        if isinstance(result, BaseModel):
            dumped: Any = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        else:
            dumped = result
        is_error = bool(isinstance(dumped, dict) and dumped.get("isError"))
        outcome = note.get("outcome") or ("error" if is_error else "ok")
        detail = note.get("detail")
        if is_error and detail is None:
            texts = [c.get("text", "") for c in dumped.get("content", []) if isinstance(c, dict)]
            detail = {"reason": " ".join(texts)[:500]}
        body = dumped.get("structuredContent", dumped.get("content")) if isinstance(dumped, dict) else dumped
        state_change = note.get("state_change") if outcome == "ok" else None
        self.sink.append(
            tool,
            arguments,
            outcome,
            None if body is None else _digest(body),
            _loggable(detail) if detail is not None else None,
            state_change=state_change,
        )
        if state_change is not None and isinstance(self.sink, WriteBehindLog):
            self.sink.flush()  # a change is never reported to the agent before it is logged
        return result


class WriteBehindLog:
    """An `EventSink` that stores events in batches (group commit), in call order.

    Inside an event loop, an appended event waits up to `linger` seconds for others and they are
    stored in one transaction, on the loop, so a read's response does not wait for the database.
    `flush()` stores everything pending now; the server flushes before answering any call that
    changed state, so no change reaches the agent unlogged; `close()` flushes. Outside an event
    loop every event is stored at once. If storing fails, every later `append` and `flush`
    raises the failure (the server fails closed). A hard kill can lose the last `linger`
    seconds of read-only calls.
    """

    def __init__(self, log: Any, *, linger: float = 0.005, batch: int = 500) -> None:
        self.log = log
        self._linger = linger
        self._batch = batch
        self._pending: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._timer: asyncio.TimerHandle | None = None
        self._failure: BaseException | None = None

    def append(
        self,
        tool: str,
        arguments: Mapping[str, Any],
        outcome: str,
        result_digest: str | None,
        detail: Mapping[str, Any] | None = None,
        state_change: Mapping[str, Any] | None = None,
    ) -> None:
        self.check()
        with self._lock:
            self._pending.append(
                {"tool": tool, "arguments": arguments, "outcome": outcome, "result_digest": result_digest,
                 "detail": detail, "state_change": state_change}
            )
            full = len(self._pending) >= self._batch
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if full or loop is None:
            self.flush()
        elif self._timer is None:
            self._timer = loop.call_later(self._linger, self._on_timer)

    def flush(self) -> None:
        """Store every pending event now."""
        with self._lock:
            events, self._pending = self._pending, []
            if events and self._failure is None:
                try:
                    self.log.append_many(events)
                except BaseException as error:  # noqa: BLE001 - kept, and raised on every later call
                    self._failure = error
        self.check()

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self.flush()

    def __enter__(self) -> WriteBehindLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _on_timer(self) -> None:
        self._timer = None
        with contextlib.suppress(StoreError):  # recorded; the next call fails closed
            self.flush()

    def check(self) -> None:
        """Raise `StoreError` if storing has failed (then no further call may run)."""
        if self._failure is not None:
            raise StoreError(f"the event log stopped storing events ({self._failure}); the server refuses further calls")


def _digest(body: Any) -> str:
    try:
        return sha256_json(body)
    except UnicodeEncodeError:  # an unpaired surrogate echoed back from the caller's input
        return sha256_json(_loggable(body))


def _loggable(value: Any) -> Any:
    """`value` with any string that cannot be UTF-8 encoded (lone surrogates) made printable."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "backslashreplace").decode("utf-8")
        return value
    if isinstance(value, dict):
        return {_loggable(str(k)): _loggable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_loggable(v) for v in value]
    return value


def build_seat_server(
    projection: Path,
    config: ToolConfig,
    *,
    workspace: Path | None = None,
    event_log: EventSink | None = None,
    state: SeatState | None = None,
) -> MCPServer:
    """An MCP server acting as `config.seat` over the materialized `projection`.

    `workspace` (a folder) makes `write_file` possible where `config` permits it; `state` lets a
    caller supply (and later inspect) the run's mutable state; `event_log` receives every call.
    """
    view = SeatView(projection, config, workspace=workspace, state=state)
    return MCPServer(
        f"worldkit-seat-{view.seat}",
        instructions=INSTRUCTIONS.format(seat=view.seat, person=view.person, date=view.date),
        log_level="WARNING",
        tools=[_tool(view, spec) for spec in served_tools(view)],
        middleware=[_LogCalls(event_log)] if event_log is not None else None,
    )

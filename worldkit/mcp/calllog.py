"""Logging every MCP tool call to the event log: one middleware for every worldkit server.

A tool body records what it learned about the call (outcome `denied` and why, or the state
change it made) in `CALL_NOTE`; the middleware appends one event per `tools/call` — reads,
searches, refusals and errors alike — with the digest of what the agent was shown.

Write-ahead: the event is stored (committed) before the result goes back to the client, so
every answer an agent received is in the log, even if the server is killed the next instant.
If storing fails, the call fails with the store's error rather than answering unlogged. A tool
body that must log inside its own critical section (the organizer logs a move before it drops
the move's journal; the seat logs a mutation after staging it and before applying it) appends
itself — `CALL_NOTE["log_now"](body, state_change)` — or sets `CALL_NOTE["logged"]`; the
middleware then adds nothing for that call.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from worldkit.canon import sha256_json
from worldkit.mcp.confine import bounded_arguments

if TYPE_CHECKING:
    from worldkit.store.eventlog import EventSink

__all__ = ["CALL_NOTE", "CallLogMiddleware", "loggable", "result_digest"]

# What the tool body learned about the call, read back by the middleware after the call.
CALL_NOTE: ContextVar[dict[str, Any] | None] = ContextVar("worldkit_call_note", default=None)


class CallLogMiddleware:
    """Appends every tools/call to the event log with its outcome and the digest of its result."""

    def __init__(self, sink: EventSink) -> None:
        self.sink = sink
        # `record` (EventLog) stores the same event without building an Event to return.
        self._append = getattr(sink, "record", None) or sink.append

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        if ctx.method != "tools/call":
            return await call_next(ctx)
        params = ctx.params or {}
        tool = str(params.get("name", ""))[:200] or "(none)"
        arguments = loggable(params.get("arguments") or {})
        if not isinstance(arguments, dict):
            arguments = {"_not_an_object": arguments}
        # The tool body may log the call itself with exactly these arguments (see the docstring).
        note: dict[str, Any] = {"tool": tool, "arguments": arguments}

        def log_now(body: Any, state_change: dict[str, Any] | None) -> None:
            """Log this call as answered `ok` with `body` now (write-ahead, inside the tool's critical
            section); the middleware then adds nothing."""
            self._append(tool, arguments, "ok", None if body is None else _digest(body), None,
                         state_change=state_change)  # fmt: skip
            note["logged"] = True

        note["log_now"] = log_now
        token = CALL_NOTE.set(note)
        try:
            result = await call_next(ctx)
        except Exception as error:
            if not note.get("logged"):
                self._append(tool, bounded_arguments(loggable(note.get("arguments", arguments))), "error", None,
                             {"reason": type(error).__name__})  # fmt: skip
            raise
        finally:
            CALL_NOTE.reset(token)
        if note.get("logged"):
            return result
        if "answer" in note and result is note["answer"] and note.get("outcome") == "ok":
            # The tool body's own finished answer, passed through untouched: its body is known.
            self._append(tool, arguments, "ok", _digest(note["body"]), None, state_change=note.get("state_change"))
            return result
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
        if outcome != "ok":
            # A refused call's arguments are logged bounded (a long string as its size and digest),
            # whether the tool refused them or the SDK's argument validation did before any tool ran.
            arguments = bounded_arguments(loggable(note.get("arguments", arguments)))
        # Durable before the result is returned: the client never sees an unlogged answer.
        self._append(
            tool,
            arguments,
            outcome,
            None if body is None else _digest(body),
            loggable(detail) if detail is not None else None,
            state_change=state_change,
        )
        return result


def result_digest(body: Any) -> str:
    """The digest the middleware logs for a result body (structured content or content)."""
    return _digest(body)


def _digest(body: Any) -> str:
    try:
        return sha256_json(body)
    except UnicodeEncodeError:  # an unpaired surrogate echoed back from the caller's input
        return sha256_json(loggable(body))


def loggable(value: Any) -> Any:
    """`value` with any string that cannot be UTF-8 encoded (lone surrogates) made printable."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "backslashreplace").decode("utf-8")
        return value
    if isinstance(value, dict):
        return {loggable(str(k)): loggable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [loggable(v) for v in value]
    return value

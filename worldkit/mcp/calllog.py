"""Logging every MCP tool call to the event log: one middleware for every worldkit server.

A tool body records what it learned about the call (outcome `denied` and why, or the state
change it made) in `CALL_NOTE`; the middleware appends one event per `tools/call` — reads,
searches, refusals and errors alike — with the digest of what the agent was shown.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from contextvars import ContextVar
from typing import Any

from pydantic import BaseModel

from worldkit.canon import sha256_json
from worldkit.errors import StoreError
from worldkit.store.eventlog import EventSink

__all__ = ["CALL_NOTE", "CallLogMiddleware", "WriteBehindLog", "loggable"]

# What the tool body learned about the call, read back by the middleware after the call.
CALL_NOTE: ContextVar[dict[str, Any] | None] = ContextVar("worldkit_call_note", default=None)


class CallLogMiddleware:
    """Appends every tools/call to the event log with its outcome and the digest of its result."""

    def __init__(self, sink: EventSink) -> None:
        self.sink = sink

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        if ctx.method != "tools/call":
            return await call_next(ctx)
        params = ctx.params or {}
        tool = str(params.get("name", ""))[:200] or "(none)"
        arguments = loggable(params.get("arguments") or {})
        if not isinstance(arguments, dict):
            arguments = {"_not_an_object": arguments}
        if isinstance(self.sink, WriteBehindLog):
            self.sink.check()  # fail closed before the tool runs, not after it changed something
        note: dict[str, Any] = {}
        token = CALL_NOTE.set(note)
        try:
            result = await call_next(ctx)
        except Exception as error:
            self.sink.append(tool, arguments, "error", None, {"reason": type(error).__name__})
            raise
        finally:
            CALL_NOTE.reset(token)
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
        if outcome != "ok" and "arguments" in note:  # the server's bounded form of a refused call's arguments
            arguments = loggable(note["arguments"])
        self.sink.append(
            tool,
            arguments,
            outcome,
            None if body is None else _digest(body),
            loggable(detail) if detail is not None else None,
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

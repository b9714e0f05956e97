"""Screen one JSON-RPC line before the SDK sees it: every line gets an answer or a refusal.

The SDK hands a line it cannot parse to the server as an exception item and answers nothing, so a
client that sent it waits forever; and a `tools/call` whose id is `null` or an object parses as a
notification — the tool runs (and is logged) but no answer is sent. Here such a line is refused
with a JSON-RPC error (`-32700` parse error, `-32600` invalid request), echoing the request's id
when it has a valid one (a string or an integer) and `null` otherwise, and the refusal is logged
on the server's log. A line that passes is handed on unchanged, so the SDK parses exactly what the
client sent.

Refused: not UTF-8, not JSON, a lone surrogate, an integer beyond Python's digit limit, nesting
deeper than `MAX_DEPTH`, a batch (an array: MCP has no batches since 2025-06-18), anything but an
object, `jsonrpc` other than `"2.0"`, an id that is not a string or integer, a method that is not
a string, a request method sent without an id (it would run with no answer: only logged, as
JSON-RPC forbids answering a notification), and a message that is neither a request, a
notification nor a response.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

__all__ = ["INVALID_REQUEST", "MAX_DEPTH", "PARSE_ERROR", "Refusal", "screen", "unparsed"]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
MAX_DEPTH = 64
"""Deepest nesting of arrays and objects accepted in one message (MCP messages need a handful)."""

_log = logging.getLogger("worldkit.mcp.jsonrpc")


@dataclass(frozen=True)
class Refusal:
    """A line refused before the server saw it, and the JSON-RPC error that answers it."""

    code: int
    reason: str
    id: str | int | None
    silent: bool = False
    """A notification (no id): JSON-RPC forbids answering it, so the refusal is only logged."""

    def answer(self) -> bytes:
        """The error response, one JSON line."""
        body = {"jsonrpc": "2.0", "id": self.id, "error": {"code": self.code, "message": self.reason}}
        return (json.dumps(body, ensure_ascii=True) + "\n").encode("ascii")

    def log(self) -> None:
        _log.warning("refused a JSON-RPC line (id %r): %s", self.id, self.reason)


def _depth(value: Any) -> int:
    """Nesting depth of arrays and objects, without recursion."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, dict):
            deepest = max(deepest, level)
            stack.extend((v, level + 1) for v in node.values())
        elif isinstance(node, list):
            deepest = max(deepest, level)
            stack.extend((v, level + 1) for v in node)
    return deepest


def _has_lone_surrogate(value: Any) -> bool:
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            try:
                node.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


def _valid_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _nesting_bound(text: str) -> bool:
    """Whether brackets outside strings ever nest deeper than MAX_DEPTH (checked before parsing, so
    a line of 100,000 `[` is refused without the parser's recursion)."""
    level = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            level += 1
            if level > MAX_DEPTH:
                return False
        elif char in "]}":
            level -= 1
    return True


def screen(line: bytes) -> Refusal | None:
    """None if `line` may go to the SDK, else the refusal that answers it (see the module doc)."""
    if not line.strip():
        return None  # a blank line is not a message (the SDK skips it too)
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return Refusal(PARSE_ERROR, "Parse error: the line is not UTF-8", None)
    if not _nesting_bound(text):
        return Refusal(INVALID_REQUEST, f"Invalid Request: nested deeper than {MAX_DEPTH} levels", None)
    try:
        message = json.loads(text)
    except RecursionError:
        return Refusal(INVALID_REQUEST, f"Invalid Request: nested deeper than {MAX_DEPTH} levels", None)
    except ValueError as error:  # not JSON, or an integer beyond the digit limit
        return Refusal(PARSE_ERROR, f"Parse error: {str(error)[:200]}", None)
    if _has_lone_surrogate(message):
        return Refusal(PARSE_ERROR, "Parse error: a string holds a lone surrogate (not Unicode text)", None)
    if _depth(message) > MAX_DEPTH:
        return Refusal(INVALID_REQUEST, f"Invalid Request: nested deeper than {MAX_DEPTH} levels", None)
    if isinstance(message, list):
        return Refusal(INVALID_REQUEST, "Invalid Request: batches (JSON arrays) are not supported; send one message a line", None)
    if not isinstance(message, dict):
        return Refusal(INVALID_REQUEST, "Invalid Request: a message is a JSON object", None)
    rid = message.get("id")
    echo = rid if _valid_id(rid) else None
    if message.get("jsonrpc") != "2.0":
        return Refusal(INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"', echo)
    if "id" in message and not _valid_id(rid):
        return Refusal(INVALID_REQUEST, "Invalid Request: an id is a string or an integer (not null, an object, "
                                        "an array, a boolean or a fraction)", None)  # fmt: skip
    if "method" in message:
        if not isinstance(message["method"], str):
            return Refusal(INVALID_REQUEST, 'Invalid Request: "method" must be a string', echo)
        if "params" in message and not isinstance(message["params"], (dict, list)):
            return Refusal(INVALID_REQUEST, 'Invalid Request: "params" must be an object', echo)
        if "id" not in message and not message["method"].startswith("notifications/"):
            # A request sent as a notification would run with no answer to carry its result.
            return Refusal(INVALID_REQUEST, f"Invalid Request: {message['method']} sent without an id "
                                            "(as a notification); it was not run", None, silent=True)  # fmt: skip
        return None
    if "id" in message and ("result" in message or "error" in message):
        return None  # a response (to a server-initiated request)
    return Refusal(INVALID_REQUEST, "Invalid Request: neither a request, a notification nor a response", echo)


def unparsed(line: bytes, error: Exception) -> Refusal:
    """The refusal of a line that passed the screen but that the SDK's message parser refused."""
    try:
        rid = json.loads(line).get("id")
    except (ValueError, AttributeError):
        rid = None
    first = str(error).splitlines()[0][:200] if str(error) else type(error).__name__
    return Refusal(INVALID_REQUEST, f"Invalid Request: {first}", rid if _valid_id(rid) else None)

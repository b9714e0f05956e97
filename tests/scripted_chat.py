"""A scripted OpenAI-compatible endpoint on 127.0.0.1, for tests (a thread with http.server).

`ScriptedChat(answer)` serves `POST /v1/chat/completions`; `answer(body, n)` returns
`(status, json_or_text)` for the n-th request (0-based). Every request body is kept in
`requests`. Use as a context manager; `url` is the base URL to pass as `--base-url`.

When a chat request asks for `stream` (Pi does), the same completion is sent as
`chat.completion.chunk` server-sent events: the message, each tool call, the finish reason, then
the usage, then `[DONE]`.

`ScriptedChat(responses=answer)` also serves `POST /v1/responses` (the Responses API, which
Codex CLI speaks): `answer(body, n)` returns `(status, response)` where `response` is a
Responses API response object (`response(...)` builds one); when the request asks for
`stream`, it is sent as the API's server-sent events (`response.created`, each output item's
`added` / delta / `done` events, `response.completed` carrying the whole response and usage).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Answer = Callable[[dict[str, Any], int], tuple[int, Any]]


def completion(content: str | None = None, tool_calls: list[dict[str, Any]] | None = None, tokens: int = 10) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}], "usage": {"total_tokens": tokens}}


def tool_call(call_id: str, name: str, arguments: dict[str, Any] | str) -> dict[str, Any]:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return completion(tool_calls=[{"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}])


def response(*output: dict[str, Any], tokens_in: int = 10, tokens_out: int = 5, response_id: str = "resp_1") -> dict[str, Any]:
    """A completed Responses API response holding `output` items (`message`, `function_call`)."""
    items = [{**item, "id": item.get("id") or f"{item['type'][:3]}_{response_id}_{i}", "status": "completed"}
             for i, item in enumerate(output)]
    usage = {"input_tokens": tokens_in, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": tokens_out,
             "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": tokens_in + tokens_out}
    return {"id": response_id, "object": "response", "created_at": 0, "status": "completed", "model": "scripted",
            "output": items, "usage": usage}


def output_text(text: str) -> dict[str, Any]:
    """A Responses API assistant message item."""
    return {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text, "annotations": []}]}


def function_call(call_id: str, name: str, arguments: dict[str, Any], namespace: str | None = None) -> dict[str, Any]:
    """A Responses API function call item (of a tool in `namespace`, when given)."""
    item = {"type": "function_call", "call_id": call_id, "name": name, "arguments": json.dumps(arguments)}
    return item if namespace is None else {**item, "namespace": namespace}


def tool_names(body: dict[str, Any]) -> set[str]:
    """The tools a Responses API request offers: `name`, or `namespace.name` for a namespace's tools."""
    names = set()
    for tool in body.get("tools", []):
        if tool.get("type") == "namespace":
            names |= {f"{tool['name']}.{inner['name']}" for inner in tool.get("tools", [])}
        elif tool.get("name"):
            names.add(tool["name"])
    return names


def response_events(reply: dict[str, Any]) -> list[dict[str, Any]]:
    """The server-sent events of a streamed Responses API response, in the API's order."""
    events: list[dict[str, Any]] = [{"type": "response.created", "response": {**reply, "status": "in_progress", "output": []}},
                                    {"type": "response.in_progress", "response": {**reply, "status": "in_progress", "output": []}}]
    for index, item in enumerate(reply["output"]):
        at = {"item_id": item["id"], "output_index": index}
        if item["type"] == "message":
            events.append({"type": "response.output_item.added", "output_index": index,
                           "item": {**item, "status": "in_progress", "content": []}})
            for part_index, part in enumerate(item["content"]):
                events += [
                    {"type": "response.content_part.added", **at, "content_index": part_index, "part": {**part, "text": ""}},
                    {"type": "response.output_text.delta", **at, "content_index": part_index, "delta": part["text"]},
                    {"type": "response.output_text.done", **at, "content_index": part_index, "text": part["text"]},
                    {"type": "response.content_part.done", **at, "content_index": part_index, "part": part},
                ]
        elif item["type"] == "function_call":
            events += [
                {"type": "response.output_item.added", "output_index": index, "item": {**item, "status": "in_progress", "arguments": ""}},
                {"type": "response.function_call_arguments.delta", **at, "delta": item["arguments"]},
                {"type": "response.function_call_arguments.done", **at, "arguments": item["arguments"]},
            ]
        else:
            events.append({"type": "response.output_item.added", "output_index": index, "item": item})
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    events.append({"type": "response.completed", "response": reply})
    return [{**event, "sequence_number": n} for n, event in enumerate(events)]


def completion_chunks(reply: dict[str, Any]) -> list[dict[str, Any]]:
    """The `chat.completion.chunk`s of a streamed chat completion (one choice)."""
    choice = reply["choices"][0]
    message, head = choice["message"], {"id": reply.get("id", "chatcmpl-1"), "object": "chat.completion.chunk",
                                        "created": 0, "model": reply.get("model", "scripted")}  # fmt: skip
    chunks = [{**head, "choices": [{"index": 0, "delta": {"role": "assistant", "content": message.get("content") or ""},
                                    "finish_reason": None}]}]  # fmt: skip
    for i, call in enumerate(message.get("tool_calls") or []):
        chunks.append({**head, "choices": [{"index": 0, "delta": {"tool_calls": [{"index": i, **call}]}, "finish_reason": None}]})
    finish = choice.get("finish_reason") or ("tool_calls" if message.get("tool_calls") else "stop")
    chunks.append({**head, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    if reply.get("usage"):
        chunks.append({**head, "choices": [], "usage": reply["usage"]})
    return chunks


class ScriptedChat:
    def __init__(self, answer: Answer | None = None, *, responses: Answer | None = None) -> None:
        self.answer = answer
        self.responses = responses
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        script = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server API
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with script._lock:
                    n = len(script.requests)
                    script.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
                status, reply, kind = 404, {"error": "not found"}, "application/json"
                if self.path == "/v1/chat/completions" and script.answer is not None:
                    status, reply = script.answer(body, n)
                    if status == 200 and body.get("stream") and isinstance(reply, dict):
                        kind = "text/event-stream"
                        reply = "".join(f"data: {json.dumps(c)}\n\n" for c in completion_chunks(reply)) + "data: [DONE]\n\n"
                elif self.path == "/v1/responses" and script.responses is not None:
                    status, reply = script.responses(body, n)
                    if status == 200 and body.get("stream"):
                        kind = "text/event-stream"
                        reply = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in response_events(reply))
                data = (json.dumps(reply) if not isinstance(reply, str) else reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/v1"

    def __enter__(self) -> ScriptedChat:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def bodies(self) -> list[dict[str, Any]]:
        return [r["body"] for r in self.requests]


def free_port() -> int:
    """A port nothing listens on (bound, then released)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]

"""A scripted OpenAI-compatible chat endpoint on 127.0.0.1, for tests (a thread with http.server).

`ScriptedChat(answer)` serves `POST /v1/chat/completions`; `answer(body, n)` returns
`(status, json_or_text)` for the n-th request (0-based). Every request body is kept in
`requests`. Use as a context manager; `url` is the base URL to pass as `--base-url`.
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


class ScriptedChat:
    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        script = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server API
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with script._lock:
                    n = len(script.requests)
                    script.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
                status, reply = (404, {"error": "not found"}) if self.path != "/v1/chat/completions" else script.answer(body, n)
                data = (json.dumps(reply) if not isinstance(reply, str) else reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
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

"""The seat server over streamable HTTP, closed by default: Host/Origin checks always on, and a bearer
token required on every bind beyond loopback.

The SDK turns its DNS-rebinding protection (Host and Origin checked against an allow-list) on only
when the server binds a loopback name, so `--host 0.0.0.0` served anyone who could reach the port,
from any page a browser had open. Here the protection is always on: loopback names are always
allowed, and a wider bind allows the bound address plus the names given (`--allow-host NAME`).
A bind beyond loopback requires `Authorization: Bearer TOKEN` on every request — the token given
(`--token` or `$WORLDKIT_HTTP_TOKEN`), or one generated and printed once — and prints a warning.
A token given on loopback is required there too. The token is compared in constant time and is
never logged. Every POSTed message is screened as a stdio line is (`worldkit.mcp.jsonrpc_screen`).
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import os
import secrets
from dataclasses import dataclass, field
from typing import Any

from mcp.server.transport_security import TransportSecuritySettings

from worldkit.mcp.jsonrpc_screen import screen

__all__ = ["TOKEN_ENV_VAR", "HttpAccess", "http_access", "is_loopback", "secured_app", "serve_http"]

TOKEN_ENV_VAR = "WORLDKIT_HTTP_TOKEN"
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


def is_loopback(host: str) -> bool:
    """Whether `host` (a name or an address) binds only the loopback interface."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class HttpAccess:
    """Who may talk to the server: the Host/Origin allow-list and the bearer token (if any)."""

    host: str
    port: int
    token: str | None
    """Required on every request when set."""
    generated: bool = False
    """The token was generated here (print it once)."""
    allowed_hosts: list[str] = field(default_factory=list)
    private_network: bool = False
    """The bind is on a network only the task's own containers reach (a docker-compose network), so no
    token is required there; said so when serving."""

    @property
    def loopback(self) -> bool:
        return is_loopback(self.host)

    def security(self) -> TransportSecuritySettings:
        hosts = [f"{name}:*" for name in LOOPBACK_NAMES] + [f"{name}:{self.port}" for name in LOOPBACK_NAMES]
        names = list(self.allowed_hosts)
        if not self.loopback and self.host not in ("0.0.0.0", "::", ""):
            names.append(self.host if ":" not in self.host else f"[{self.host.strip('[]')}]")
        for name in names:
            hosts += [name, f"{name}:{self.port}"]
        origins = [f"http://{name}:*" for name in LOOPBACK_NAMES]
        for name in names:
            origins += [f"http://{name}", f"https://{name}", f"http://{name}:{self.port}", f"https://{name}:{self.port}"]
        return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts,
                                         allowed_origins=origins)  # fmt: skip

    def notices(self) -> list[str]:
        """What to print before serving (stderr): the warning for a wide bind, and a generated token."""
        lines: list[str] = []
        if not self.loopback and self.private_network and self.token is None:
            lines.append(f"WARNING: listening on {self.host}:{self.port} without a bearer token (--private-network: "
                         "only the task's own containers may reach this address); allowed Host names: "
                         f"{', '.join(self.allowed_hosts) or '(the bound address and loopback only)'}")  # fmt: skip
        elif not self.loopback:
            lines.append(f"WARNING: listening on {self.host}:{self.port}, beyond loopback: anyone who can reach "
                         "this port may call the seat's tools with the bearer token; allowed Host names: "
                         f"{', '.join(self.allowed_hosts) or '(the bound address and loopback only)'}")  # fmt: skip
        if self.generated and self.token is not None:
            lines.append(f"bearer token (send `Authorization: Bearer TOKEN` on every request): {self.token}")
        return lines


def http_access(host: str, port: int, *, token: str | None = None, allow_hosts: list[str] | None = None,
                private_network: bool = False) -> HttpAccess:
    """The access rules for a bind: a bind beyond loopback gets a token (the one given, else a new one),
    unless the caller declares the network private (`private_network`: a container network no one
    else reaches); Host/Origin checks stay on either way."""
    given = token or os.environ.get(TOKEN_ENV_VAR) or None
    if given is None and private_network and not is_loopback(host):
        return HttpAccess(host, port, None, False, list(allow_hosts or []), True)
    if given is None and not is_loopback(host):
        return HttpAccess(host, port, secrets.token_urlsafe(32), True, list(allow_hosts or []))
    return HttpAccess(host, port, given, False, list(allow_hosts or []))


class _BearerToken:
    """ASGI middleware: every HTTP request must carry `Authorization: Bearer <token>`."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {
                    "code": -32001, "message": "Unauthorized: send Authorization: Bearer TOKEN (printed by "
                    "`worldkit serve`, or given with --token)"}}).encode()  # fmt: skip
                await send({"type": "http.response.start", "status": 401, "headers": [
                    (b"content-type", b"application/json"), (b"www-authenticate", b'Bearer realm="worldkit"')]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


class _ScreenBody:
    """ASGI middleware: a POSTed JSON-RPC message is screened as a stdio line is
    (`worldkit.mcp.jsonrpc_screen`): one the SDK would drop or run unanswered gets its JSON-RPC
    error (HTTP 400) and is logged; a request sent as a notification is logged, accepted (202) and
    not run. A body over `limit` bytes is handed on untouched (the SDK refuses it by size)."""

    def __init__(self, app: Any, limit: int) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size, more = 0, True
        while more and size <= self.limit:
            message = await receive()
            if message["type"] != "http.request":
                await self.app(scope, _replay(chunks, message, receive), send)
                return
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            more = message.get("more_body", False)
        body = b"".join(chunks)
        refusal = screen(body) if not more and body.strip() else None
        if refusal is None:
            await self.app(scope, _replay(chunks, None, receive, more=more), send)
            return
        refusal.log()
        status, answer = (202, b"") if refusal.silent else (400, refusal.answer())
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json")]})  # fmt: skip
        await send({"type": "http.response.body", "body": answer})


def _replay(chunks: list[bytes], pending: Any, receive: Any, *, more: bool = False) -> Any:
    """A `receive` that hands on what was already read, then the rest of the request."""
    queue: list[Any] = [{"type": "http.request", "body": b"".join(chunks), "more_body": more}]
    if pending is not None:
        queue = [queue[0] | {"more_body": False}, pending] if chunks else [pending]

    async def replayed() -> Any:
        return queue.pop(0) if queue else await receive()

    return replayed


def secured_app(server: Any, access: HttpAccess) -> Any:
    """The server's streamable HTTP app with the Host/Origin checks on, every POSTed message screened
    and, with a token, the bearer check (outermost: nothing is read from an unauthorized client)."""
    from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE

    app = server.streamable_http_app(transport_security=access.security(), host=access.host)
    app = _ScreenBody(app, DEFAULT_MAX_REQUEST_BODY_SIZE)
    return _BearerToken(app, access.token) if access.token is not None else app


def serve_http(server: Any, access: HttpAccess) -> None:
    """Serve until stopped (uvicorn, as the SDK's own `run("streamable-http")` does)."""
    import anyio
    import uvicorn

    config = uvicorn.Config(secured_app(server, access), host=access.host, port=access.port,
                            log_level=server.settings.log_level.lower())  # fmt: skip
    anyio.run(uvicorn.Server(config).serve)

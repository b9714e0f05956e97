"""The seat server over streamable HTTP, closed by default: Host/Origin checks always on, and a bearer
token required on every bind beyond loopback.

The SDK turns its DNS-rebinding protection (Host and Origin checked against an allow-list) on only
when the server binds a loopback name, so `--host 0.0.0.0` served anyone who could reach the port,
from any page a browser had open. Here the protection is always on: loopback names are always
allowed, and a wider bind allows the bound address plus the names given (`--allow-host NAME`).
A bind beyond loopback requires `Authorization: Bearer TOKEN` on every request — the token given
(`--token` or `$WORLDKIT_HTTP_TOKEN`), or one generated and printed once — and prints a warning.
A token given on loopback is required there too. The token is compared in constant time and is
never logged.
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
        if not self.loopback:
            lines.append(f"WARNING: listening on {self.host}:{self.port}, beyond loopback: anyone who can reach "
                         "this port may call the seat's tools with the bearer token; allowed Host names: "
                         f"{', '.join(self.allowed_hosts) or '(the bound address and loopback only)'}")  # fmt: skip
        if self.generated and self.token is not None:
            lines.append(f"bearer token (send `Authorization: Bearer TOKEN` on every request): {self.token}")
        return lines


def http_access(host: str, port: int, *, token: str | None = None, allow_hosts: list[str] | None = None) -> HttpAccess:
    """The access rules for a bind: a bind beyond loopback gets a token (the one given, else a new one)."""
    given = token or os.environ.get(TOKEN_ENV_VAR) or None
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


def secured_app(server: Any, access: HttpAccess) -> Any:
    """The server's streamable HTTP app with the Host/Origin checks on and, with a token, the bearer check."""
    app = server.streamable_http_app(transport_security=access.security(), host=access.host)
    return _BearerToken(app, access.token) if access.token is not None else app


def serve_http(server: Any, access: HttpAccess) -> None:
    """Serve until stopped (uvicorn, as the SDK's own `run("streamable-http")` does)."""
    import anyio
    import uvicorn

    config = uvicorn.Config(secured_app(server, access), host=access.host, port=access.port,
                            log_level=server.settings.log_level.lower())  # fmt: skip
    anyio.run(uvicorn.Server(config).serve)

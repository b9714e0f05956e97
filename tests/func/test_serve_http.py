"""The seat server over streamable HTTP, through an in-process ASGI transport (no port), both modes."""

from __future__ import annotations

from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.unit.mcp.seat_support import Run, project

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_http_transport_serves_and_logs(tmp_path: Path) -> None:
    run = Run(project(tmp_path, "S1"))
    app = run.server.streamable_http_app()
    seen = {}
    async with run.server.session_manager.run():
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as http:
            for mode in ("auto", "legacy"):
                url = "http://127.0.0.1:8000/mcp"
                async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
                    tools = [t.name for t in (await client.list_tools()).tools]
                    read = await client.call_tool("read_file", {"path": "Shared/SOPs/SOP-001.md"})
                    refused = await client.call_tool("read_file", {"path": "%2e%2e%2fmanifest.json"})
                    seen[mode] = (client.protocol_version, tools, read.structured_content["text"], refused.is_error)
    assert seen["auto"][0] != seen["legacy"][0] == "2025-11-25"
    for _, tools, text, refused in seen.values():
        assert len(tools) == 10 and text == "SOP v1\n" and refused
    assert [(e.tool, e.outcome) for e in run.events()] == [("read_file", "ok"), ("read_file", "denied")] * 2
    run.close()


INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


async def _post(app, base: str, headers: dict[str, str], run: Run) -> httpx2.Response:
    async with run.server.session_manager.run():
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url=base) as http:
            return await http.post("/mcp", json=INITIALIZE, headers={**HEADERS, **headers})


async def test_a_bind_beyond_loopback_needs_the_bearer_token_and_an_allowed_host(tmp_path: Path) -> None:
    from worldkit.mcp.http import http_access, secured_app

    run = Run(project(tmp_path, "S1"))
    access = http_access("0.0.0.0", 8000, allow_hosts=["seat.example"])  # noqa: S104 - bound nowhere: in-process
    assert access.token is not None and access.generated and not access.loopback
    assert any("WARNING" in line for line in access.notices()) and any(access.token in line for line in access.notices())
    good = {"authorization": f"Bearer {access.token}"}
    cases = [
        ("http://seat.example:8000", {}, 401),                                     # no token
        ("http://seat.example:8000", {"authorization": "Bearer wrong"}, 401),      # wrong token
        ("http://seat.example:8000", {"authorization": access.token}, 401),        # not a bearer header
        ("http://evil.example:8000", good, 421),                                   # Host not allowed (rebinding)
        ("http://seat.example:8000", {**good, "origin": "http://evil.example"}, 403),  # Origin not allowed
        ("http://seat.example:8000", good, 200),
        ("http://127.0.0.1:8000", good, 200),
    ]  # fmt: skip
    got = []
    for base, headers, _ in cases:
        app = secured_app(run.server, access)
        got.append((await _post(app, base, headers, run)).status_code)
    assert got == [status for _, _, status in cases]
    run.close()


async def test_a_declared_private_network_needs_no_token_but_keeps_the_host_checks(tmp_path: Path, monkeypatch) -> None:
    """A Harbor seat container (`--private-network --allow-host seat`): the agent's container calls it
    by the service name without a token; any other Host is still refused, and the bind is announced."""
    from worldkit.mcp.http import TOKEN_ENV_VAR, http_access, secured_app

    monkeypatch.delenv(TOKEN_ENV_VAR, raising=False)
    run = Run(project(tmp_path, "S1"))
    access = http_access("0.0.0.0", 8000, allow_hosts=["seat"], private_network=True)  # noqa: S104 - in-process
    assert access.token is None and not access.generated
    assert any("without a bearer token (--private-network" in line for line in access.notices())
    assert (await _post(secured_app(run.server, access), "http://seat:8000", {}, run)).status_code == 200
    assert (await _post(secured_app(run.server, access), "http://evil.example:8000", {}, run)).status_code == 421
    monkeypatch.setenv(TOKEN_ENV_VAR, "given")  # a token given still binds, private network or not
    assert http_access("0.0.0.0", 8000, private_network=True).token == "given"  # noqa: S104
    run.close()


async def test_loopback_needs_no_token_unless_one_is_given_and_checks_hosts(tmp_path: Path, monkeypatch) -> None:
    from worldkit.mcp.http import TOKEN_ENV_VAR, http_access, secured_app

    monkeypatch.delenv(TOKEN_ENV_VAR, raising=False)
    run = Run(project(tmp_path, "S1"))
    open_access = http_access("127.0.0.1", 8000)
    assert open_access.token is None and open_access.notices() == []
    assert (await _post(secured_app(run.server, open_access), "http://127.0.0.1:8000", {}, run)).status_code == 200
    assert (await _post(secured_app(run.server, open_access), "http://evil.example", {}, run)).status_code == 421
    monkeypatch.setenv(TOKEN_ENV_VAR, "s3cret")
    closed = http_access("127.0.0.1", 8000)
    assert closed.token == "s3cret" and not closed.generated
    assert (await _post(secured_app(run.server, closed), "http://127.0.0.1:8000", {}, run)).status_code == 401
    ok = await _post(secured_app(run.server, closed), "http://127.0.0.1:8000", {"authorization": "Bearer s3cret"}, run)
    assert ok.status_code == 200
    run.close()


def test_token_and_allow_host_are_refused_without_http(capsys) -> None:
    from worldkit._cli.main import run as cli

    assert cli(["serve", "--world", "pharmaco_demo", "--rev", "r1", "--date", "2026-03-02", "--seat", "EMP-QA-001",
                "--token", "x"]) == 2  # fmt: skip
    assert "--token, --allow-host and --private-network apply to --transport http" in capsys.readouterr().err


async def test_over_http_every_malformed_message_gets_its_json_rpc_error_and_runs_nothing(tmp_path: Path) -> None:
    import json

    from tests.unit.mcp.test_jsonrpc_screen import MALFORMED
    from worldkit.mcp.http import http_access, secured_app

    run = Run(project(tmp_path, "S1"))
    app = secured_app(run.server, http_access("127.0.0.1", 8000))
    got, want = [], []
    async with run.server.session_manager.run():
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as http:
            for _name, line, code, rid in MALFORMED:
                response = await http.post("/mcp", content=line, headers=HEADERS)
                body = response.json()
                got.append((response.status_code, body["id"], body["error"]["code"]))
                want.append((400, rid, code))
            notification = json.dumps({"jsonrpc": "2.0", "method": "tools/call",
                                       "params": {"name": "read_file", "arguments": {"path": "Shared/SOPs/SOP-001.md"}}})
            quiet = await http.post("/mcp", content=notification, headers=HEADERS)
            ok = await http.post("/mcp", json=INITIALIZE, headers=HEADERS)
    assert got == want
    assert (quiet.status_code, quiet.content) == (202, b"")
    assert ok.status_code == 200
    assert run.events() == []  # nothing refused reached a tool or the log
    run.close()

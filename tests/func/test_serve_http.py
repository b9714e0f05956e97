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

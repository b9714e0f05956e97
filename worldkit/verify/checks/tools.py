"""Tool-surface conformance: the seat's MCP server lists exactly what the frozen projection holds."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from worldkit.check_result import CheckResult, Item
from worldkit.errors import WorldkitError
from worldkit.materialize.manifest import Manifest
from worldkit.verify.checks import BaseCheck, register
from worldkit.verify.context import ComponentMissing, VerifyContext

_PAGE = 500


def default_server_factory() -> Any:
    try:
        from worldkit.mcp.server import build_seat_server
    except ImportError as error:
        raise ComponentMissing(f"the MCP seat server is not installed ({error.name} missing)") from None
    return build_seat_server


def tool_config(manifest: Manifest, bundle: dict[str, Any]) -> Any:
    """The read-only tool configuration a server over this projection acts under."""
    from worldkit.overlay.toolconfig import ToolConfig

    inputs = manifest.inputs
    return ToolConfig(
        world=inputs.world, rev=inputs.rev, date=inputs.date, seat=inputs.seat, person=inputs.person,
        surfaces=sorted({server["surface"] for server in bundle["servers"]}),
    )


async def _pages(client: Any, tool: str, key: str, **args: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    offset: int | None = 0
    while offset is not None:
        result = await client.call_tool(tool, {**args, "offset": offset, "limit": _PAGE})
        if result.is_error:
            raise RuntimeError(f"{tool} failed: {result.content}")
        body = result.structured_content or {}
        found += body.get(key, [])
        offset = body.get("next_offset")
    return found


async def _unvalidated(name: str, result: Any) -> None:
    """Stands in for the client's re-validation of a tool result against the tool's output schema."""


async def _served(server: Any) -> dict[str, Any]:
    from mcp import Client

    async with Client(server) as client:
        # What is compared is what the listings hold (a missing or malformed field fails the
        # comparison or the check); that results also match the tools' output schemas is not
        # this check's claim, and the client's JSON-schema pass over some 2,000 listed entries per
        # seat cost more than the rest of the check.
        client.session.validate_tool_result = _unvalidated  # type: ignore[method-assign]
        tools = sorted(t.name for t in (await client.list_tools()).tools)
        files = await _pages(client, "list_files", "entries") if "list_files" in tools else []
        records = await _pages(client, "query_records", "records") if "query_records" in tools else []
        messages = await _pages(client, "list_messages", "messages") if "list_messages" in tools else []
    return {"tools": tools, "files": files, "records": records, "messages": messages}


def surface_diff(served: dict[str, Any], frozen: Manifest, root: Path) -> list[tuple[str, str, str | None, str | None]]:
    """(kind, locator, expected, actual) for every difference between server and projection."""
    diffs: list[tuple[str, str, str | None, str | None]] = []
    want_files = {e.path[len("files/"):]: (e.size, e.sha256) for e in frozen.files if e.path.startswith("files/")}
    got_files = {f["path"]: (f["size"], f["sha256"]) for f in served["files"]}
    for path in sorted(set(want_files) | set(got_files)):
        want, got = want_files.get(path), got_files.get(path)
        if want != got:
            kind = "not-served" if got is None else "extra-served" if want is None else "served-differs"
            diffs.append((kind, f"files/{path}", want and want[1], got and got[1]))
    want_records = sorted(e.source for e in frozen.files if e.surface == "records" and e.path != "records/_relations.json")
    got_records = sorted(r["id"] for r in served["records"])
    for rid in sorted(set(want_records) ^ set(got_records)):
        diffs.append(("not-served" if rid in want_records else "extra-served", f"records:{rid}", None, None))
    want_messages = {e.source for e in frozen.files if e.surface == "mail"}
    for entry in frozen.files:
        if entry.surface == "chat" and (root / entry.path).is_file():
            lines = (root / entry.path).read_text(encoding="utf-8").splitlines()
            want_messages |= {json.loads(line)["id"] for line in lines if line.strip()}
    got_messages = {m["id"] for m in served["messages"]}
    for mid in sorted(want_messages ^ got_messages):
        diffs.append(("not-served" if mid in want_messages else "extra-served", f"messages:{mid}", None, None))
    bundle = json.loads((root / "tools.json").read_bytes()) if (root / "tools.json").is_file() else {"servers": []}
    promised = sorted(t["name"] for s in bundle["servers"] for t in s["tools"])
    if promised != served["tools"]:
        diffs.append(("tools-differ", "tools.json", ",".join(promised), ",".join(served["tools"])))
    return diffs


@register
class ToolSurface(BaseCheck):
    id = "tool-surface"
    cost = 3
    purpose = "Each seat's MCP server lists exactly the projection's files, records, messages and tools."
    fix = "The server serves something other than the staged projection: start it over the verified projection and fix the server's listing."

    def run(self, ctx: VerifyContext) -> CheckResult:
        factory = ctx.server_factory or default_server_factory()
        rev = ctx.latest_rev
        items: list[Item] = []
        servers = 0
        for key, frozen in sorted(ctx.readable.items()):
            if key[0] != rev:
                continue
            try:
                built = ctx.rebuild(key)
            except WorldkitError:
                continue  # reported by projection-rebuild
            bundle = json.loads(built.read("tools.json"))
            try:
                served = built.memo.get("served") if ctx.server_factory is None else None
                if served is None:
                    served = asyncio.run(_served(factory(built.root, tool_config(built.manifest, bundle))))
                    if ctx.server_factory is None:
                        built.memo["served"] = served  # what the default server lists depends on the tree only
            except WorldkitError as error:
                items.append(Item(kind="server-refused", rev=key[0], date=key[1], seat=key[2], detail=error.message))
                continue
            servers += 1
            for kind, locator, expected, actual in surface_diff(served, frozen, built.root):
                items.append(Item(kind=kind, path=locator, rev=key[0], date=key[1], seat=key[2],
                                  expected=expected, actual=actual))
        if servers == 0 and not items:
            return self.skip("no frozen projection of the latest revision to serve")
        return self.outcome(items, servers=servers)

"""`worldkit serve --overlay` serves a task's candidate package; its run replays from the staged package."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.fixtures.overlays.paths import TRIAGE
from worldkit._cli.main import run as cli

FILLED = "# Triage\n\nSOP checked: SOP-001\nNeeds revision (yes/no): yes\n"


def test_overlay_run_is_served_confined_and_replayed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, store = tmp_path / "staged", f"sqlite:///{tmp_path / 'store.db'}"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "worldkit", "serve", "--overlay", str(TRIAGE), "--out", str(out), "--store", store, "--run-id", "ov"],
        env={"PYTHONPATH": os.pathsep.join(sys.path)},
        cwd=str(tmp_path),
    )

    async def session() -> dict:
        async with Client(params) as client:
            return {
                "tools": sorted(t.name for t in (await client.list_tools()).tools),
                "seed": (await client.call_tool("read_file", {"path": "workspace/triage.md"})).structured_content,
                "write": (await client.call_tool("write_file", {"path": "triage.md", "content": FILLED})).structured_content,
                "refused": (await client.call_tool("write_file", {"path": "notes.md", "content": "x"})).content[0].text,
            }

    seen = anyio.run(session)
    assert "query_records" in seen["tools"] and "list_messages" not in seen["tools"]  # surfaces: files, records
    assert seen["seed"]["text"].startswith("# Triage")
    assert seen["write"]["path"] == "workspace/triage.md"
    assert "writing 'notes.md' is not allowed: the task permits writing only triage.md in the workspace" in seen["refused"]
    assert (out / "workspace" / "triage.md").read_text() == FILLED
    assert (out / "package" / "candidate" / "workspace" / "triage.md").read_text() != FILLED  # pre-task kept
    capsys.readouterr()
    argv = ["log", "replay", "ov", "--store", store]
    assert cli([*argv, "--from", str(out / "package" / "candidate"), "--workspace", str(out / "workspace")]) == 0
    assert cli([*argv, "--overlay", str(TRIAGE)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and lines[0] == lines[1]
    assert lines[0].startswith("ok: run ov: 1 state change of 3 events replayed; post-task state digest ")

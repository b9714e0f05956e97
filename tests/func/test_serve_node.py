"""A client that is not Python: the TypeScript MCP SDK (tests/node) drives `worldkit serve` over stdio.

Needs `tests/node/install.sh` (npm ci from the lock file) to have run; otherwise the test is skipped,
and under CI=true it fails instead.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.builders import WorldSpec
from worldkit.store import Store, read_events

NODE_DIR = Path(__file__).resolve().parents[1] / "node"


def _node_or_skip() -> str:
    node = shutil.which("node")
    if node is None:
        reason = "node is not installed"
    elif not (NODE_DIR / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
        reason = f"the TypeScript SDK is not installed: run {NODE_DIR / 'install.sh'}"
    else:
        return node
    if os.environ.get("CI") == "true":
        pytest.fail(reason + " (CI=true requires it)")
    pytest.skip(reason)


def test_typescript_sdk_client_lists_reads_and_is_refused(tmp_path: Path) -> None:
    node = _node_or_skip()
    world = WorldSpec().write(tmp_path / "world")
    store = f"sqlite:///{tmp_path / 'store.db'}"
    done = subprocess.run(
        [node, str(NODE_DIR / "client.mjs"), sys.executable, "--world", str(world), "--rev", "r1",
         "--date", "2025-07-01", "--seat", "S1", "--store", store, "--run-id", "node-run"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["server"]["name"] == "worldkit-seat-S1"
    assert [t["name"] for t in report["tools"]] == [
        "list_files", "read_file", "search_files", "write_file", "query_records", "get_record", "update_record",
        "list_messages", "read_message", "send_message",
    ]
    assert all(t["hasOutputSchema"] for t in report["tools"])
    assert {t["name"] for t in report["tools"] if t["readOnlyHint"] is False} == {"write_file", "update_record", "send_message"}
    assert report["files"] == ["Desk/P1/todo.md", "Shared/Notes/note.md", "Shared/SOPs/SOP-001.md"]
    assert report["read"]["text"] == "my todo\n" and report["read"]["next_offset"] is None
    assert report["refused"]["isError"] and "'..' segments are not allowed" in report["refused"]["text"]
    with Store.open(store) as opened:
        assert [(e.tool, e.outcome) for e in read_events(opened, "node-run")] == [
            ("list_files", "ok"), ("read_file", "ok"), ("read_file", "denied")
        ]

"""SIGKILL the organizer server in the middle of a large move_files: no record is lost or doubled.

The server runs as a real subprocess (`python -m worldkit.mcp.organizer`) spoken to over stdio
with raw JSON-RPC, so the test can kill it at a chosen moment without a client in the way.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from worldkit.canon import sha256_bytes
from worldkit.infoorg.organizer import Organizer
from worldkit.infoorg.validity import check_workspace

REPO = Path(__file__).resolve().parents[3]
RECORDS = 3000


def start_server(ws: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "worldkit.mcp.organizer", "--workspace", str(ws)],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )


def send(proc: subprocess.Popen, message: dict) -> None:
    proc.stdin.write((json.dumps(message) + "\n").encode())
    proc.stdin.flush()


def handshake(proc: subprocess.Popen) -> None:
    send(
        proc,
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "sigkill-test", "version": "0"},
            },
        },
    )
    reply = json.loads(proc.stdout.readline())
    assert reply["id"] == 1 and "result" in reply, reply
    send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})


def write_inbox(ws: Path) -> dict[str, str]:
    """RECORDS small records in `ws/inbox`; their ids and digests."""
    (ws / "inbox").mkdir(parents=True)
    expected = {}
    for i in range(RECORDS):
        data = f"record {i}\n".encode()
        (ws / "inbox" / f"F{i:05d}.txt").write_bytes(data)
        expected[f"F{i:05d}"] = sha256_bytes(data)
    return expected


def kill_mid_move(ws: Path, ids: list[str], destination: list[str], ready: Callable[[], bool]) -> None:
    """Start the server on `ws`, ask it to move `ids` to `destination`, SIGKILL it once `ready()` (or after 60 s)."""
    proc = start_server(ws)
    try:
        handshake(proc)
        send(
            proc,
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "move_files", "arguments": {"ids": ids, "destination": destination}},
            },
        )
        deadline = time.monotonic() + 60
        while not ready() and time.monotonic() < deadline:
            pass
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def assert_each_record_once(ws: Path, expected: dict[str, str]) -> None:
    scan = check_workspace(ws, expected)
    assert not (scan.missing or scan.duplicated or scan.changed or scan.unexpected), scan.problems


@pytest.mark.slow
@pytest.mark.parametrize("kill_after", [1, RECORDS // 2])
def test_sigkill_mid_move_keeps_every_record_exactly_once(tmp_path: Path, kill_after: int) -> None:
    ws = tmp_path / "ws"
    expected = write_inbox(ws)
    dest = ws / "archive" / "all"
    kill_mid_move(ws, sorted(expected), ["archive", "all"], lambda: dest.is_dir() and len(os.listdir(dest)) >= kill_after)

    moved = len(os.listdir(dest))
    interrupted = (ws / ".organizer" / "journal.json").exists()
    assert_each_record_once(ws, expected)  # right after the kill, before any recovery
    assert interrupted or moved in (0, RECORDS)  # without a journal, nothing is half-done

    organizer = Organizer(ws)  # the next start rolls the journalled move forward
    assert not (ws / ".organizer" / "journal.json").exists()
    assert len(os.listdir(dest)) == RECORDS
    assert organizer.check_inventory().intact
    assert_each_record_once(ws, expected)


@pytest.mark.slow
def test_the_kill_lands_mid_move_at_least_once(tmp_path: Path) -> None:
    """Guard against a vacuous pass: a kill does interrupt a journalled move on this machine."""
    interrupted = 0
    for attempt in range(2):
        ws = tmp_path / f"ws{attempt}"
        ids = sorted(write_inbox(ws))
        journal = ws / ".organizer" / "journal.json"
        kill_mid_move(ws, ids, ["d"], journal.exists)
        moved = len(os.listdir(ws / "d")) if (ws / "d").is_dir() else 0
        if journal.exists() and moved < RECORDS:
            interrupted += 1
        assert moved + len(os.listdir(ws / "inbox")) == RECORDS
    assert interrupted >= 1

"""`worldkit serve` over stdio ends cleanly on EOF, SIGTERM and SIGINT: the answered calls are in
the log, the log is sealed (its anchor checks out) and the exit code says why it ended."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.builders import WorldSpec
from worldkit.store import Store, read_anchor, read_events, verify_chain

READ = {"name": "read_file", "arguments": {"path": "Desk/P1/todo.md"}}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return WorldSpec().write(tmp_path_factory.mktemp("signal-world") / "world")


def _line(message: dict) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n"


@pytest.mark.parametrize(("ending", "code"), [("eof", 0), ("sigterm", 128 + signal.SIGTERM), ("sigint", 130)])
def test_the_server_ends_cleanly(world: Path, tmp_path: Path, ending: str, code: int) -> None:
    store, run, anchor = f"sqlite:///{tmp_path / 'store.db'}", f"signal-{ending}", tmp_path / "anchor.json"
    server = subprocess.Popen(
        [sys.executable, "-m", "worldkit", "serve", "--world", str(world), "--rev", "r1", "--date", "2025-07-01",
         "--seat", "S1", "--store", store, "--run-id", run, "--anchor", str(anchor)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}, cwd=tmp_path,
    )  # fmt: skip
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write(_line({"id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}}))
    server.stdin.write(_line({"method": "notifications/initialized"}))
    server.stdin.write(_line({"id": 2, "method": "tools/call", "params": READ}))
    server.stdin.flush()
    answers = [json.loads(server.stdout.readline()) for _ in range(2)]
    assert [a["id"] for a in answers] == [1, 2]
    assert answers[1]["result"]["structuredContent"]["text"] == "my todo\n"
    if ending == "eof":
        server.stdin.close()
    else:
        server.send_signal(signal.SIGTERM if ending == "sigterm" else signal.SIGINT)
    try:
        assert server.wait(timeout=60) == code, server.stderr.read().decode() if server.stderr else ""
    finally:
        server.kill()
        for pipe in (server.stdin, server.stdout, server.stderr):
            if pipe is not None and not pipe.closed:
                pipe.close()
    with Store.open(store) as opened:
        assert [(e.tool, e.arguments) for e in read_events(opened, run)] == [("read_file", READ["arguments"])]
        report = verify_chain(opened, run, anchor=read_anchor(anchor), key=None)
    assert report.ok, report.message


@pytest.mark.parametrize("stdout", ["devnull", "pipe", "file"])
def test_input_from_dev_null_is_an_immediate_end(world: Path, tmp_path: Path, stdout: str) -> None:
    """stdin from /dev/null (which epoll refuses to watch) is end of input at once: the server exits 0
    with an empty, sealed log, whatever stdout is."""
    store, run, anchor = f"sqlite:///{tmp_path / 'store.db'}", f"null-{stdout}", tmp_path / "anchor.json"
    sink = {"devnull": subprocess.DEVNULL, "pipe": subprocess.PIPE, "file": open(tmp_path / "out.txt", "wb")}[stdout]
    try:
        server = subprocess.Popen(
            [sys.executable, "-m", "worldkit", "serve", "--world", str(world), "--rev", "r1", "--date", "2025-07-01",
             "--seat", "S1", "--store", store, "--run-id", run, "--anchor", str(anchor)],
            stdin=subprocess.DEVNULL, stdout=sink, stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}, cwd=tmp_path,
        )  # fmt: skip
        try:
            _, err = server.communicate(timeout=120)  # a hang guard: before the fix it never ended
        finally:
            server.kill()
    finally:
        if stdout == "file":
            sink.close()
    assert server.returncode == 0, err.decode()
    with Store.open(store) as opened:
        assert list(read_events(opened, run)) == []
        assert verify_chain(opened, run, anchor=read_anchor(anchor), key=None).ok


@pytest.mark.parametrize("nesting", [0, 1, 2])
def test_a_signal_exit_raised_inside_a_task_group_ends_with_its_own_code(nesting: int) -> None:
    """A SIGTERM that lands while one of the server's tasks runs comes out of the task group wrapped in
    an exception group: `signal_exits` raises the exit itself, so the status stays 143."""
    from worldkit._cli.serve import signal_exits

    error: BaseException = SystemExit(128 + signal.SIGTERM)
    for _ in range(nesting):
        error = BaseExceptionGroup("unhandled errors in a TaskGroup", [error, ValueError("a sibling task")])
    with pytest.raises(SystemExit) as exited, signal_exits():
        raise error
    assert exited.value.code == 128 + signal.SIGTERM
    with pytest.raises(BaseExceptionGroup), signal_exits():  # a group without an exit is not swallowed
        raise BaseExceptionGroup("unhandled errors in a TaskGroup", [ValueError("boom")])

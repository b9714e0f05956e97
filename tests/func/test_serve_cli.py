"""`worldkit serve` and `worldkit log replay` on the command line: help, usage errors, exit codes."""

from __future__ import annotations

import shutil
from pathlib import Path

import anyio
import pytest

from tests.unit.mcp.seat_support import Run, permissive, project
from worldkit._cli.main import run as cli


def test_help_is_there(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["serve", "--help"]) == 0
    assert "Serve one seat's company systems as MCP tools" in capsys.readouterr().out
    assert cli(["log", "replay", "--help"]) == 0
    assert "Re-apply a run's state changes to its pre-task state" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["serve", "--transport", "ws"], "Invalid value for '--transport': Value error, 'ws' is not one of 'stdio', 'http'."),
        (["serve", "--world", "mini", "--seat", "S1"],
         "error: missing --rev, --date: name the world, revision, date and seat to serve (or --projection DIR)\n"),
    ],
)
def test_usage_errors(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(argv) == 2
    err = capsys.readouterr().err
    assert err == message if message.startswith("error:") else message in err


def test_a_projection_serves_only_its_own_seat(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    projection = project(tmp_path, "S1")
    assert cli(["serve", "--projection", str(projection), "--seat", "S2"]) == 2
    assert capsys.readouterr().err == (
        f"error: --seat S2 does not match projection {projection}, which is for seat S1; drop --seat or fix it\n"
    )


def test_a_run_with_events_is_not_served_again(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    projection = project(tmp_path, "S1")
    store = f"sqlite:///{tmp_path / 'store.db'}"
    used = Run(projection, run_id="used", store_url=store)
    used.log.append("list_files", {}, "ok", None)
    used.close()
    world = ["--world", str(tmp_path / "world")]  # not on the world search path: named for the frozen check
    assert cli(["serve", "--projection", str(projection), *world, "--store", store, "--run-id", "used"]) == 2
    assert "error: run id used is already claimed in the event log (seat S1, 1 events)" in capsys.readouterr().err


def test_a_second_server_with_the_same_run_id_refuses_to_start(tmp_path: Path) -> None:
    """Two servers given one --run-id at once: the second exits 2 before serving anything."""
    import os
    import subprocess
    import sys

    projection = project(tmp_path, "S1")
    store = f"sqlite:///{tmp_path / 'store.db'}"
    argv = [sys.executable, "-m", "worldkit", "serve", "--projection", str(projection), "--world",
            str(tmp_path / "world"), "--store", store, "--run-id", "twice"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    first = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env=env, cwd=tmp_path)  # fmt: skip
    try:
        assert b"serving seat S1" in first.stderr.readline()  # the first one is up and holds the run
        second = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, env=env, cwd=tmp_path,
                                timeout=120)  # fmt: skip
        assert second.returncode == 2
        assert b"error: run id twice is already claimed in the event log" in second.stderr
        assert b"Traceback" not in second.stderr and second.stdout == b""
        assert first.poll() is None  # the first server is unaffected
    finally:
        first.stdin.close()  # end of input: the server stops and seals its log
        first.wait(timeout=60)


def test_a_rehashed_projection_is_not_served(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from worldkit.materialize.manifest import read_manifest, write_manifest
    from worldkit.verify.inject import entry_for

    projection = project(tmp_path, "S1")
    (projection / "files" / "smuggled.md").write_bytes(b"# smuggled\n")
    manifest = read_manifest(projection)
    files = sorted([*manifest.files, entry_for("files/smuggled.md", b"# smuggled\n", "files", "x")],
                   key=lambda e: e.path)
    manifest = manifest.model_copy(update={"files": files})
    write_manifest(projection, manifest.model_copy(update={"fingerprint": manifest.expected_fingerprint()}))
    store = f"sqlite:///{tmp_path / 'store.db'}"
    world = ["--world", str(tmp_path / "world")]
    assert cli(["serve", "--projection", str(projection), *world, "--store", store]) == 1
    err = capsys.readouterr().err
    assert "fails the frozen-workspace check" in err and "unfrozen-file files/smuggled.md" in err
    # Unverifiable (no world to re-derive from, nothing frozen) is refused too.
    assert cli(["serve", "--projection", str(projection), "--store", store]) == 1
    assert "unverifiable" in capsys.readouterr().err


def test_log_replay_from_a_pre_task_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    projection = project(tmp_path, "S1")
    candidate = tmp_path / "candidate"
    shutil.copytree(projection, candidate / "projection")
    (candidate / "workspace").mkdir()
    store = f"sqlite:///{tmp_path / 'store.db'}"
    workspace = tmp_path / "live"
    workspace.mkdir()
    served = Run(candidate / "projection", permissive(projection), workspace=workspace, run_id="r-1", store_url=store)

    async def session() -> None:
        async with served.client() as client:
            await client.call_tool("write_file", {"path": "report.md", "content": "done\n"})
            await client.call_tool("update_record", {"id": "CC-1", "action": "status", "text": "closed"})

    anyio.run(session)
    digest = served.state.digest()
    served.close()
    argv = ["log", "replay", "r-1", "--store", store, "--from", str(candidate), "--workspace", str(workspace)]
    assert cli(argv) == 0
    assert capsys.readouterr().out == (
        f"ok: run r-1: 2 state changes of 2 events replayed; post-task state digest {digest} reproduced\n"
    )
    (workspace / "report.md").write_text("edited after the run\n")
    assert cli(argv) == 1
    assert "differs from the replayed one (changed: report.md)" in capsys.readouterr().err
    assert cli(["log", "replay", "r-1", "--store", store, "--from", str(candidate), "--rev", "r1"]) == 2
    assert "--from excludes --world/--rev/--date/--overlay" in capsys.readouterr().err

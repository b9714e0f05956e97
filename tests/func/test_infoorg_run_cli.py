"""`worldkit infoorg run` and `worldkit infoorg serve` end to end, and the Thread fixture rebuild."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import (  # at collection: the stdio client binds sys.stderr
    Client,
    StdioServerParameters,
)

from tests.fixtures.jira_export import write_jira_export
from worldkit._cli.main import run
from worldkit.store import Store, read_events

REPO = Path(__file__).resolve().parents[2]
THREAD_FIXTURE_MANIFEST = REPO / "manifests" / "infoorg" / "thread-fixture.json"

pytestmark = pytest.mark.usefixtures("restore_check_registry")  # loading a packet registers a check


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = run(["infoorg", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_jira_export(tmp_path_factory.mktemp("export") / "export")


@pytest.fixture(scope="module")
def packets(tmp_path_factory: pytest.TempPathFactory, export: Path) -> Path:
    out = tmp_path_factory.mktemp("built") / "packets"
    assert run(["infoorg", "build", "--family", "thread", "--source", str(export), "--out", str(out),
                "--tasks", "3", "--manifest", str(THREAD_FIXTURE_MANIFEST)]) == 0
    return out


def test_run_noop_prints_s_and_category(capsys, packets: Path, tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 's.db'}"
    code, out, err = cli(capsys, "run", "--packet", str(packets / "thread-001"), "--agent", "noop",
                         "--out", str(tmp_path / "runs"), "--store", store, "--run-id", "noop-1")
    assert (code, err) == (0, "")
    assert out == (
        "run noop-1: thread-001 · noop · seat EMP-ORG-001\n"
        "S 0.00  category both  valid yes\n"
        "F1_bal 0.00  E 100.00  triplet F1 0.00\n"
        "events 0  replay matches\n"
        f"run folder: {tmp_path / 'runs' / 'noop-1'}\n"
    )


def test_run_a_baseline_through_the_tools_with_the_event_log(
    capsys, packets: Path, tmp_path: Path, store_url: str
) -> None:
    code, out, _ = cli(capsys, "run", "--packet", str(packets / "thread-002"), "--agent",
                       "baseline:silhouette", "--out", str(tmp_path / "runs"), "--store", store_url,
                       "--run-id", "sil-1", "--json")
    assert code == 0
    result = json.loads(out)
    assert result["seat"] == "EMP-ORG-001" and result["agent"] == "baseline:silhouette"
    assert result["score"]["valid"] and 0 < result["score"]["S"] <= 1
    assert result["score"]["category"] in ("none", "parent", "leaf", "both")
    assert result["replay_matches"] and result["rubric"]["S"][0] is True
    assert result["schema_version"] == 2  # the file carries its own version, so --json prints it unchanged
    assert result["status"] == "completed" and result["harness"]["id"] == "baseline:silhouette"
    usage = result["usage"]
    assert usage["tool_calls"] == result["events"] and usage["stop_reason"] == "done" and usage["wall_time_s"] > 0
    assert (usage["tokens_in"], usage["tokens_out"], usage["transcript"]) == (0, 0, None)  # no model, no conversation
    assert json.loads((tmp_path / "runs" / "sil-1" / "result.json").read_bytes()) == result
    with Store.open(store_url) as store:
        events = list(read_events(store, "sil-1"))
    assert len(events) == result["events"] and events[-1].hash == result["event_log_head"]
    assert {e.tool for e in events} == {"list_files", "read_file", "move_files", "check_inventory"}


def test_run_usage_errors(capsys, packets: Path, tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'usage.db'}"  # never the default store in the cwd
    code, _, err = cli(capsys, "run", "--packet", str(packets / "thread-001"), "--agent", "best",
                       "--store", store)
    assert code == 2 and err.startswith("error: unknown agent 'best'; available agents: baseline:fixed, ")
    assert "openai[:MODEL]" in err and "baseline:random[:SEED]" in err
    code, _, err = cli(capsys, "run", "--packet", str(tmp_path), "--agent", "noop", "--store", store)
    assert code == 3 and err == (f"error: file {tmp_path / 'overlay.json'}: no overlay.json; pass a "
                                 "packet directory built by `worldkit infoorg build`\n")
    args = ["run", "--packet", str(packets / "thread-001"), "--agent", "noop", "--out",
            str(tmp_path / "runs"), "--store", f"sqlite:///{tmp_path / 's.db'}", "--run-id", "x"]
    assert cli(capsys, *args)[0] == 0
    code, _, err = cli(capsys, *args)
    assert code == 2 and err.startswith(f"error: run folder {tmp_path / 'runs' / 'x'} exists")


def test_serve_stdio_logs_every_call_as_the_seat(packets: Path, tmp_path: Path) -> None:
    workspace, db = tmp_path / "ws", tmp_path / "s.db"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "worldkit", "infoorg", "serve", "--packet", str(packets / "thread-001"),
              "--workspace", str(workspace), "--store", f"sqlite:///{db}", "--run-id", "served-1"],
        env={**os.environ},
        cwd=str(REPO),
    )

    async def session() -> list[object]:
        async with Client(params) as client:
            tools = sorted(tool.name for tool in (await client.list_tools()).tools)
            listing = await client.call_tool("list_files", {"limit": 2})
            moved = await client.call_tool("move_files", {"ids": ["F001"], "destination": ["a", "b"]})
            refused = await client.call_tool("move_files", {"ids": ["F001"], "destination": ["F12"]})
            return [tools, listing.structured_content, moved.is_error, refused.is_error]

    tools, listing, moved_error, refused_error = anyio.run(session)
    assert tools == ["check_inventory", "list_files", "move_files", "read_file", "search_files"]
    total = json.loads((packets / "thread-001" / "packet.json").read_bytes())["record_count"]
    assert listing["total"] == total and listing["entries"][0] == {"id": "F001", "path": ["inbox"], "format": "text"}
    assert (moved_error, refused_error) == (False, True)
    assert (workspace / "a" / "b" / "F001.txt").read_bytes() == (
        packets / "thread-001" / "candidate" / "inbox" / "F001.txt").read_bytes()
    with Store.open(f"sqlite:///{db}") as store:
        events = list(read_events(store, "served-1"))
    assert [(e.seq, e.seat, e.tool, e.outcome) for e in events] == [
        (1, "EMP-ORG-001", "list_files", "ok"),
        (2, "EMP-ORG-001", "move_files", "ok"),
        (3, "EMP-ORG-001", "move_files", "denied"),
    ]
    change = dict(events[1].state_change)
    assert len(change.pop("plan")) == 32  # the move's journal plan id
    assert change == {"kind": "infoorg.move_files", "moves": [{"id": "F001", "from": ["inbox"], "to": ["a", "b"]}]}


def test_thread_fixture_rebuild_matches_the_committed_manifest(packets: Path, export: Path,
                                                               tmp_path: Path) -> None:
    """A fresh process with another hash seed rebuilds the same bytes (manifest and packets)."""
    out = tmp_path / "rebuilt"
    done = subprocess.run(
        [sys.executable, "-m", "worldkit", "infoorg", "build", "--family", "thread", "--source",
         str(export), "--out", str(out), "--tasks", "3", "--manifest", str(THREAD_FIXTURE_MANIFEST)],
        capture_output=True, text=True, cwd=REPO, env={**os.environ, "PYTHONHASHSEED": "4242"},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith(f"manifest {THREAD_FIXTURE_MANIFEST}: matches\n")
    files = sorted(p.relative_to(packets) for p in packets.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    assert all((packets / f).read_bytes() == (out / f).read_bytes() for f in files)
    manifest = json.loads(THREAD_FIXTURE_MANIFEST.read_bytes())
    assert [t["task_id"] for t in manifest["tasks"]] == ["thread-001", "thread-002", "thread-003"]
    assert sum(t["record_count"] for t in manifest["tasks"]) == 129


@pytest.mark.parametrize("command", ["serve", "run"])
def test_commands_have_help(capsys, command: str) -> None:
    code, out, _ = cli(capsys, command, "--help")
    assert code == 0 and "--packet" in out


def test_baseline_random_runs_its_five_seeds_as_table_12_does(capsys, packets: Path, tmp_path: Path) -> None:
    code, out, err = cli(capsys, "run", "--packet", str(packets / "thread-003"), "--agent", "baseline:random",
                         "--out", str(tmp_path / "runs"), "--store", f"sqlite:///{tmp_path / 's.db'}", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert sorted(r["agent"] for r in report["runs"]) == ["baseline:random", *(f"baseline:random:{s}" for s in range(1, 5))]
    assert report["tables"]["table12"]["random_seeds"] == {"min": 5, "max": 5}
    mean = sum(r["score"]["S"] for r in report["runs"]) / 5
    assert abs(report["tables"]["table12"]["baselines"]["random"]["thread"] - 100 * mean) < 1e-9
    code, _, err = cli(capsys, "run", "--packet", str(packets / "thread-003"), "--agent", "baseline:random",
                       "--run-id", "r", "--out", str(tmp_path / "runs"), "--store", f"sqlite:///{tmp_path / 's.db'}")
    assert code == 2 and "baseline:random:SEED" in err

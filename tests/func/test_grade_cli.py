"""`worldkit grade`: a workspace (with and without its log) and a run folder, graded without an agent,
in the JSON shape of `worldkit run --json`; and the folder's claims checked rather than trusted."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.fixtures.overlays.paths import GOOD
from worldkit._cli.main import run
from worldkit.overlay import load_overlay
from worldkit.record.execution import read_record
from worldkit.run.folder import read_run_folder

SHAPE = {"run_id", "task", "agent", "condition", "status", "criteria", "access", "deterministic_passed",
         "deterministic_total", "record"}  # fmt: skip


pytestmark = pytest.mark.usefixtures("fixture_overlays_on_path")


@pytest.fixture(scope="module")
def oracle_run(tmp_path_factory) -> tuple[dict, Path, str]:
    """One oracle run of the good fixture: its `run --json` summary, folder and store URL."""
    base = tmp_path_factory.mktemp("grade")
    store = f"sqlite:///{base / 'store.db'}"
    argv = ["run", "--overlay", str(GOOD), "--agent", "oracle", "--out", str(base / "runs"), "--store", store, "--json"]
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert run(argv) == 0
    summary = json.loads(out.getvalue())
    return summary, Path(summary["record"]).parent, store


def _grade(capsys, *argv: str, code: int = 0) -> dict:
    assert run(["grade", *argv, "--json"]) == code
    captured = capsys.readouterr()
    if code == 0:
        return json.loads(captured.out)
    # Under --json an error is one object on stdout (README, CLI conventions), nothing on stderr.
    error = json.loads(captured.out)
    assert error["exit_code"] == code and error["schema_version"] == 1 and captured.err == ""
    return {"err": error["error"]}


def test_without_a_log_access_is_unknown_and_state_changes_unseen(capsys, oracle_run) -> None:
    summary, run_dir, _store = oracle_run
    graded = _grade(capsys, "--overlay", str(GOOD), "--workspace", str(run_dir / "workspace"))
    assert SHAPE <= set(graded)
    assert set(graded["criteria"]) == set(summary["criteria"])
    assert set(graded["access"].values()) == {"unknown"}
    # File criteria grade as in the run; mail and record criteria are unknown without the log
    # (neither pass nor fail: they count in no pass rate).
    for cid in ("C1", "C2", "C3", "C4", "C5", "C6", "C7"):
        assert graded["criteria"][cid] == "pass"
    for cid in ("C8", "C10", "C12"):
        assert graded["criteria"][cid] == "unknown"
    assert graded["criteria"]["S1"] == "ungraded"
    assert graded["deterministic_total"] == summary["deterministic_total"]
    assert graded["agent"] == "external"


def test_with_the_log_it_equals_the_run(capsys, oracle_run) -> None:
    summary, run_dir, store = oracle_run
    graded = _grade(capsys, "--overlay", str(GOOD), "--workspace", str(run_dir / "workspace"),
                    "--log", summary["run_id"], "--store", store)  # fmt: skip
    assert graded["criteria"] == summary["criteria"]
    assert graded["access"] == summary["access"]
    assert graded["deterministic_passed"] == graded["deterministic_total"] == summary["deterministic_total"]


def test_a_workspace_the_log_did_not_write_is_refused(capsys, oracle_run, tmp_path: Path) -> None:
    summary, run_dir, store = oracle_run
    workspace = tmp_path / "ws"
    shutil.copytree(run_dir / "workspace", workspace)
    (workspace / "report.md").write_text("# CC-1\n\nCC-1 is approved; window three days.\n")
    result = _grade(capsys, "--overlay", str(GOOD), "--workspace", str(workspace), "--log", summary["run_id"],
                    "--store", store, code=1)  # fmt: skip
    assert "not what the run's logged writes produce" in result["err"] and "report.md" in result["err"]


def test_a_log_of_another_seat_is_refused(capsys, oracle_run, tmp_path: Path) -> None:
    from worldkit.store import EventLog, Store

    _summary, run_dir, store = oracle_run
    with Store.open(store) as opened, EventLog(opened, "other-seat-run", "S9") as log:
        log.append("list_files", {}, "ok", None)
    result = _grade(capsys, "--overlay", str(GOOD), "--workspace", str(run_dir / "workspace"),
                    "--log", "other-seat-run", "--store", store, code=1)  # fmt: skip
    assert "acts as seat S9" in result["err"]


def test_a_run_folder_grades_into_a_record(capsys, oracle_run, tmp_path: Path) -> None:
    summary, run_dir, _store = oracle_run
    folder = tmp_path / "folder"
    shutil.copytree(run_dir, folder)
    (folder / "execution-record.json").unlink()
    graded = _grade(capsys, str(folder))
    assert graded["criteria"] == summary["criteria"] and graded["access"] == summary["access"]
    record = read_record(folder / "execution-record.json")
    assert record.run_id == read_run_folder(folder).run_id == summary["run_id"]
    assert record.agent == "oracle" and record.inputs["revision_digest"]
    # Graded once: a second grade refuses, regrade reproduces.
    assert "graded already" in _grade(capsys, str(folder), code=2)["err"]
    assert run(["regrade", str(folder), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["same_as_record"] is True


def test_a_run_folder_with_a_changed_overlay_digest_is_refused(capsys, oracle_run, tmp_path: Path) -> None:
    _summary, run_dir, _store = oracle_run
    folder = tmp_path / "folder"
    shutil.copytree(run_dir, folder)
    (folder / "execution-record.json").unlink()
    manifest = json.loads((folder / "run.json").read_text())
    manifest["overlay_sha256"] = "0" * 64
    (folder / "run.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    assert "name different overlay_sha256" in _grade(capsys, str(folder), code=1)["err"]


def test_usage_errors(capsys, tmp_path: Path) -> None:
    assert "--overlay T and --workspace DIR" in _grade(capsys, code=2)["err"]
    assert "not a run folder" in _grade(capsys, str(tmp_path), code=3)["err"]
    overlay = load_overlay(GOOD)
    assert overlay.id == "cc1-report"


def _serve_and_drive_from_outside(tmp_path: Path, run_id: str) -> tuple[Path, Path]:
    """The folder contract for `serve --overlay T --out DIR`: stage_seat + run.json + the log anchor
    in the folder, driven by a plain MCP client replaying the reference actions. Returns (out, db)."""
    import anyio
    from mcp import Client

    from worldkit.mcp.server import build_seat_server
    from worldkit.mcp.session import default_anchor, open_run, stage_seat
    from worldkit.run.folder import folder_for_package, write_run_folder
    from worldkit.store import Store

    out, db = tmp_path / "served", tmp_path / "s.db"
    store = f"sqlite:///{db}"
    staged = stage_seat(overlay=str(GOOD), condition="full", out=out)
    with Store.open(store) as opened, open_run(opened, run_id, staged.config.seat, anchor=default_anchor(run_id, out)) as log:
        write_run_folder(out, folder_for_package(out, run_id=run_id, store=store))
        server = build_seat_server(staged.projection, staged.config, workspace=staged.workspace, event_log=log)
        overlay = load_overlay(GOOD)

        async def outside_agent() -> None:
            async with Client(server) as client:
                for action in overlay.reference.actions:
                    await client.call_tool(action.tool, dict(action.args))

        anyio.run(outside_agent)
    return out, db


def test_a_session_staged_like_serve_and_driven_from_outside_is_graded(capsys, tmp_path: Path) -> None:
    """The folder contract for `serve --overlay T --out DIR`: stage_seat + run.json, any MCP client."""
    out, _db = _serve_and_drive_from_outside(tmp_path, "outside-1")
    graded = _grade(capsys, str(out))
    assert graded["agent"] == "external" and graded["run_id"] == "outside-1"
    assert graded["deterministic_passed"] == graded["deterministic_total"] == 12
    assert "unknown" not in graded["access"].values() and graded["access"]["C2"] == "accessed"


def test_a_served_folder_whose_log_was_cut_after_the_session_is_refused(capsys, tmp_path: Path) -> None:
    """The anchor `serve --out` leaves in the folder pins the log's head: delete the last event
    (guards dropped, as an attacker with the database file would) and `grade DIR` refuses."""
    import sqlite3

    out, db = _serve_and_drive_from_outside(tmp_path, "outside-2")
    conn = sqlite3.connect(db)
    triggers = [name for (name,) in conn.execute("select name from sqlite_master where type = 'trigger'")]
    for name in triggers:
        conn.execute(f'drop trigger "{name}"')
    tables = [name for (name,) in conn.execute("select name from sqlite_master where type = 'table'")]
    events = next(t for t in tables if "event" in t)
    conn.execute(f'delete from "{events}" where seq = (select max(seq) from "{events}")')
    conn.commit()
    conn.close()
    code = run(["grade", str(out), "--json"])
    assert code != 0
    error = json.loads(capsys.readouterr().out)  # under --json the error is one object on stdout
    assert error["exit_code"] == code and "outside-2" in error["error"]

"""`worldkit log show / verify / list` end to end, on both store backends."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import sqlalchemy as sa
import typer

from worldkit.canon import sha256_json
from worldkit.errors import WorldkitError
from worldkit.store import EventLog, Store, describe_url

SEAT = "EMP-QC-001"
START = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)


def _cli() -> Callable[[list[str]], int]:
    """`worldkit._cli.main.run`, or the same over just the log commands if main cannot load."""
    try:
        from worldkit._cli.main import run

        return run
    except ImportError:  # another command module is still being written
        from worldkit._cli import log

        app = typer.Typer()
        app.callback()(lambda: None)
        log.register(app)

        def run(argv: list[str]) -> int:
            try:
                typer.main.get_command(app).main(args=argv, standalone_mode=False)
            except WorldkitError as error:
                typer.echo(f"error: {error.message}", err=True)
                return int(error.exit_code)
            return 0

        return run


run = _cli()


@pytest.fixture
def url(store_url: str) -> str:
    """A store holding run-1 (three calls, one of them a mutation) and an empty run-2."""
    ticks = itertools.count()
    with Store.open(store_url) as store:
        clock = lambda: START + timedelta(seconds=next(ticks))  # noqa: E731
        with EventLog(store, "run-1", SEAT, clock=clock) as log:
            log.append("list_files", {"offset": 0}, "ok", "a" * 64)
            log.append("read_file", {"path": "hr/pay.xlsx"}, "denied", None, {"reason": "HR"})
            log.append("update_record", {"id": "D1"}, "ok", None, state_change={"id": "D1"})
        EventLog(store, "run-2", "EMP-HR-001").close()
    return store_url


def _break_event_2(url: str) -> None:
    """Edit one byte of event 2's arguments, dropping the guards first as an attacker would."""
    with Store.open(url) as store, store.engine.begin() as conn:
        if store.backend == "postgresql":
            conn.exec_driver_sql("DROP TRIGGER log_events_append_only ON log_events")
        else:
            conn.exec_driver_sql("DROP TRIGGER log_events_no_update")
        conn.execute(
            sa.text(
                "UPDATE log_events SET arguments = replace(arguments, 'pay', 'pax') WHERE seq = 2"
            )
        )


def test_show_prints_each_event_on_a_line(url: str, capsys) -> None:
    assert run(["log", "show", "run-1", "--store", url]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "run run-1  seat EMP-QC-001  3 events",
        "     1  2026-03-02T09:00:00.000000Z  ok      aaaaaaaaaaaa  list_files  {\"offset\":0}",
        "     2  2026-03-02T09:00:01.000000Z  denied  -             read_file  "
        "{\"path\":\"hr/pay.xlsx\"}",
        "     3  2026-03-02T09:00:02.000000Z  ok      -             update_record  "
        "{\"id\":\"D1\"}  [state change]",
    ]


def test_show_json_events_can_be_rehashed(url: str, capsys) -> None:
    assert run(["log", "show", "run-1", "--store", url, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert (shown["run_id"], shown["seat"], len(shown["events"])) == ("run-1", SEAT, 3)
    for event in shown["events"]:
        payload = {k: v for k, v in event.items() if k not in ("hash", "version")}
        assert sha256_json({**payload, "v": event["version"]}) == event["hash"]
    assert shown["events"][0]["time"] == "2026-03-02T09:00:00.000000Z"


def test_verify_passes_on_an_intact_log(url: str, capsys) -> None:
    assert run(["log", "verify", "run-1", "--store", url]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ok: run run-1: 3 events, chain intact (head ")


def test_verify_fails_naming_the_edited_event(url: str, capsys) -> None:
    _break_event_2(url)
    assert run(["log", "verify", "run-1", "--store", url]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "error: run run-1: event 2 (read_file) was altered: its content no longer matches its "
        "hash; the log cannot be trusted from event 2 on: re-run the task to get a trustworthy "
        "log\n"
    )


def test_verify_json_reports_the_problem_and_still_fails(url: str, capsys) -> None:
    _break_event_2(url)
    assert run(["log", "verify", "run-1", "--store", url, "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False
    assert report["problem"]["seq"] == 2 and report["problem"]["kind"] == "hash_mismatch"


def test_verify_json_on_an_intact_log(url: str, capsys) -> None:
    assert run(["log", "verify", "run-1", "--store", url, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["ok"], report["events"], report["problem"]) == (True, 3, None)


def test_list_shows_every_run(url: str, capsys) -> None:
    assert run(["log", "list", "--store", url]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["RUN", "SEAT", "EVENTS", "LAST", "EVENT"]
    assert sorted(line.split() for line in lines[1:]) == [
        ["run-1", SEAT, "3", "2026-03-02T09:00:02Z"],
        ["run-2", "EMP-HR-001", "0", "-"],
    ]


def test_list_json(url: str, capsys) -> None:
    assert run(["log", "list", "--store", url, "--json"]) == 0
    runs = {r["run_id"]: r for r in json.loads(capsys.readouterr().out)["runs"]}
    assert runs["run-1"]["events"] == 3 and runs["run-2"]["last_time"] is None


def test_the_store_comes_from_the_environment(url: str, capsys, monkeypatch) -> None:
    monkeypatch.setenv("WORLDKIT_STORE", url)
    assert run(["log", "verify", "run-1"]) == 0
    assert capsys.readouterr().out.startswith("ok: run run-1")


def test_an_unknown_run_is_a_usage_error(url: str, capsys) -> None:
    assert run(["log", "show", "nope", "--store", url]) == 2
    assert capsys.readouterr().err == (
        f"error: no run 'nope' in store {describe_url(url)}; `worldkit log list` shows the "
        "runs it holds\n"
    )


def test_a_missing_store_is_not_created(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("WORLDKIT_STORE", raising=False)
    assert run(["log", "list"]) == 4
    assert "no store at" in capsys.readouterr().err
    assert not (tmp_path / ".worldkit").exists()


def test_an_empty_store_lists_no_runs(tmp_path: Path, capsys) -> None:
    Store.open(f"sqlite:///{tmp_path / 's.db'}").close()
    assert run(["log", "list", "--store", str(tmp_path / "s.db")]) == 0
    assert capsys.readouterr().out == "no runs\n"


@pytest.mark.parametrize("command", [[], ["show"], ["verify"], ["list"]])
def test_every_log_command_has_help(command: list[str], capsys) -> None:
    assert run(["log", *command, "--help"]) == 0
    out = capsys.readouterr().out
    assert "Usage:" in out and ("--store" in out or command == [])

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


def _table_rows(out: str) -> list[list[str]]:
    """The body rows of a rich table printed by the CLI, split on runs of two or more spaces."""
    import re

    lines = out.splitlines()
    rule = next(i for i, line in enumerate(lines) if line.strip().startswith("─"))
    return [re.split(r" {2,}", line.strip()) for line in lines[rule + 1:] if line.strip()]


def test_show_prints_each_event_as_a_table_row(url: str, capsys) -> None:
    assert run(["log", "show", "run-1", "--store", url]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "run run-1  seat EMP-QC-001  3 events"
    assert out.splitlines()[2].split() == ["SEQ", "TIME", "OUTCOME", "RESULT", "TOOL", "ARGUMENTS", "STATE", "CHANGE"]
    assert _table_rows(out) == [
        ["1", "2026-03-02T09:00:00.000000Z", "ok", "aaaaaaaaaaaa", "list_files", '{"offset":0}', "-"],
        ["2", "2026-03-02T09:00:01.000000Z", "denied", "-", "read_file", '{"path":"hr/pay.xlsx"}', "-"],
        ["3", "2026-03-02T09:00:02.000000Z", "ok", "-", "update_record", '{"id":"D1"}', "yes"],
    ]


def test_show_cuts_write_file_bodies_short_unless_full(store_url: str, capsys) -> None:
    body = "# Memo\n" + "".join(f"line {n}\n" for n in range(400))
    with Store.open(store_url) as store, EventLog(store, "run-w", SEAT, clock=lambda: START) as log:
        log.append("write_file", {"path": "out/memo.md", "content": body}, "ok", None, state_change={"path": "out/memo.md"})
    assert run(["log", "show", "run-w", "--store", store_url]) == 0
    short = capsys.readouterr().out
    assert "line 399" not in short and "out/memo.md" in short
    assert f"[+{len(body) - 60} chars; --full shows all]" in short
    assert max(len(line) for line in short.splitlines()) < 240
    assert run(["log", "show", "run-w", "--store", store_url, "--full"]) == 0
    import re

    # the table folds the body over lines, the STATE CHANGE cell ("yes") beside its first one
    whole = re.sub(r"\s+", "", capsys.readouterr().out).replace("yes", "")
    assert re.sub(r"\s+", "", json.dumps(body)) in whole
    assert run(["log", "show", "run-w", "--store", store_url, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["events"][0]["arguments"]["content"] == body


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
    out = capsys.readouterr().out
    assert out.splitlines()[1].split() == ["RUN", "SEAT", "EVENTS", "LAST", "EVENT"]
    assert sorted(_table_rows(out)) == [
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
    assert run(["log", "list"]) == 5
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


def _anchored(store_url: str, run_dir: Path, *, key: bytes | None) -> None:
    """Run `anchored` (four calls) with its anchor in `run_dir/log-anchor.json`."""
    with Store.open(store_url) as store:
        with EventLog(store, "anchored", SEAT, claim=True, anchor=run_dir / "log-anchor.json", key=key) as log:
            for i in range(4):
                log.append("read_file", {"path": f"f{i}"}, "ok", None)


def _cut_last_event(store_url: str) -> None:
    """As an attacker with DDL rights: drop the guards, delete event 4, move the head back."""
    engine = sa.create_engine(store_url)
    with engine.begin() as conn:
        pg = conn.dialect.name == "postgresql"
        drops = (["DROP TRIGGER log_events_append_only ON log_events", "DROP TRIGGER log_runs_head ON log_runs"]
                 if pg else ["DROP TRIGGER log_events_no_delete", "DROP TRIGGER log_runs_head"])  # fmt: skip
        for statement in drops:
            conn.exec_driver_sql(statement)
        three = conn.exec_driver_sql("SELECT hash FROM log_events WHERE run_id = 'anchored' AND seq = 3").scalar()
        conn.exec_driver_sql("DELETE FROM log_events WHERE run_id = 'anchored' AND seq = 4")
        conn.execute(sa.text("UPDATE log_runs SET head_seq = 3, head_hash = :h WHERE run_id = 'anchored'"),
                     {"h": three})  # fmt: skip
    engine.dispose()


def test_log_verify_against_the_run_folder_catches_a_cut_with_the_head_moved_back(
    store_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _anchored(store_url, tmp_path, key=None)
    assert run(["log", "verify", "anchored", "--store", store_url, "--run-dir", str(tmp_path)]) == 0
    assert "checked against the final unsigned anchor of run anchored at event 4" in capsys.readouterr().out
    _cut_last_event(store_url)
    assert run(["log", "verify", "anchored", "--store", store_url]) == 0  # the store alone cannot tell
    assert "no anchor given" in capsys.readouterr().err
    for given in (["--run-dir", str(tmp_path)], ["--anchor", str(tmp_path / "log-anchor.json")]):
        assert run(["log", "verify", "anchored", "--store", store_url, *given]) == 1
        err = capsys.readouterr().err
        assert "the anchor records 4 events but the stored log ends at event 3" in err
        assert "Traceback" not in err


def test_log_verify_with_the_key_refuses_an_anchor_rewritten_without_it(
    store_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from worldkit.store import make_anchor, read_anchor, write_anchor

    _anchored(store_url, tmp_path, key=b"k3y")
    monkeypatch.setenv("WORLDKIT_LOG_KEY", "k3y")
    assert run(["log", "verify", "anchored", "--store", store_url, "--run-dir", str(tmp_path)]) == 0
    capsys.readouterr()
    signed = read_anchor(tmp_path / "log-anchor.json")
    _cut_last_event(store_url)
    with Store.open(store_url) as store:
        head = store.engine.connect().exec_driver_sql(
            "SELECT hash FROM log_events WHERE run_id = 'anchored' AND seq = 3").scalar()
    write_anchor(make_anchor(run_id="anchored", seat=SEAT, session=signed.session, seq=3, head_hash=head,
                             final=True, key=None), tmp_path / "log-anchor.json")  # fmt: skip
    assert run(["log", "verify", "anchored", "--store", store_url, "--run-dir", str(tmp_path)]) == 1
    assert "the anchor is not signed although WORLDKIT_LOG_KEY is set" in capsys.readouterr().err
    monkeypatch.delenv("WORLDKIT_LOG_KEY")
    write_anchor(signed, tmp_path / "log-anchor.json")
    assert run(["log", "verify", "anchored", "--store", store_url, "--run-dir", str(tmp_path)]) == 1
    assert "set WORLDKIT_LOG_KEY to the key the run was made with" in capsys.readouterr().err


def test_log_verify_refuses_an_anchor_of_another_run(store_url: str, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    _anchored(store_url, tmp_path, key=None)
    with Store.open(store_url) as store:
        EventLog(store, "other", SEAT).close()
    assert run(["log", "verify", "other", "--store", store_url, "--run-dir", str(tmp_path)]) == 2
    assert "the anchor given is for run anchored, not other" in capsys.readouterr().err

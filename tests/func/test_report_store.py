"""`worldkit report STORE` and `worldkit export ledgers STORE`: the execution records runs keep in
their store give exactly what the run folders give; a record that does not match its log is
refused; on SQLite and PostgreSQL."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.conftest import postgres_schema
from tests.fixtures.overlays.paths import GOOD, TRIAGE
from worldkit._cli.main import run
from worldkit.store import EventLog, Store, read_records
from worldkit.store.schema import event_key

RUNS = ((GOOD, "oracle", "full"), (GOOD, "oracle", "curated:curator-1"),
        (GOOD, "noop", "full"), (GOOD, "noop", "curated:curator-2"),
        (TRIAGE, "oracle", "full"), (TRIAGE, "noop", "curated:minimal"))


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = run(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def ran(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """Oracle and noop on two tasks under both conditions, into a folder and a store."""
    root = tmp_path_factory.mktemp("stored")
    with ExitStack() as stack:
        url = (f"sqlite:///{root / 'store.db'}" if request.param == "sqlite"
               else stack.enter_context(postgres_schema()))
        for overlay, agent, condition in RUNS:
            code = run(["run", "--overlay", str(overlay), "--agent", agent, "--condition", condition,
                        "--out", str(root / "runs"), "--store", url, "--json"])
            assert code == 0
        yield root / "runs", url


def _report(capsys, *args: str) -> dict:
    code, out, err = cli(capsys, "report", *args, "--json", "--replicates", "0")
    assert code == 0, err
    return json.loads(out)


def _without_stores(report: dict) -> dict:
    """The report with the one field that names where the records were read from left out."""
    return {**report, "provenance": [{k: v for k, v in p.items() if k != "stores"}
                                     for p in report["provenance"]]}


def _as_store_url(url: str) -> str:
    from worldkit.store.db import describe_url, normalize_url

    return describe_url(normalize_url(url))


def test_a_store_reports_exactly_what_its_run_folders_do(capsys, ran: tuple[Path, str]) -> None:
    folder, url = ran
    direct = _report(capsys, str(folder))
    assert direct["provenance"][0]["stores"] == []
    for given in (("--store", url), (url,)):
        stored = _report(capsys, *given)
        assert stored["provenance"][0]["stores"] == [_as_store_url(url)]
        assert _without_stores(stored) == _without_stores(direct)
    # Not a vacuous comparison: six runs of two tasks, with Table 1 from the overlays (the seat's
    # file count from the records the store holds, no run folder needed).
    assert len(direct["provenance"][0]["run_ids"]) == 6
    assert direct["analyses"][0]["tasks"] == ["cc1-report", "cc1-triage"]
    assert all(0 < share < 1 for share in direct["packets"]["runs"]["retained_share"].values())
    assert direct["overall"]["full"]["runs"] == 3 and direct["overall"]["curated"]["runs"] == 3


def test_the_text_and_html_reports_of_a_store_match_the_folders(capsys, ran: tuple[Path, str],
                                                                tmp_path: Path) -> None:
    folder, url = ran
    code, from_folder, _ = cli(capsys, "report", str(folder), "--replicates", "0")
    assert code == 0
    code, from_store, err = cli(capsys, "report", url, "--replicates", "0",
                                "--html", str(tmp_path / "store.html"))
    assert code == 0, err
    assert from_store == from_folder
    page = (tmp_path / "store.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") or page.lstrip().lower().startswith("<!doctype html>")
    assert "<svg" in page and "Report the status of change control CC-1" in page
    assert _as_store_url(url).split("?")[0] in page  # the provenance names the store


def test_run_ids_select_records(capsys, ran: tuple[Path, str]) -> None:
    folder, url = ran
    direct = _report(capsys, str(folder))
    chosen = sorted(direct["provenance"][0]["run_ids"])[:2]
    picked = _report(capsys, url, "--run-id", chosen[0], "--run-id", chosen[1])
    assert picked["provenance"][0]["run_ids"] == chosen
    code, out, err = cli(capsys, "report", url, "--run-id", "no-such-run", "--replicates", "0")
    assert (code, out) == (2, "")
    assert "no execution record of run(s) no-such-run" in err and "Traceback" not in err
    # A folder and the store it was run into hold the same runs: reported together, refused.
    code, _, err = cli(capsys, "report", str(folder), url, "--replicates", "0")
    assert code == 3 and "is also used by" in err


def test_export_ledgers_from_a_store_equals_from_the_folders(capsys, ran: tuple[Path, str],
                                                             tmp_path: Path) -> None:
    folder, url = ran
    assert cli(capsys, "export", "ledgers", str(folder), "--out", str(tmp_path / "a"))[0] == 0
    code, _, err = cli(capsys, "export", "ledgers", url, "--out", str(tmp_path / "b"))
    assert code == 0, err
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "b").iterdir())
    assert "run_ledger.csv" in names
    for name in names:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    with (tmp_path / "b" / "run_ledger.csv").open(newline="", encoding="utf-8") as handle:
        assert len(list(csv.DictReader(handle))) == 6


def test_every_run_stored_its_record_beside_its_log(ran: tuple[Path, str]) -> None:
    folder, url = ran
    with Store.open(url) as store:
        stored = read_records(store)
    assert len(stored) == 6
    for item in stored:
        on_disk = json.loads((folder / item.run_id / "execution-record.json").read_bytes())
        assert json.loads(item.record_json) == on_disk
        assert (item.head_seq, item.head_hash) == (on_disk["log_anchor"]["seq"], on_disk["log_anchor"]["hash"])


def test_a_record_whose_log_went_on_is_refused(capsys, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    code = run(["run", "--overlay", str(GOOD), "--agent", "oracle", "--out", str(tmp_path / "runs"),
                "--store", url, "--json"])
    assert code == 0
    [run_id] = [p.name for p in (tmp_path / "runs").iterdir()]
    with Store.open(url) as store, EventLog(store, run_id + ".other", "EMP-QC-001") as log:
        log.append("list_files", {"offset": 0}, "ok", None)  # another run's log: changes nothing
    code, out, _ = cli(capsys, "report", url, "--replicates", "0")
    assert code == 0
    assert f"1 run log(s) without an execution record are not reported ({run_id}.other)" in " ".join(out.split())
    # Extend the run's own log behind the claim (as a writer with raw access could).
    with Store.open(url) as store, store.engine.begin() as conn:
        last = conn.execute(sa.text("SELECT seq, hash, seat, session FROM log_events WHERE run_id = :r "
                                    "ORDER BY seq DESC LIMIT 1"), {"r": run_id}).one()
        run_key = conn.execute(sa.text("SELECT run_key FROM log_runs WHERE run_id = :r"), {"r": run_id}).scalar()
        conn.execute(sa.text(
            "INSERT INTO log_events (id, run_id, seq, version, time, seat, session, tool, arguments, "
            "outcome, prev_hash, hash) VALUES (:id, :r, :seq, 1, '2026-03-02T09:00:00.000000Z', :seat, "
            ":session, 'read_file', '{}', 'ok', :prev, :hash)"),
            {"id": event_key(run_key, last.seq + 1), "r": run_id, "seq": last.seq + 1, "seat": last.seat,
             "session": last.session, "prev": last.hash, "hash": "e" * 64})
    code, out, err = cli(capsys, "report", url, "--replicates", "0")
    assert (code, out) == (1, "")
    assert f"record of run {run_id}" in err and "the log was extended, cut short or rewritten" in err
    assert "Traceback" not in err and err.count("\n") == 1


def test_a_failed_run_stores_its_failed_record_too(capsys, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    code = run(["run", "--overlay", str(GOOD), "--agent", "openai", "--base-url", "http://127.0.0.1:9",
                "--model", "m", "--retries", "0", "--out", str(tmp_path / "runs"), "--store", url])
    assert code == 5  # the endpoint is down: the run is marked failed
    [folder] = list((tmp_path / "runs").iterdir())
    with Store.open(url) as store:
        [stored] = read_records(store)
    on_disk = json.loads((folder / "execution-record.json").read_bytes())
    assert json.loads(stored.record_json) == on_disk and on_disk["status"] == "failed"


def test_a_database_that_is_not_a_worldkit_store_is_refused_untouched(capsys, tmp_path: Path) -> None:
    """Reading commands never give worldkit's tables to someone else's database."""
    path = tmp_path / "theirs.db"
    engine = sa.create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    code, out, err = cli(capsys, "report", f"sqlite:///{path}")
    assert code == 5  # a store that cannot be used, as for a missing store file
    assert "not a worldkit store" in out + err and "invoices" in out + err
    with engine.connect() as conn:
        assert sa.inspect(conn).get_table_names() == ["invoices"]
        assert conn.exec_driver_sql("SELECT count(*) FROM sqlite_master").scalar() == 1
    engine.dispose()


def _alter_a_logged_write(url: str, run_id: str) -> None:
    """Rewrite the content of the run's logged write_file in place, the append-only guards bypassed
    as the database's owner could (SQLite: triggers dropped; PostgreSQL: triggers off for the session)."""
    with Store.open(url) as store, store.engine.begin() as conn:
        if store.engine.dialect.name == "sqlite":
            for (name,) in conn.execute(sa.text("SELECT name FROM sqlite_master WHERE type = 'trigger'")).all():
                conn.execute(sa.text(f'DROP TRIGGER "{name}"'))
        else:
            conn.execute(sa.text("SET LOCAL session_replication_role = replica"))
        changed = conn.execute(sa.text(
            "UPDATE log_events SET arguments = :forged WHERE run_id = :r AND tool = 'write_file'"),
            {"r": run_id, "forged": json.dumps({"path": "report.md", "content": "# forged\n"})}).rowcount
        assert changed >= 1


def test_a_store_whose_logged_write_was_altered_is_refused(capsys, tmp_path: Path, store_url: str) -> None:
    code = run(["run", "--overlay", str(GOOD), "--agent", "oracle", "--out", str(tmp_path / "runs"),
                "--store", store_url, "--json"])
    assert code == 0
    [run_id] = [p.name for p in (tmp_path / "runs").iterdir()]
    assert cli(capsys, "report", store_url, "--replicates", "0")[0] == 0
    _alter_a_logged_write(store_url, run_id)
    code, out, err = cli(capsys, "report", store_url, "--replicates", "0")
    assert (code, out) == (1, "")
    assert f"run {run_id} in store" in err and "its record is not reported" in err
    assert "Traceback" not in err and err.count("\n") == 1

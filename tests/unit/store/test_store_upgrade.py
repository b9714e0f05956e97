"""A store written by an older worldkit is upgraded in place to schema 5 (SQLite events keyed by
`event_key`), its logs intact and every guard in force; PostgreSQL keeps its layout, runs gain keys.

The SQLite stores are dumps made by worldkit at schemas 3 and 4 (`tests/fixtures/store/`).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.unit.store.conftest import old_sqlite_store, pg_back_to_schema_4
from worldkit.store import EventLog, Store, get_run, list_runs, row_hash, verify_chain
from worldkit.store.eventlog import stored_rows
from worldkit.store.records import put_record, read_records
from worldkit.store.schema import SCHEMA_VERSION, event_key, log_events, store_meta

RUNS = ("run-1", "empty", "run-2")  # in order of creation


def _as_written(path: Path) -> tuple[dict[str, list[dict]], dict[str, tuple]]:
    """Every event (by run, in seq order) and every run row, read from the old file directly."""
    con = sqlite3.connect(path)
    con.row_factory = sqlite3.Row
    names = ", ".join(column.name for column in log_events.c)
    events = {run: [dict(row) for row in con.execute(
        f"SELECT {names} FROM log_events WHERE run_id = ? ORDER BY seq", (run,))] for run in RUNS}  # fmt: skip
    runs = {row["run_id"]: (row["seat"], row["session"], row["head_seq"], row["head_hash"],
                            row["meta"] if "meta" in row.keys() else None)
            for row in con.execute("SELECT * FROM log_runs")}  # fmt: skip
    con.close()
    return events, runs


def _raw(store: Store, sql: str) -> None:
    with store.engine.begin() as conn:
        conn.exec_driver_sql(sql)


@pytest.mark.parametrize("old", [2, 3, 4])
def test_a_sqlite_store_of_an_older_schema_is_upgraded_in_place(tmp_path: Path, old: int) -> None:
    path = tmp_path / f"schema{old}.db"
    url = old_sqlite_store(path, old)
    events, runs = _as_written(path)
    assert [len(events[run]) for run in RUNS] == [6, 0, 3]
    with Store.open(url) as store:
        with store.engine.connect() as conn:
            assert int(conn.execute(sa.select(store_meta.c.value)).scalar_one()) == SCHEMA_VERSION == 5
            table_sql = conn.exec_driver_sql("SELECT sql FROM sqlite_master WHERE name = 'log_events'").scalar()
            keys = dict(conn.exec_driver_sql("SELECT run_id, run_key FROM log_runs").all())
            ids = conn.exec_driver_sql("SELECT id, run_id, seq FROM log_events ORDER BY id").all()
        assert "WITHOUT ROWID" not in table_sql.upper()
        assert keys == {"run-1": 1, "empty": 2, "run-2": 3}  # numbered in order of creation
        assert all(key == event_key(keys[run], seq) for key, run, seq in ids) and len(ids) == 9
        for run in RUNS:  # every event as it was written, every chain and head intact
            assert list(stored_rows(store, run, 0, 10)) == events[run]
            head = get_run(store, run)
            assert (head.seat, head.session, head.sealed_seq, head.sealed_hash, None if head.meta is None
                    else '{"trusted_staged":false}') == runs[run]  # fmt: skip
            assert verify_chain(store, run, expected_head=runs[run][3] if run == "run-1" else None).ok
        assert [r.events for r in list_runs(store)] == [6, 0, 3]
        # The upgraded store goes on: the open shared run takes its next event, a new run its key.
        with EventLog(store, "run-2", "EMP-HR-001", key=None) as log:
            assert log.record("list_files", {"dir": "d4"}, "ok", None)[0] == 4
        with EventLog(store, "run-3", "EMP-QC-001", claim=True, key=None) as log:
            log.append("read_file", {"path": "new"}, "ok", None)
        assert verify_chain(store, "run-2").events == 4 and verify_chain(store, "run-3").ok
        assert get_run(store, "run-3").run_key == 4
        # Every guard is in force on the new layout.
        for sql, refused in [
            ("REPLACE INTO log_events SELECT * FROM log_events WHERE seq = 3 AND run_id = 'run-1'", "append-only"),
            ("UPDATE log_events SET arguments = '{}' WHERE seq = 2", "append-only"),
            ("DELETE FROM log_events WHERE seq = 6", "append-only"),
            ("UPDATE log_runs SET meta = '{}' WHERE run_id = 'run-1'", "head"),
            ("UPDATE log_runs SET run_key = 9 WHERE run_id = 'run-1'", "head"),
            ("REPLACE INTO log_runs SELECT 'x', seat, created_at, session, exclusive, 0, head_hash, meta, run_key "
             "FROM log_runs WHERE run_id = 'run-1'", "already claimed"),
        ]:  # fmt: skip
            with pytest.raises(sa.exc.DBAPIError, match=refused):
                _raw(store, sql)
        assert verify_chain(store, "run-1").ok and len(list(stored_rows(store, "run-1", 0, 10))) == 6
        if old == 4:  # the record stored at schema 4 reads back, checked against its log's head
            assert [r.run_id for r in read_records(store)] == ["run-1"]
        seq, head = verify_chain(store, "run-3").events, get_run(store, "run-3").hash
        put_record(store, "run-3", b"{}\n", record_schema=1, head_seq=seq, head_hash=head)
    with Store.open(url) as store:  # reopening changes nothing
        assert [r.events for r in list_runs(store)] == [6, 0, 4, 1]


def test_an_event_of_no_run_stops_the_upgrade_and_changes_nothing(tmp_path: Path) -> None:
    """Only a store edited past its guards holds one; the upgrade refuses rather than drop it."""
    path = tmp_path / "schema4.db"
    url = old_sqlite_store(path, 4)
    con = sqlite3.connect(path)
    con.execute("DROP TRIGGER log_events_insert")
    row = con.execute("SELECT * FROM log_events WHERE run_id = 'run-1' AND seq = 1").fetchone()
    con.execute(f"INSERT INTO log_events VALUES ({', '.join('?' * len(row))})", ("ghost",) + row[1:])
    con.commit()
    con.close()
    from worldkit.errors import StoreError

    with pytest.raises(StoreError, match="1 of 10 events name no run"):
        Store.open(url)
    con = sqlite3.connect(path)
    assert con.execute("SELECT value FROM store_meta").fetchone() == ("4",)
    assert con.execute("SELECT count(*) FROM log_events").fetchone() == (10,)
    con.close()


def test_a_postgresql_store_of_schema_4_gains_run_keys(store_url: str) -> None:
    if not store_url.startswith("postgresql"):
        pytest.skip("the SQLite upgrade is tested on stores written by the older worldkit above")
    with Store.open(store_url) as store:
        with EventLog(store, "run-1", "EMP-QC-001", claim=True, key=None) as log:
            for i in range(3):
                log.append("read_file", {"path": f"f{i}"}, "ok", None)
        pg_back_to_schema_4(store)
    with Store.open(store_url) as store:
        head = get_run(store, "run-1")
        assert head.seq == 3 and head.run_key is None and verify_chain(store, "run-1").ok
        with EventLog(store, "run-1b", "EMP-QC-001", key=None) as log:
            event = log.append("read_file", {"path": "g"}, "ok", None)
        assert event.hash == row_hash(next(iter(stored_rows(store, "run-1b", 0, 1))))
        with pytest.raises(sa.exc.DBAPIError, match="head"):
            _raw(store, "UPDATE log_runs SET run_key = 7")

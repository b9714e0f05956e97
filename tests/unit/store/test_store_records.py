"""Run records in the store: insert-only in the database, tied to their run's log head, upgraded in place."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.unit.store.conftest import old_sqlite_store, pg_back_to_schema_4
from worldkit.errors import LogTampered, StoreError
from worldkit.store import EventLog, Store, genesis_hash, get_run
from worldkit.store.records import count_records, put_record, read_records
from worldkit.store.schema import SCHEMA_VERSION, store_meta

SEAT = "EMP-QC-001"
RECORD = b'{"run_id":"run-1","schema_version":1}\n'


def _log(store: Store, run_id: str = "run-1", events: int = 3) -> tuple[int, str]:
    with EventLog(store, run_id, SEAT) as log:
        for i in range(events):
            log.append("read_file", {"path": f"f{i}"}, "ok", None)
    head = get_run(store, run_id)
    return head.seq, head.hash


@pytest.fixture
def recorded(store: Store) -> Store:
    seq, head = _log(store)
    put_record(store, "run-1", RECORD, record_schema=1, head_seq=seq, head_hash=head)
    return store


def _raw(store: Store, sql: str, **params) -> None:
    with store.engine.begin() as conn:
        conn.execute(sa.text(sql), params)


def test_a_record_reads_back_byte_for_byte_with_its_digest_and_head(recorded: Store) -> None:
    [stored] = read_records(recorded)
    assert stored.record_json == RECORD
    assert stored.sha256 == hashlib.sha256(RECORD).hexdigest()
    assert (stored.head_seq, stored.head_hash) == (3, get_run(recorded, "run-1").hash)
    assert read_records(recorded, ["run-1"]) == [stored] and count_records(recorded) == 1


def test_a_run_without_events_is_recorded_at_its_genesis(store: Store) -> None:
    seq, head = _log(store, "run-0", events=0)
    assert (seq, head) == (0, genesis_hash("run-0"))
    put_record(store, "run-0", RECORD, record_schema=1, head_seq=0, head_hash=head)
    assert read_records(store)[0].head_seq == 0


def test_only_the_run_ids_asked_for_are_read(recorded: Store) -> None:
    assert [r.run_id for r in read_records(recorded, ["run-1", "nope"])] == ["run-1"]
    assert read_records(recorded, ["nope"]) == []


def test_a_second_record_for_a_run_is_refused(recorded: Store) -> None:
    head = get_run(recorded, "run-1")
    with pytest.raises(StoreError, match="already has a record.*insert-only"):
        put_record(recorded, "run-1", b"{}\n", record_schema=1, head_seq=head.seq, head_hash=head.hash)
    assert read_records(recorded)[0].record_json == RECORD


def test_a_record_must_name_the_end_of_its_log(store: Store) -> None:
    seq, head = _log(store)
    with pytest.raises(StoreError, match="names log head 2 .* ends at 3"):
        put_record(store, "run-1", RECORD, record_schema=1, head_seq=2, head_hash=head)
    with pytest.raises(StoreError, match="has no event log"):
        put_record(store, "other", RECORD, record_schema=1, head_seq=seq, head_hash=head)
    assert count_records(store) == 0


def _insert_sql(verb: str = "INSERT", run_id: str = "run-1") -> str:
    return (
        f"{verb} INTO run_records (run_id, record_schema, head_seq, head_hash, record_json, sha256, "
        f"created_at) VALUES ('{run_id}', 1, :seq, :hash, :data, :sha, '2026-03-02T09:00:00.000000Z')"
    )


def test_the_database_refuses_a_raw_record_that_is_not_the_end_of_its_log(store: Store) -> None:
    seq, head = _log(store)
    for bad_seq, bad_hash in [(2, head), (3, "f" * 64), (0, genesis_hash("run-1")), (4, head)]:
        with pytest.raises(sa.exc.DBAPIError, match="must name the end of its log"):
            _raw(store, _insert_sql(), seq=bad_seq, hash=bad_hash, data=RECORD, sha="0" * 64)
    assert count_records(store) == 0


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE run_records SET record_json = :data",
        "UPDATE run_records SET sha256 = :sha",
        "DELETE FROM run_records",
        "DELETE FROM run_records WHERE run_id = 'run-1'",
    ],
)
def test_updates_and_deletes_of_records_are_refused(recorded: Store, sql: str) -> None:
    with pytest.raises(sa.exc.DBAPIError, match="insert-only"):
        _raw(recorded, sql, data=b"{}\n", sha="0" * 64)
    assert read_records(recorded)[0].record_json == RECORD


def test_replace_and_upsert_of_a_record_are_refused(recorded: Store) -> None:
    head = get_run(recorded, "run-1")
    params = {"seq": head.seq, "hash": head.hash, "data": b"{}\n", "sha": hashlib.sha256(b"{}\n").hexdigest()}
    if recorded.backend == "sqlite":
        attacks = [_insert_sql("REPLACE"), _insert_sql("INSERT OR REPLACE")]
        match = "already has a stored record"
    else:
        attacks = [_insert_sql() + " ON CONFLICT (run_id) DO UPDATE SET record_json = EXCLUDED.record_json"]
        match = "insert-only"
    attacks.append(_insert_sql() + " ON CONFLICT (run_id) DO UPDATE SET sha256 = EXCLUDED.sha256")
    for sql in attacks:
        with pytest.raises(sa.exc.DBAPIError, match=match):
            _raw(recorded, sql, **params)
    [stored] = read_records(recorded)
    assert stored.record_json == RECORD


def test_truncating_the_records_is_refused(recorded: Store) -> None:
    if recorded.backend != "postgresql":
        pytest.skip("SQLite has no TRUNCATE (DELETE without WHERE is covered above)")
    with pytest.raises(sa.exc.DBAPIError, match="insert-only"):
        _raw(recorded, "TRUNCATE run_records")


def _drop_record_guards(store: Store) -> None:
    if store.backend == "postgresql":
        _raw(store, "DROP TRIGGER run_records_immutable ON run_records")
    else:
        _raw(store, "DROP TRIGGER run_records_no_update")


def test_reading_refuses_a_record_edited_behind_the_guards(recorded: Store) -> None:
    _drop_record_guards(recorded)
    _raw(recorded, "UPDATE run_records SET record_json = :data", data=b'{"run_id":"run-1"}\n')
    with pytest.raises(LogTampered, match="does not match its sha256"):
        read_records(recorded)


def test_reading_refuses_a_record_whose_log_went_on(recorded: Store) -> None:
    with EventLog(recorded, "run-1", SEAT) as log:
        log.append("read_file", {"path": "later"}, "ok", None)
    with pytest.raises(LogTampered, match="anchored at log head 3 .* ends at 4"):
        read_records(recorded)


def _downgrade(store: Store, to: int) -> None:
    """Turn a fresh store back into one of schema `to` (2 or 3), as an older worldkit made it."""
    pg = store.backend == "postgresql"
    with store.engine.begin() as conn:
        conn.exec_driver_sql("DROP TABLE run_records" + (" CASCADE" if pg else ""))
        if pg:
            conn.exec_driver_sql("DROP FUNCTION worldkit_run_record_immutable, worldkit_run_record_anchored")
        if to == 2:
            if not pg:  # SQLite cannot drop a column a trigger names
                conn.exec_driver_sql("DROP TRIGGER log_runs_head")
            conn.exec_driver_sql("ALTER TABLE log_runs DROP COLUMN meta")
            # (PostgreSQL keeps its head trigger; the 2 → 3 step replaces the function it calls.)
        conn.execute(sa.update(store_meta).values(value=str(to)))


@pytest.mark.parametrize("old", [2, 3])
def test_a_store_of_schema_2_or_3_is_upgraded_in_place(store_url: str, old: int, tmp_path: Path) -> None:
    if store_url.startswith("sqlite"):  # a store file as that worldkit wrote it (its events' layout too)
        store_url = old_sqlite_store(tmp_path / f"schema{old}.db", old)
        with sqlite3.connect(store_url.removeprefix("sqlite:///")) as con:
            seq, head = con.execute(
                "SELECT seq, hash FROM log_events WHERE run_id = 'run-1' ORDER BY seq DESC LIMIT 1"
            ).fetchone()
            assert "run_records" not in {n for (n,) in con.execute("SELECT name FROM sqlite_master")}
    else:  # PostgreSQL keeps its events' layout: a fresh store, stepped back
        with Store.open(store_url) as store:
            seq, head = _log(store)
            pg_back_to_schema_4(store)
            _downgrade(store, old)
            names = set(sa.inspect(store.engine).get_table_names())
            assert "run_records" not in names
    with Store.open(store_url) as store:
        with store.engine.connect() as conn:
            version = conn.execute(sa.select(store_meta.c.value)).scalar_one()
        assert int(version) == SCHEMA_VERSION == 5
        assert get_run(store, "run-1").seq == seq  # the log survived the upgrade
        put_record(store, "run-1", RECORD, record_schema=1, head_seq=seq, head_hash=head)
        with pytest.raises(sa.exc.DBAPIError, match="insert-only"):
            _raw(store, "DELETE FROM run_records")
        with pytest.raises(sa.exc.DBAPIError, match="head"):
            _raw(store, "UPDATE log_runs SET meta = '{}'")  # meta is immutable after 2 → 3 too
    with Store.open(store_url) as store:  # reopening an upgraded store changes nothing
        assert [r.run_id for r in read_records(store)] == ["run-1"]


def test_a_schema_2_store_the_worldkit_of_that_time_wrote_is_upgraded_with_its_log_intact(tmp_path) -> None:
    from worldkit.store import verify_chain

    dump = Path(__file__).resolve().parents[2] / "fixtures" / "store" / "schema2.sql"
    with sqlite3.connect(tmp_path / "store.db") as con:
        con.executescript(dump.read_text(encoding="utf-8"))
        assert con.execute("SELECT value FROM store_meta").fetchone() == ("2",)
    url = f"sqlite:///{tmp_path / 'store.db'}"
    with Store.open(url) as store:
        with store.engine.connect() as conn:
            assert conn.execute(sa.select(store_meta.c.value)).scalar_one() == str(SCHEMA_VERSION)
        report = verify_chain(store, "old-run", key=None)
        assert report.ok and report.events == 3
        head = get_run(store, "old-run")
        put_record(store, "old-run", RECORD, record_schema=1, head_seq=head.seq, head_hash=head.hash)
        with pytest.raises(sa.exc.DBAPIError, match="already has a stored record"):
            _raw(store, _insert_sql("REPLACE", "old-run"), seq=head.seq, hash=head.hash, data=b"{}\n", sha="0" * 64)
        with EventLog(store, "new-run", SEAT, meta={"trusted_staged": True}) as log:
            log.append("read_file", {"path": "x"}, "ok", None)
        assert get_run(store, "new-run").meta == {"trusted_staged": True}

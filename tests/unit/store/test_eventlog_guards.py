"""The database itself keeps the log append-only: raw SQL around the API is rejected."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from worldkit.errors import StoreError
from worldkit.store import EventLog, Store, genesis_hash, verify_chain

SEAT = "EMP-QC-001"


@pytest.fixture
def logged(store: Store) -> Store:
    with EventLog(store, "run-1", SEAT) as log:
        for i in range(3):
            log.append("read_file", {"path": f"f{i}"}, "ok", None)
    return store


def _raw(store: Store, sql: str, **params) -> None:
    with store.engine.begin() as conn:
        conn.execute(sa.text(sql), params)


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE log_events SET arguments = '{}' WHERE seq = 2",
        "UPDATE log_events SET outcome = 'denied'",
        "DELETE FROM log_events WHERE seq = 3",
        "DELETE FROM log_events",
    ],
)
def test_updates_and_deletes_of_events_are_rejected(logged: Store, sql: str) -> None:
    with pytest.raises(sa.exc.DBAPIError, match="append-only"):
        _raw(logged, sql)
    assert verify_chain(logged, "run-1").ok


def test_truncating_the_events_is_rejected(logged: Store) -> None:
    if logged.backend != "postgresql":
        pytest.skip("SQLite has no TRUNCATE (DELETE without WHERE is covered above)")
    with pytest.raises(sa.exc.DBAPIError, match="append-only"):
        _raw(logged, "TRUNCATE log_events CASCADE")


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE log_runs SET head_seq = 2",  # rewind: hide the last event
        "UPDATE log_runs SET head_seq = 4",  # point past the end
        "UPDATE log_runs SET seat = 'EMP-HR-001'",
        "DELETE FROM log_runs",
    ],
)
def test_run_heads_only_move_forward_onto_stored_events(logged: Store, sql: str) -> None:
    with pytest.raises(sa.exc.DBAPIError, match="head|cannot be deleted"):
        _raw(logged, sql)
    assert verify_chain(logged, "run-1").events == 3


def _insert(store: Store, seq: int, prev_hash: str) -> None:
    # On SQLite with the key a writer must give (`event_key`: the run's key and the seq).
    key = ("id, ", "(SELECT run_key FROM log_runs WHERE run_id = 'run-1') * 4294967296 + :seq, ")
    id_column, id_value = key if store.backend == "sqlite" else ("", "")
    _raw(
        store,
        f"INSERT INTO log_events ({id_column}run_id, seq, version, time, seat, tool, arguments, outcome,"
        f" prev_hash, hash) VALUES ({id_value}'run-1', :seq, 1, '2026-03-02T09:00:00.000000Z', :seat,"
        " 't', '{}', 'ok', :prev, :hash)",
        seq=seq,
        seat=SEAT,
        prev=prev_hash,
        hash="f" * 64,
    )


def test_an_insert_that_leaves_a_gap_is_rejected(logged: Store) -> None:
    head = verify_chain(logged, "run-1").head_hash
    with pytest.raises(sa.exc.DBAPIError, match="chain"):
        _insert(logged, 5, head)


def test_an_insert_that_does_not_link_to_its_predecessor_is_rejected(logged: Store) -> None:
    with pytest.raises(sa.exc.DBAPIError, match="chain"):
        _insert(logged, 4, genesis_hash("run-1"))


def test_an_insert_over_an_existing_event_is_rejected(logged: Store) -> None:
    with pytest.raises(sa.exc.IntegrityError):
        _insert(logged, 1, genesis_hash("run-1"))


def test_a_run_whose_key_was_removed_behind_the_guards_is_refused_by_name(logged: Store) -> None:
    if logged.backend != "sqlite":
        pytest.skip("only SQLite keys events by run_key")
    with logged.engine.begin() as conn:
        conn.exec_driver_sql("DROP TRIGGER log_runs_head")
        conn.exec_driver_sql("UPDATE log_runs SET run_key = NULL")
    with pytest.raises(StoreError, match="run run-1 .* has no run_key.* edited past its guards"):
        EventLog(logged, "run-1", SEAT)

"""Store fixtures: an opened store per backend, and a way to tamper with it behind the API."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from worldkit.store import Store


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    with Store.open(store_url) as opened:
        yield opened


def drop_guards(store: Store) -> None:
    """Remove the triggers that make the log append-only, as an attacker with DDL rights could."""
    if store.backend == "postgresql":
        statements = [
            "DROP TRIGGER log_events_append_only ON log_events",
            "DROP TRIGGER log_runs_head ON log_runs",
        ]
    else:
        statements = [
            "DROP TRIGGER log_events_no_update",
            "DROP TRIGGER log_events_no_delete",
            "DROP TRIGGER log_runs_head",
        ]
    with store.engine.begin() as conn:
        for statement in statements:
            conn.exec_driver_sql(statement)


@pytest.fixture
def tamper(store: Store) -> Callable[..., None]:
    """Run raw SQL against the store with the log's guards dropped first."""
    dropped = False

    def run(sql: str, **params: Any) -> None:
        nonlocal dropped
        import sqlalchemy as sa

        if not dropped:
            drop_guards(store)
            dropped = True
        with store.engine.begin() as conn:
            conn.execute(sa.text(sql), params)

    return run


OLD_STORES = Path(__file__).parents[2] / "fixtures" / "store"


def old_sqlite_store(path: Path, version: int) -> str:
    """A SQLite store file at `path` as worldkit at store schema `version` wrote it (2, 3 or 4).

    3 and 4 are SQL dumps made by those versions' own code (`tests/fixtures/store/schemaN.sql`:
    runs `run-1` claimed and closed with 6 events, `empty`, `run-2` shared and left open with 3;
    at 4 also a record of run-1); 2 is the schema-3 store without `meta`, as schema 2 had it.
    """
    con = sqlite3.connect(path)
    try:
        con.executescript((OLD_STORES / f"schema{max(version, 3)}.sql").read_text())
        if version == 2:
            con.execute("DROP TRIGGER log_runs_head")  # SQLite cannot drop a column a trigger names
            con.execute("ALTER TABLE log_runs DROP COLUMN meta")
            con.execute("UPDATE store_meta SET value = '2' WHERE key = 'schema_version'")
            con.commit()
    finally:
        con.close()
    return f"sqlite:///{path}"


def pg_back_to_schema_4(store: Store) -> None:
    """Undo the 4 → 5 step on PostgreSQL, whose events keep their layout: runs lose `run_key`."""
    with store.engine.begin() as conn:
        conn.exec_driver_sql("DROP INDEX log_runs_run_key")
        conn.exec_driver_sql("ALTER TABLE log_runs DROP COLUMN run_key")
        conn.exec_driver_sql("UPDATE store_meta SET value = '4' WHERE key = 'schema_version'")

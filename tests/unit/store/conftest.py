"""Store fixtures: an opened store per backend, and a way to tamper with it behind the API."""

from __future__ import annotations

from collections.abc import Callable, Iterator
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

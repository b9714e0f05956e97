"""Runs of the event log: which runs exist, whose seat each belongs to, and where each chain ends.

A run's row holds its head (seq and hash of the last event), which the database only lets move
forward onto a stored event; it is also the row writers lock to take turns on one run.
This module must never write events or move a head; `eventlog` does both, in one transaction.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import sqlalchemy as sa
from pydantic import AwareDatetime, BaseModel, ConfigDict
from sqlalchemy.engine import Connection

from worldkit.errors import StoreError, UsageError
from worldkit.store.db import format_time, parse_time, utc_now
from worldkit.store.schema import log_events, log_runs

if TYPE_CHECKING:
    from worldkit.store.db import Store

RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@+-]{0,127}")


class RunSummary(BaseModel):
    """One run of the event log, as `worldkit log list` shows it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str
    """The run's id (unique in the store)."""
    seat: str
    """The seat every event of the run acts as."""
    created_at: AwareDatetime
    """When the run's log was opened (UTC)."""
    events: int
    """Number of events in the run (its head sequence number)."""
    head_hash: str
    """Hash of the last event, or the run's genesis hash if it has none."""
    last_time: AwareDatetime | None
    """Time of the last event, or None if the run has no events."""


class Head(BaseModel):
    """Where a run's chain ends: the next event gets `seq + 1` and `prev_hash = hash`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str
    """The run."""
    seat: str
    """The seat the run belongs to."""
    seq: int
    """Sequence number of the last event (0 before the first)."""
    hash: str
    """Hash of the last event (the genesis hash before the first)."""


def check_run_id(run_id: str) -> str:
    if not isinstance(run_id, str) or not RUN_ID.fullmatch(run_id):
        raise UsageError(
            f"run id {run_id!r} is not valid; use 1-128 letters, digits and . _ : @ + - "
            "(starting with a letter or digit)"
        )
    return run_id


def ensure_run(conn: Connection, run_id: str, seat: str, genesis: str) -> Head:
    """Create the run if it is new; refuse to reuse a run id for another seat."""
    if not isinstance(seat, str) or not seat.strip() or len(seat) > 200:
        raise StoreError(f"seat {seat!r} of run {run_id} must be a non-empty string (≤ 200 chars)")
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    conn.execute(
        insert(log_runs)
        .values(
            run_id=run_id,
            seat=seat,
            created_at=format_time(utc_now()),
            head_seq=0,
            head_hash=genesis,
        )
        .on_conflict_do_nothing(index_elements=["run_id"])
    )
    head = read_head(conn, run_id)
    if head is None:  # pragma: no cover - the insert above guarantees the row
        raise StoreError(f"run {run_id} could not be created in the store")
    if head.seat != seat:
        raise StoreError(
            f"run {run_id} already belongs to seat {head.seat}, not {seat}; a run acts as one "
            "seat: start a new run id for this seat"
        )
    return head


def read_head(conn: Connection, run_id: str, *, lock: bool = False) -> Head | None:
    """The run's head; with `lock`, hold the run's row until the transaction ends (PostgreSQL)."""
    query = sa.select(log_runs.c.seat, log_runs.c.head_seq, log_runs.c.head_hash).where(
        log_runs.c.run_id == run_id
    )
    if lock and conn.dialect.name == "postgresql":
        query = query.with_for_update()
    row = conn.execute(query).one_or_none()
    if row is None:
        return None
    return Head(run_id=run_id, seat=row.seat, seq=row.head_seq, hash=row.head_hash)


def get_run(store: Store, run_id: str) -> Head:
    """The head of an existing run; an unknown run id is a usage error naming the fix."""
    with store.guard("read"), store.engine.connect() as conn:
        head = read_head(conn, run_id)
    if head is None:
        raise UsageError(
            f"no run {run_id!r} in store {store.url}; `worldkit log list` shows the runs it holds"
        )
    return head


def list_runs(store: Store) -> list[RunSummary]:
    """Every run in the store, oldest first (ties by run id)."""
    last = log_events.alias("last")
    query = (
        sa.select(
            log_runs.c.run_id,
            log_runs.c.seat,
            log_runs.c.created_at,
            log_runs.c.head_seq,
            log_runs.c.head_hash,
            last.c.time,
        )
        .select_from(
            log_runs.outerjoin(
                last,
                sa.and_(last.c.run_id == log_runs.c.run_id, last.c.seq == log_runs.c.head_seq),
            )
        )
        .order_by(log_runs.c.created_at, log_runs.c.run_id)
    )
    with store.guard("read"), store.engine.connect() as conn:
        rows = conn.execute(query).all()
    return [
        RunSummary(
            run_id=row.run_id,
            seat=row.seat,
            created_at=parse_time(row.created_at),
            events=row.head_seq,
            head_hash=row.head_hash,
            last_time=parse_time(row.time) if row.time is not None else None,
        )
        for row in rows
    ]

"""Runs of the event log: which runs exist, whose seat each belongs to, and where each chain ends.

A run's row holds who created it (its session; an exclusive run is claimed by one server) and its
sealed head (seq and hash of the last event when a writer closed the log), which the database
only lets move forward onto a stored event. The live head is the run's last stored event.
This module must never write events or move a head; `eventlog` does both.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from pydantic import AwareDatetime, BaseModel, ConfigDict
from sqlalchemy.engine import Connection

from worldkit.canon import canonical_json
from worldkit.errors import StoreError, UsageError
from worldkit.store.times import format_time, parse_time, utc_now
from worldkit.store.schema import events_table, log_runs, order_column, run_events

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
    """Number of events in the run (its last stored sequence number)."""
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
    """Sequence number of the last stored event (0 before the first)."""
    hash: str
    """Hash of the last stored event (the genesis hash before the first)."""
    sealed_seq: int = 0
    """Seq of the head a writer sealed when it closed the log (0 if none was sealed)."""
    sealed_hash: str = ""
    """Hash of the sealed head (the genesis hash if none was sealed)."""
    session: str = ""
    """The session that created the run."""
    exclusive: bool = False
    """True if the run was claimed by one server: only its session may append."""
    meta: dict[str, Any] | None = None
    """How the run was started (e.g. `trusted_staged`), fixed when it was created."""
    run_key: int | None = None
    """The run's number in its events' keys on SQLite (`schema.event_key`); None on PostgreSQL."""


class RunIdTaken(UsageError):
    """A run id that another server (or an earlier run) already claimed."""


def check_run_id(run_id: str) -> str:
    if not isinstance(run_id, str) or not RUN_ID.fullmatch(run_id):
        raise UsageError(
            f"run id {run_id!r} is not valid; use 1-128 letters, digits and . _ : @ + - "
            "(starting with a letter or digit)"
        )
    return run_id


def _check_seat(run_id: str, seat: str) -> None:
    if not isinstance(seat, str) or not seat.strip() or len(seat) > 200:
        raise StoreError(f"seat {seat!r} of run {run_id} must be a non-empty string (≤ 200 chars)")


def _insert_run(
    conn: Connection, run_id: str, seat: str, genesis: str, session: str, exclusive: bool,
    meta: Mapping[str, Any] | None = None,
) -> bool:  # fmt: skip
    """Insert the run's row; False if the run id exists (the unique key or the guard refused)."""
    values = {
        "run_id": run_id, "seat": seat, "created_at": format_time(utc_now()),
        "session": session, "exclusive": int(exclusive), "head_seq": 0, "head_hash": genesis,
        "meta": None if meta is None else canonical_json(dict(meta))[:-1],
    }  # fmt: skip
    if conn.dialect.name == "sqlite":
        # The next number after the largest: the caller holds SQLite's write lock, so no other
        # run is numbered meanwhile (the insert guard refuses a number that is taken anyway).
        values["run_key"] = sa.select(sa.func.coalesce(sa.func.max(log_runs.c.run_key), 0) + 1).scalar_subquery()
    nested = conn.begin_nested()
    try:
        conn.execute(sa.insert(log_runs).values(**values))
    except sa.exc.IntegrityError:
        nested.rollback()
        return False
    nested.commit()
    return True


def claim_run(
    conn: Connection, run_id: str, seat: str, genesis: str, session: str, meta: Mapping[str, Any] | None = None
) -> Head:
    """Create the run for `session` alone; a run id that exists in any form is refused.

    The run id is the table's primary key, so of two servers starting with one id at once,
    exactly one insert succeeds.
    """
    _check_seat(run_id, seat)
    if not _insert_run(conn, run_id, seat, genesis, session, True, meta):
        head = read_head(conn, run_id)
        since = f" (seat {head.seat}, {head.seq} events)" if head is not None else ""
        raise RunIdTaken(
            f"run id {run_id} is already claimed in the event log{since}; another server may be "
            "using it, or an earlier run did: give a new --run-id (or omit it for a fresh one)"
        )
    head = read_head(conn, run_id)
    assert head is not None
    return head


def ensure_run(
    conn: Connection, run_id: str, seat: str, genesis: str, session: str = "0" * 32,
    meta: Mapping[str, Any] | None = None,
) -> Head:  # fmt: skip
    """Create the run if it is new, or join it; refuse another seat and a claimed run."""
    _check_seat(run_id, seat)
    head = read_head(conn, run_id)
    if head is None:
        _insert_run(conn, run_id, seat, genesis, session, False, meta)
        head = read_head(conn, run_id)
    if head is None:  # pragma: no cover - the insert above guarantees the row
        raise StoreError(f"run {run_id} could not be created in the store")
    if head.seat != seat:
        raise StoreError(
            f"run {run_id} already belongs to seat {head.seat}, not {seat}; a run acts as one "
            "seat: start a new run id for this seat"
        )
    if head.exclusive:
        raise RunIdTaken(
            f"run {run_id} is claimed by one server (session {head.session[:8]}…); it cannot be "
            "joined: use a new run id"
        )
    return head


def _last_event(dialect: sa.Dialect) -> sa.Select:
    table = events_table(dialect)
    return (
        sa.select(table.c.seq, table.c.hash)
        .where(*run_events(table, sa.bindparam("run_id")))
        .order_by(order_column(table).desc())
        .limit(1)
    )


def read_head(conn: Connection, run_id: str, *, lock: bool = False) -> Head | None:
    """The run's head (its last stored event); with `lock`, hold the run's row (PostgreSQL)."""
    query = sa.select(
        log_runs.c.seat, log_runs.c.head_seq, log_runs.c.head_hash, log_runs.c.session,
        log_runs.c.exclusive, log_runs.c.meta, log_runs.c.run_key,
    ).where(log_runs.c.run_id == run_id)  # fmt: skip
    if lock and conn.dialect.name == "postgresql":
        # FOR NO KEY UPDATE: writers of the run queue on it, while a lone writer's INSERT (whose
        # foreign-key check takes FOR KEY SHARE on this row) is not blocked by it; a plain FOR
        # UPDATE conflicts with those checks and four writers deadlocked on it. The chain guard
        # and the (run_id, seq) key keep concurrent appends in one chain, not this lock.
        query = query.with_for_update(key_share=True)
    row = conn.execute(query).one_or_none()
    if row is None:
        return None
    last = conn.execute(_last_event(conn.dialect), {"run_id": run_id}).one_or_none()
    seq, last_hash = (last.seq, last.hash) if last is not None else (0, row.head_hash)
    return Head(
        run_id=run_id, seat=row.seat, seq=seq, hash=last_hash, sealed_seq=row.head_seq,
        sealed_hash=row.head_hash, session=row.session, exclusive=bool(row.exclusive),
        meta=_meta(row.meta), run_key=row.run_key,
    )  # fmt: skip


def _meta(text: str | None) -> dict[str, Any] | None:
    if text is None:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return {"unreadable": text[:200]}
    return value if isinstance(value, dict) else {"value": value}


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
    table = events_table(store.engine.dialect)
    last, inner = table.alias("last"), table.alias("newest")
    newest = (
        sa.select(sa.func.max(order_column(inner)))
        .where(*run_events(inner, log_runs.c.run_id, run_key=log_runs.c.run_key))
        .scalar_subquery()
    )
    query = (
        sa.select(
            log_runs.c.run_id,
            log_runs.c.seat,
            log_runs.c.created_at,
            sa.func.coalesce(last.c.seq, 0).label("head_seq"),
            sa.func.coalesce(last.c.hash, log_runs.c.head_hash).label("head_hash"),
            last.c.time,
        )
        .select_from(
            log_runs.outerjoin(
                last, sa.and_(last.c.run_id == log_runs.c.run_id, order_column(last) == newest)
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

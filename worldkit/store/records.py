"""Runs' execution records in the store: stored once beside their event log, read back checked.

A record is kept as the exact bytes a run wrote (canonical JSON) with their SHA-256 and the head
its final log anchor names; the database refuses a second record for a run, any update or
delete, and a head that is not the end of the run's log (see `schema`). Reading checks again:
the bytes must hash to the stored digest and the head must still be the end of the run's log, so
a record cannot be passed off for a log that went on, was cut short, or was rewritten.
This module must never parse what a record says: the run layer owns the record's format.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

import sqlalchemy as sa
from pydantic import AwareDatetime, BaseModel, ConfigDict

from worldkit.errors import LogTampered, StoreError
from worldkit.store.runs import check_run_id, read_head
from worldkit.store.schema import run_records as table
from worldkit.store.times import format_time, parse_time, utc_now

if TYPE_CHECKING:
    from worldkit.store.db import Store

__all__ = ["StoredRecord", "count_records", "put_record", "read_records"]

_HEX64 = re.compile(r"[0-9a-f]{64}")


class StoredRecord(BaseModel):
    """One run's stored execution record, its digest checked and its head matched to the log."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str
    """The run (also the id of its event log in the store)."""
    record_schema: int
    """The record's format version."""
    head_seq: int
    """Seq of the log head the record's final anchor names (0: the run logged no event)."""
    head_hash: str
    """Hash of that head (the run's genesis hash when `head_seq` is 0)."""
    sha256: str
    """SHA-256 (hex) of `record_json`."""
    created_at: AwareDatetime
    """When the record was stored (UTC); not part of any digest."""
    record_json: bytes
    """The record exactly as stored (canonical JSON, UTF-8)."""


def put_record(
    store: Store, run_id: str, record_json: bytes, *, record_schema: int, head_seq: int, head_hash: str
) -> StoredRecord:
    """Store the record of `run_id`, whose final anchor names head (`head_seq`, `head_hash`).

    The run's log must be in this store and end at that head; a run has one record, for good.
    """
    check_run_id(run_id)
    if head_seq < 0 or not _HEX64.fullmatch(head_hash):
        raise StoreError(f"record of run {run_id}: head {head_seq}/{head_hash!r} is not a log head")
    digest = hashlib.sha256(record_json).hexdigest()
    values = {
        "run_id": run_id, "record_schema": record_schema, "head_seq": head_seq, "head_hash": head_hash,
        "record_json": record_json, "sha256": digest, "created_at": format_time(utc_now()),
    }  # fmt: skip
    with store.guard("write to"), store.write() as conn:
        head = read_head(conn, run_id)
        if head is None:
            raise StoreError(
                f"run {run_id} has no event log in store {store.url}; a record is stored in the "
                "store that holds its log (the same --store as the run)"
            )
        if (head.seq, head.hash) != (head_seq, head_hash):
            raise StoreError(
                f"record of run {run_id} names log head {head_seq} ({head_hash[:12]}…) but the log "
                f"in store {store.url} ends at {head.seq} ({head.hash[:12]}…); store the record "
                "only after the run's log is closed"
            )
        exists = conn.execute(sa.select(table.c.sha256).where(table.c.run_id == run_id)).scalar()
        if exists is not None:
            raise StoreError(
                f"run {run_id} already has a record in store {store.url} (sha256 {exists[:12]}…); "
                "records are insert-only: re-run the task under a new run id"
            )
        conn.execute(sa.insert(table).values(**values))
    return StoredRecord(**{**values, "created_at": parse_time(values["created_at"])})


def count_records(store: Store) -> int:
    """How many run records the store holds."""
    with store.guard("read"), store.engine.connect() as conn:
        return int(conn.execute(sa.select(sa.func.count()).select_from(table)).scalar_one())


def read_records(store: Store, run_ids: Iterable[str] | None = None) -> list[StoredRecord]:
    """The stored records (of `run_ids`, else all), sorted by run id, each checked: its bytes
    hash to its digest and its head is the end of its run's log, else `LogTampered`.

    Ids in `run_ids` without a record are left out (the caller names them).
    """
    wanted = None if run_ids is None else sorted(set(run_ids))
    query = sa.select(table).order_by(table.c.run_id)
    if wanted is not None:
        query = query.where(table.c.run_id.in_(wanted))
    checked: list[StoredRecord] = []
    with store.guard("read"), store.engine.connect() as conn:
        rows = conn.execute(query).all()
        for row in rows:
            data = bytes(row.record_json)
            if hashlib.sha256(data).hexdigest() != row.sha256:
                raise LogTampered(
                    f"record of run {row.run_id} in store {store.url} does not match its sha256 "
                    f"({row.sha256[:12]}…): the record was altered after it was stored"
                )
            head = read_head(conn, row.run_id)
            live = (head.seq, head.hash) if head is not None else None
            if live != (row.head_seq, row.head_hash):
                where = f"ends at {live[0]} ({live[1][:12]}…)" if live else "is missing"
                raise LogTampered(
                    f"record of run {row.run_id} in store {store.url} was anchored at log head "
                    f"{row.head_seq} ({row.head_hash[:12]}…) but the run's log {where}: the log was "
                    "extended, cut short or rewritten after the record; `worldkit log verify "
                    f"{row.run_id}` names the first bad event"
                )
            checked.append(
                StoredRecord(
                    run_id=row.run_id, record_schema=row.record_schema, head_seq=row.head_seq,
                    head_hash=row.head_hash, sha256=row.sha256, created_at=parse_time(row.created_at),
                    record_json=data,
                )  # fmt: skip
            )
    return checked

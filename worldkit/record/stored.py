"""Execution records kept in a store, beside the run's event log.

`store_record` puts a run's record (canonical JSON) into the store that holds its log, naming the
head its final anchor names; the store keeps it insert-only and only at the end of the log.
`worldkit.report.records` reads them back.
"""

from __future__ import annotations

from worldkit.canon import canonical_bytes
from worldkit.errors import UsageError
from worldkit.record.execution import ExecutionRecord
from worldkit.store import Store, put_record

__all__ = ["store_record"]


def store_record(store: Store, record: ExecutionRecord) -> None:
    """Keep `record` in `store`, tied to its run's log by the head of its final anchor."""
    anchor = record.log_anchor or {}
    if not anchor.get("final") or anchor.get("run_id") != record.run_id:
        raise UsageError(f"run {record.run_id}: only a record with its log's final anchor is stored")
    put_record(store, record.run_id, canonical_bytes(record.model_dump(mode="json")),
               record_schema=record.schema_version, head_seq=int(anchor["seq"]),
               head_hash=str(anchor["hash"]))

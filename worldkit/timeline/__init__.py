"""The world as of a date: what exists on D, and every record folded to its state on D."""

from worldkit.timeline.asof import RecordView, Snapshot, as_of, document_exists, fold_record, shared_snapshots

__all__ = ["RecordView", "Snapshot", "as_of", "document_exists", "fold_record", "shared_snapshots"]

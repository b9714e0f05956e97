"""The store: loaded revisions, runs with their event logs and records, in SQLite (default) or PostgreSQL.

Open one with `Store.open(url)` and pass it to whatever needs it; there is no global store.
Nothing in this package imports the CLI, the MCP servers or anything above the store layer.
"""

from worldkit.store.anchor import (
    ANCHOR_FILENAME,
    KEY_ENV_VAR,
    SIGNING_KEY_ENV_VAR,
    VERIFY_KEY_ENV_VAR,
    Ed25519Key,
    HmacKey,
    LogAnchor,
    log_key,
    make_anchor,
    read_anchor,
    write_anchor,
)
from worldkit.store.chain import (
    ChainProblem,
    ChainReport,
    require_intact,
    state_changes,
    verified_events,
    verify_chain,
    verify_exported,
)
from worldkit.store.db import ENV_VAR, Store, create_engine, describe_url, resolve_url
from worldkit.store.eventlog import (
    LOG_VERSION,
    Event,
    EventInput,
    EventLog,
    EventSink,
    Outcome,
    genesis_hash,
    read_events,
    row_hash,
)
from worldkit.store.records import StoredRecord, count_records, put_record, read_records
from worldkit.store.revisions import RevisionInfo, StoredRevision
from worldkit.store.runs import Head, RunIdTaken, RunSummary, get_run, list_runs
from worldkit.store.schema import SCHEMA_VERSION

__all__ = [
    "ANCHOR_FILENAME",
    "ENV_VAR",
    "KEY_ENV_VAR",
    "SIGNING_KEY_ENV_VAR",
    "VERIFY_KEY_ENV_VAR",
    "Ed25519Key",
    "HmacKey",
    "LogAnchor",
    "RunIdTaken",
    "log_key",
    "make_anchor",
    "read_anchor",
    "verified_events",
    "verify_exported",
    "write_anchor",
    "LOG_VERSION",
    "SCHEMA_VERSION",
    "ChainProblem",
    "ChainReport",
    "Event",
    "EventInput",
    "EventLog",
    "EventSink",
    "Head",
    "Outcome",
    "RevisionInfo",
    "RunSummary",
    "Store",
    "StoredRecord",
    "StoredRevision",
    "count_records",
    "put_record",
    "read_records",
    "create_engine",
    "describe_url",
    "genesis_hash",
    "get_run",
    "list_runs",
    "read_events",
    "require_intact",
    "resolve_url",
    "row_hash",
    "state_changes",
    "verify_chain",
]

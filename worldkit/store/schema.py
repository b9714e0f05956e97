"""The store's tables (SQLAlchemy Core) and the database-side guards that keep the log honest.

The guards are triggers on both backends: events can be inserted only as the next link of their
run's chain and never updated or deleted; a run's sealed head can only move forward onto a stored
event. On SQLite, `REPLACE`/`INSERT OR REPLACE` and upserts would overwrite a row without firing a
delete trigger, so BEFORE INSERT triggers refuse any insert whose key already exists (an event of
that run and seq, or a run id already claimed). Guards stop casual edits; someone with DDL rights
can drop them, which is what the hash chain and the anchor outside the database are for.

Run records (schema 4) are insert-only in the same way: a run's execution record is stored once,
never replaced, updated or deleted, and only while its anchored head is the end of its run's log.
This module must never hold data or open connections of its own: it describes, `install` creates.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import Connection

#: Bumped whenever a table or trigger changes; a store of another version is refused.
SCHEMA_VERSION = 4

metadata = sa.MetaData()

store_meta = sa.Table(
    "store_meta",
    metadata,
    sa.Column("key", sa.String(64), primary_key=True),
    sa.Column("value", sa.Text, nullable=False),
)

revisions = sa.Table(
    "revisions",
    metadata,
    sa.Column("world", sa.String(200), primary_key=True),
    sa.Column("name", sa.String(200), primary_key=True),
    sa.Column("digest", sa.String(64), nullable=False),
    sa.Column("parent", sa.String(200), nullable=True),
    sa.Column("state_json", sa.LargeBinary, nullable=False),
    sa.Column("size", sa.BigInteger, nullable=False),
    sa.Column("stored_at", sa.String(32), nullable=False),
)

log_runs = sa.Table(
    "log_runs",
    metadata,
    sa.Column("run_id", sa.String(128), primary_key=True),
    sa.Column("seat", sa.String(200), nullable=False),
    sa.Column("created_at", sa.String(32), nullable=False),
    # The session that created (and, if exclusive, owns) the run; every event names its session.
    sa.Column("session", sa.String(32), nullable=False),
    # 1: claimed by one server, only its session may append; 0: shared by cooperating writers.
    sa.Column("exclusive", sa.SmallInteger, nullable=False),
    # The sealed head: seq and hash of the last event when a writer closed the log (0 and the
    # genesis hash until then). The live head is the run's last stored event.
    sa.Column("head_seq", sa.BigInteger, nullable=False),
    sa.Column("head_hash", sa.String(64), nullable=False),
    # How the run was started, as canonical JSON (e.g. `{"trusted_staged": true, ...}` for a server
    # given --trust-staged); fixed when the run is created, like every other field but the head.
    sa.Column("meta", sa.Text, nullable=True),
)

log_events = sa.Table(
    "log_events",
    metadata,
    sa.Column(
        "run_id", sa.String(128), sa.ForeignKey("log_runs.run_id"), primary_key=True
    ),
    sa.Column("seq", sa.BigInteger, primary_key=True, autoincrement=False),
    sa.Column("version", sa.SmallInteger, nullable=False),
    sa.Column("time", sa.String(32), nullable=False),
    sa.Column("seat", sa.String(200), nullable=False),
    sa.Column("session", sa.String(32), nullable=False),
    sa.Column("tool", sa.String(200), nullable=False),
    sa.Column("arguments", sa.Text, nullable=False),
    sa.Column("outcome", sa.String(16), nullable=False),
    sa.Column("result_digest", sa.String(64), nullable=True),
    sa.Column("detail", sa.Text, nullable=True),
    sa.Column("state_change", sa.Text, nullable=True),
    sa.Column("prev_hash", sa.String(64), nullable=False),
    sa.Column("hash", sa.String(64), nullable=False),
    sa.CheckConstraint("seq >= 1", name="log_events_seq_positive"),
    sa.CheckConstraint("outcome IN ('ok', 'denied', 'error')", name="log_events_outcome"),
    # Clustered on (run_id, seq) in SQLite: one B-tree to write per append, range reads by run.
    sqlite_with_rowid=False,
)

run_records = sa.Table(
    "run_records",
    metadata,
    sa.Column(
        "run_id", sa.String(128), sa.ForeignKey("log_runs.run_id"), primary_key=True
    ),
    # The record's own format version (`worldkit.run.record.RECORD_SCHEMA_VERSION`).
    sa.Column("record_schema", sa.SmallInteger, nullable=False),
    # The head the record's final log anchor names; when stored it was the end of the run's log.
    sa.Column("head_seq", sa.BigInteger, nullable=False),
    sa.Column("head_hash", sa.String(64), nullable=False),
    # The record as canonical JSON (UTF-8) and the SHA-256 of exactly those bytes.
    sa.Column("record_json", sa.LargeBinary, nullable=False),
    sa.Column("sha256", sa.String(64), nullable=False),
    sa.Column("created_at", sa.String(32), nullable=False),
    sa.CheckConstraint("head_seq >= 0", name="run_records_head_seq"),
)

APPEND_ONLY_MESSAGE = "worldkit: the event log is append-only; events cannot be updated or deleted"

EXISTING_EVENT_MESSAGE = (
    "worldkit: the event log is append-only; an event with this run id and seq exists "
    "(REPLACE and UPSERT are refused)"
)
CLAIMED_RUN_MESSAGE = (
    "worldkit: this run id is already claimed in the event log (REPLACE and UPSERT are refused)"
)

RECORD_IMMUTABLE_MESSAGE = (
    "worldkit: run records are insert-only; a stored record cannot be updated or deleted"
)
EXISTING_RECORD_MESSAGE = (
    "worldkit: this run already has a stored record (REPLACE and UPSERT are refused)"
)
UNANCHORED_RECORD_MESSAGE = (
    "worldkit: a run record must name the end of its log (head seq and hash of its last "
    "stored event, or seq 0 for a run without events)"
)

# True when a new record's head is not the end of its run's log: the run is unknown, an event
# follows the head, or the head is neither a stored event nor (seq 0) the unsealed genesis.
_UNANCHORED = """NOT EXISTS (SELECT 1 FROM log_runs WHERE run_id = NEW.run_id)
            OR EXISTS (SELECT 1 FROM log_events WHERE run_id = NEW.run_id AND seq > NEW.head_seq)
            OR (NEW.head_seq > 0 AND NOT EXISTS (SELECT 1 FROM log_events
                WHERE run_id = NEW.run_id AND seq = NEW.head_seq AND hash = NEW.head_hash))
            OR (NEW.head_seq = 0 AND NOT EXISTS (SELECT 1 FROM log_runs
                WHERE run_id = NEW.run_id AND head_seq = 0 AND head_hash = NEW.head_hash))"""

_SQLITE_RECORD_GUARDS = [
    f"""CREATE TRIGGER IF NOT EXISTS run_records_no_update BEFORE UPDATE ON run_records
    BEGIN SELECT RAISE(ABORT, '{RECORD_IMMUTABLE_MESSAGE}'); END""",
    f"""CREATE TRIGGER IF NOT EXISTS run_records_no_delete BEFORE DELETE ON run_records
    BEGIN SELECT RAISE(ABORT, '{RECORD_IMMUTABLE_MESSAGE}'); END""",
    f"""CREATE TRIGGER IF NOT EXISTS run_records_insert BEFORE INSERT ON run_records
    BEGIN
        SELECT RAISE(ABORT, '{EXISTING_RECORD_MESSAGE}') WHERE EXISTS (
            SELECT 1 FROM run_records WHERE run_id = NEW.run_id);
        SELECT RAISE(ABORT, '{UNANCHORED_RECORD_MESSAGE}')
        WHERE {_UNANCHORED};
    END""",
]

_POSTGRES_RECORD_GUARDS = [
    f"""CREATE OR REPLACE FUNCTION worldkit_run_record_immutable() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        RAISE EXCEPTION '{RECORD_IMMUTABLE_MESSAGE} (% on %)', TG_OP, TG_TABLE_NAME
            USING ERRCODE = 'integrity_constraint_violation';
    END $$""",
    f"""CREATE OR REPLACE FUNCTION worldkit_run_record_anchored() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        IF {_UNANCHORED} THEN
            RAISE EXCEPTION '{UNANCHORED_RECORD_MESSAGE} (run %)', NEW.run_id
                USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        RETURN NEW;
    END $$""",
    """CREATE TRIGGER run_records_immutable BEFORE UPDATE OR DELETE ON run_records
    FOR EACH ROW EXECUTE FUNCTION worldkit_run_record_immutable()""",
    """CREATE TRIGGER run_records_no_truncate BEFORE TRUNCATE ON run_records
    FOR EACH STATEMENT EXECUTE FUNCTION worldkit_run_record_immutable()""",
    """CREATE TRIGGER run_records_anchored BEFORE INSERT ON run_records
    FOR EACH ROW EXECUTE FUNCTION worldkit_run_record_anchored()""",
]

_SQLITE_GUARDS = [
    f"""CREATE TRIGGER IF NOT EXISTS log_events_no_update BEFORE UPDATE ON log_events
    BEGIN SELECT RAISE(ABORT, '{APPEND_ONLY_MESSAGE}'); END""",
    f"""CREATE TRIGGER IF NOT EXISTS log_events_no_delete BEFORE DELETE ON log_events
    BEGIN SELECT RAISE(ABORT, '{APPEND_ONLY_MESSAGE}'); END""",
    # One trigger for both insert rules: REPLACE fires BEFORE INSERT (never a delete trigger)
    # while the old row still exists, so refusing an existing key refuses the overwrite.
    f"""CREATE TRIGGER IF NOT EXISTS log_events_insert BEFORE INSERT ON log_events
    BEGIN
        SELECT RAISE(ABORT, '{EXISTING_EVENT_MESSAGE}') WHERE EXISTS (
            SELECT 1 FROM log_events WHERE run_id = NEW.run_id AND seq = NEW.seq);
        SELECT RAISE(ABORT,
            'worldkit: an event must extend its run''s chain (seq - 1 stored, prev_hash its hash)')
        WHERE NEW.seq <> 1 AND NOT EXISTS (
            SELECT 1 FROM log_events
            WHERE run_id = NEW.run_id AND seq = NEW.seq - 1 AND hash = NEW.prev_hash);
        SELECT RAISE(ABORT, 'worldkit: an event must belong to a run of the event log')
        WHERE NEW.seq = 1 AND NOT EXISTS (SELECT 1 FROM log_runs WHERE run_id = NEW.run_id);
    END""",
    f"""CREATE TRIGGER IF NOT EXISTS log_runs_insert BEFORE INSERT ON log_runs
    WHEN EXISTS (SELECT 1 FROM log_runs WHERE run_id = NEW.run_id)
    BEGIN SELECT RAISE(ABORT, '{CLAIMED_RUN_MESSAGE}'); END""",
    """CREATE TRIGGER IF NOT EXISTS log_runs_head BEFORE UPDATE ON log_runs
    WHEN NEW.run_id IS NOT OLD.run_id OR NEW.seat IS NOT OLD.seat
        OR NEW.created_at IS NOT OLD.created_at OR NEW.session IS NOT OLD.session
        OR NEW.exclusive IS NOT OLD.exclusive OR NEW.meta IS NOT OLD.meta OR NEW.head_seq <= OLD.head_seq
        OR NOT EXISTS (SELECT 1 FROM log_events
            WHERE run_id = NEW.run_id AND seq = NEW.head_seq AND hash = NEW.head_hash)
    BEGIN SELECT RAISE(ABORT,
        'worldkit: a run''s head can only move forward onto a stored event');
    END""",
    """CREATE TRIGGER IF NOT EXISTS log_runs_no_delete BEFORE DELETE ON log_runs
    BEGIN SELECT RAISE(ABORT, 'worldkit: runs of the event log cannot be deleted'); END""",
]

_POSTGRES_GUARDS = [
    f"""CREATE OR REPLACE FUNCTION worldkit_log_append_only() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        RAISE EXCEPTION '{APPEND_ONLY_MESSAGE} (% on %)', TG_OP, TG_TABLE_NAME
            USING ERRCODE = 'integrity_constraint_violation';
    END $$""",
    """CREATE OR REPLACE FUNCTION worldkit_log_chain() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        IF NEW.seq <> 1 AND NOT EXISTS (
            SELECT 1 FROM log_events
            WHERE run_id = NEW.run_id AND seq = NEW.seq - 1 AND hash = NEW.prev_hash) THEN
            RAISE EXCEPTION 'worldkit: event % of run % does not extend its chain', NEW.seq,
                NEW.run_id USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        RETURN NEW;
    END $$""",
    """CREATE OR REPLACE FUNCTION worldkit_log_run_head() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'DELETE' THEN
            RAISE EXCEPTION 'worldkit: runs of the event log cannot be deleted'
                USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        IF NEW.run_id IS DISTINCT FROM OLD.run_id OR NEW.seat IS DISTINCT FROM OLD.seat
            OR NEW.created_at IS DISTINCT FROM OLD.created_at
            OR NEW.session IS DISTINCT FROM OLD.session
            OR NEW.exclusive IS DISTINCT FROM OLD.exclusive OR NEW.meta IS DISTINCT FROM OLD.meta
            OR NEW.head_seq <= OLD.head_seq
            OR NOT EXISTS (SELECT 1 FROM log_events WHERE run_id = NEW.run_id
                AND seq = NEW.head_seq AND hash = NEW.head_hash) THEN
            RAISE EXCEPTION
                'worldkit: the head of run % can only move forward onto a stored event',
                OLD.run_id USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        RETURN NEW;
    END $$""",
    """CREATE TRIGGER log_events_append_only BEFORE UPDATE OR DELETE ON log_events
    FOR EACH ROW EXECUTE FUNCTION worldkit_log_append_only()""",
    """CREATE TRIGGER log_events_no_truncate BEFORE TRUNCATE ON log_events
    FOR EACH STATEMENT EXECUTE FUNCTION worldkit_log_append_only()""",
    """CREATE TRIGGER log_events_chain BEFORE INSERT ON log_events
    FOR EACH ROW EXECUTE FUNCTION worldkit_log_chain()""",
    """CREATE TRIGGER log_runs_head BEFORE UPDATE OR DELETE ON log_runs
    FOR EACH ROW EXECUTE FUNCTION worldkit_log_run_head()""",
    """CREATE TRIGGER log_runs_no_truncate BEFORE TRUNCATE ON log_runs
    FOR EACH STATEMENT EXECUTE FUNCTION worldkit_log_append_only()""",
]

# Any constant works: it only has to be the same for every worldkit process on a server.
_PG_INSTALL_LOCK = 0x776B_7374


def installed_version(conn: Connection) -> int | None:
    """The schema version recorded in the store, or None if the store is empty."""
    if not sa.inspect(conn).has_table(store_meta.name):
        return None
    value = conn.execute(
        sa.select(store_meta.c.value).where(store_meta.c.key == "schema_version")
    ).scalar_one_or_none()
    return int(value) if value is not None else None


def migrate(conn: Connection, version: int) -> None:
    """Bring a store of an older schema version up to this one, step by step, inside the
    caller's write transaction (2 → 3: runs gain `meta`, immutable like the rest of the run's
    row; 3 → 4: the insert-only `run_records` table and its guards)."""
    if conn.dialect.name == "postgresql":
        conn.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_INSTALL_LOCK})
    current = installed_version(conn)
    if current != version or current not in _UPGRADES:
        return  # another process upgraded it meanwhile, or a version this worldkit cannot upgrade
    while current in _UPGRADES:
        _UPGRADES[current](conn)
        current += 1
    conn.execute(
        sa.update(store_meta).where(store_meta.c.key == "schema_version").values(value=str(current))
    )


def _run_guards(conn: Connection, statements: list[str]) -> None:
    for statement in statements:
        # no_parameters: the trigger bodies contain `%`, which is not a placeholder here.
        conn.exec_driver_sql(statement, execution_options={"no_parameters": True})


def _upgrade_2_to_3(conn: Connection) -> None:
    conn.exec_driver_sql("ALTER TABLE log_runs ADD COLUMN meta TEXT")
    if conn.dialect.name == "postgresql":
        statements = [g for g in _POSTGRES_GUARDS if "worldkit_log_run_head()" in g and "FUNCTION" in g[:40]]
    else:
        conn.exec_driver_sql("DROP TRIGGER IF EXISTS log_runs_head")
        statements = [g for g in _SQLITE_GUARDS if "log_runs_head" in g]
    _run_guards(conn, statements)


def _upgrade_3_to_4(conn: Connection) -> None:
    run_records.create(conn, checkfirst=True)
    _run_guards(conn, _POSTGRES_RECORD_GUARDS if conn.dialect.name == "postgresql" else _SQLITE_RECORD_GUARDS)


#: Schema version → the step that upgrades a store of that version to the next one.
_UPGRADES = {2: _upgrade_2_to_3, 3: _upgrade_3_to_4}


def install(conn: Connection) -> None:
    """Create the tables and guards in a fresh store, inside the caller's write transaction."""
    if conn.dialect.name == "postgresql":
        # Several processes may open a fresh store at once; DDL in PostgreSQL is not race-free.
        conn.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_INSTALL_LOCK})
    if installed_version(conn) is not None:
        return
    metadata.create_all(conn, checkfirst=True)
    if conn.dialect.name == "postgresql":
        _run_guards(conn, _POSTGRES_GUARDS + _POSTGRES_RECORD_GUARDS)
    else:
        _run_guards(conn, _SQLITE_GUARDS + _SQLITE_RECORD_GUARDS)
    conn.execute(
        sa.insert(store_meta).values(key="schema_version", value=str(SCHEMA_VERSION))
    )

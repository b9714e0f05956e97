"""The store's tables (SQLAlchemy Core) and the database-side guards that keep the log honest.

The guards are triggers on both backends: events can be inserted only as the next link of their
run's chain and never updated or deleted; a run's sealed head can only move forward onto a stored
event. On SQLite, `REPLACE`/`INSERT OR REPLACE` and upserts would overwrite a row without firing a
delete trigger, so BEFORE INSERT triggers refuse any insert whose key already exists (an event of
that run and seq, or a run id already claimed). Guards stop casual edits; someone with DDL rights
can drop them, which is what the hash chain and the anchor outside the database are for.

On SQLite (schema 5) an event's primary key is one integer, `run_key << 32 | seq` (`event_key`),
the table's rowid: `run_key` is a small number given to each run when it is created, in order,
so a run's events are one contiguous, ever-growing range of keys and an append lands at the
right edge of the table's B-tree (a composite text key splits pages in the middle of the tree:
about twice the pages written per commit). The insert guard requires the key to be exactly
that of the event's run and seq, so (run_id, seq) stays unique. PostgreSQL keeps (run_id, seq).

Run records (schema 4) are insert-only in the same way: a run's execution record is stored once,
never replaced, updated or deleted, and only while its anchored head is the end of its run's log.
This module must never hold data or open connections of its own: it describes, `install` creates.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from worldkit.errors import StoreError

#: Bumped whenever a table or trigger changes; a store of another version is refused.
SCHEMA_VERSION = 5

#: On SQLite an event's key is `run_key << SEQ_BITS | seq`: seq and run_key must fit.
SEQ_BITS = 32
MAX_SEQ = (1 << SEQ_BITS) - 1
MAX_RUN_KEY = (1 << 31) - 1

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
    # SQLite: the run's number in its events' keys (`event_key`), given in order of creation and
    # never changed. NULL on PostgreSQL, whose events are keyed by (run_id, seq).
    sa.Column("run_key", sa.BigInteger, nullable=True),
    sa.Index("log_runs_run_key", "run_key", unique=True),
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
)

# SQLite's layout of the same table: the integer key `event_key(run_key, seq)` is the rowid
# (one B-tree per append, at its right edge), run_id and seq ordinary columns.
sqlite_metadata = sa.MetaData()
log_runs.to_metadata(sqlite_metadata)
sqlite_log_events = sa.Table(
    "log_events",
    sqlite_metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
    *[
        sa.Column(
            column.name, column.type, *([sa.ForeignKey("log_runs.run_id")] if column.name == "run_id" else []),
            nullable=False if column.primary_key else column.nullable, autoincrement=False,
        )  # fmt: skip
        for column in log_events.c
    ],
    sa.CheckConstraint(f"seq BETWEEN 1 AND {MAX_SEQ}", name="log_events_seq_fits_key"),
    # Spelled out: on SQLite 3.40 `outcome IN (...)` measured ~1.7 µs per insert, more than the
    # insert guard; three comparisons cost a fraction of that.
    sa.CheckConstraint(
        "outcome = 'ok' OR outcome = 'denied' OR outcome = 'error'", name="log_events_outcome"
    ),
)


def event_key(run_key: int, seq: int) -> int:
    """An event's primary key on SQLite: its run's key and its seq in one integer."""
    return run_key << SEQ_BITS | seq


def events_table(dialect: sa.Dialect | str) -> sa.Table:
    """`log_events` as laid out on this backend (`sqlite_log_events` on SQLite)."""
    name = dialect if isinstance(dialect, str) else dialect.name
    return sqlite_log_events if name == "sqlite" else log_events


def run_events(
    table: sa.Table | sa.Alias, run_id: Any, *, after: Any = None, upto: Any = None,
    run_key: Any = None,
) -> list[sa.ColumnElement[bool]]:  # fmt: skip
    """The WHERE clauses that pick one run's events with after < seq <= upto (None: no bound).

    On SQLite a range of the integer key, from the run's `run_key` (given, or looked up by run
    id), which is how the table is ordered; `order_column` orders them by seq."""
    if "id" not in table.c:
        clauses = [table.c.run_id == run_id]
        clauses += [] if after is None else [table.c.seq > after]
        return clauses + ([] if upto is None else [table.c.seq <= upto])
    if run_key is None:
        runs = log_runs.alias("key_of_run")
        run_key = sa.select(runs.c.run_key).where(runs.c.run_id == run_id).scalar_subquery()
    base = run_key * (1 << SEQ_BITS)
    return [
        table.c.run_id == run_id,
        table.c.id > base + (0 if after is None else after),
        table.c.id <= base + (MAX_SEQ if upto is None else upto),
    ]


def order_column(table: sa.Table | sa.Alias) -> sa.ColumnElement[Any]:
    """The column that orders one run's events by seq, cheapest on this backend."""
    return table.c.id if "id" in table.c else table.c.seq

run_records = sa.Table(
    "run_records",
    metadata,
    sa.Column(
        "run_id", sa.String(128), sa.ForeignKey("log_runs.run_id"), primary_key=True
    ),
    # The record's own format version (`worldkit.record.execution.RECORD_SCHEMA_VERSION`).
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
RUN_KEY_MESSAGE = (
    f"worldkit: a run of the event log needs its own run_key, 1 to {MAX_RUN_KEY} (the next "
    "after the largest stored)"
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


def _sqlite_insert_only(table: str, message: str) -> list[str]:
    """SQLite triggers that refuse every UPDATE and DELETE on `table` with `message`."""
    return [
        f"""CREATE TRIGGER IF NOT EXISTS {table}_no_{verb.lower()} BEFORE {verb} ON {table}
    BEGIN SELECT RAISE(ABORT, '{message}'); END"""
        for verb in ("UPDATE", "DELETE")
    ]


def _postgres_insert_only(table: str, trigger: str, function: str) -> list[str]:
    """PostgreSQL triggers that refuse every UPDATE, DELETE and TRUNCATE on `table` through `function`."""
    return [
        f"""CREATE TRIGGER {trigger} BEFORE UPDATE OR DELETE ON {table}
    FOR EACH ROW EXECUTE FUNCTION {function}()""",
        f"""CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table}
    FOR EACH STATEMENT EXECUTE FUNCTION {function}()""",
    ]


_SQLITE_RECORD_GUARDS = [
    *_sqlite_insert_only("run_records", RECORD_IMMUTABLE_MESSAGE),
    f"""CREATE TRIGGER IF NOT EXISTS run_records_insert BEFORE INSERT ON run_records
    BEGIN
        SELECT RAISE(ABORT, '{EXISTING_RECORD_MESSAGE}') WHERE EXISTS (
            SELECT 1 FROM run_records WHERE run_id = NEW.run_id);
        SELECT RAISE(ABORT, '{UNANCHORED_RECORD_MESSAGE}')
        WHERE NOT EXISTS (SELECT 1 FROM log_runs WHERE run_id = NEW.run_id)
            OR EXISTS (SELECT 1 FROM log_events, log_runs AS r WHERE r.run_id = NEW.run_id
                AND log_events.id > r.run_key * {1 << SEQ_BITS} + NEW.head_seq
                AND log_events.id <= r.run_key * {1 << SEQ_BITS} + {MAX_SEQ})
            OR (NEW.head_seq > 0 AND NOT EXISTS (SELECT 1 FROM log_events, log_runs AS r
                WHERE r.run_id = NEW.run_id AND log_events.id = r.run_key * {1 << SEQ_BITS} + NEW.head_seq
                    AND log_events.hash = NEW.head_hash))
            OR (NEW.head_seq = 0 AND NOT EXISTS (SELECT 1 FROM log_runs
                WHERE run_id = NEW.run_id AND head_seq = 0 AND head_hash = NEW.head_hash));
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
        IF NOT EXISTS (SELECT 1 FROM log_runs WHERE run_id = NEW.run_id)
            OR EXISTS (SELECT 1 FROM log_events WHERE run_id = NEW.run_id AND seq > NEW.head_seq)
            OR (NEW.head_seq > 0 AND NOT EXISTS (SELECT 1 FROM log_events
                WHERE run_id = NEW.run_id AND seq = NEW.head_seq AND hash = NEW.head_hash))
            OR (NEW.head_seq = 0 AND NOT EXISTS (SELECT 1 FROM log_runs
                WHERE run_id = NEW.run_id AND head_seq = 0 AND head_hash = NEW.head_hash)) THEN
            RAISE EXCEPTION '{UNANCHORED_RECORD_MESSAGE} (run %)', NEW.run_id
                USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        RETURN NEW;
    END $$""",
    *_postgres_insert_only("run_records", "run_records_immutable", "worldkit_run_record_immutable"),
    """CREATE TRIGGER run_records_anchored BEFORE INSERT ON run_records
    FOR EACH ROW EXECUTE FUNCTION worldkit_run_record_anchored()""",
]

_SQLITE_GUARDS = [
    *_sqlite_insert_only("log_events", APPEND_ONLY_MESSAGE),
    # One trigger for every insert rule: REPLACE fires BEFORE INSERT (never a delete trigger)
    # while the old row still exists, so refusing an existing key refuses the overwrite. A first
    # event's key must be its run's (an unknown run has none); a later one must sit just above
    # its predecessor's, of the same run and seq - 1, so by induction every key is
    # `event_key(run_key, seq)` of its own row and a key names one (run_id, seq).
    f"""CREATE TRIGGER IF NOT EXISTS log_events_insert BEFORE INSERT ON log_events
    BEGIN
        SELECT RAISE(ABORT, '{EXISTING_EVENT_MESSAGE}') WHERE EXISTS (
            SELECT 1 FROM log_events WHERE id = NEW.id);
        SELECT RAISE(ABORT,
            'worldkit: an event must extend its run''s chain (seq - 1 stored, prev_hash its hash)')
        WHERE NEW.seq <> 1 AND NOT EXISTS (
            SELECT 1 FROM log_events WHERE id = NEW.id - 1 AND run_id = NEW.run_id
                AND seq = NEW.seq - 1 AND hash = NEW.prev_hash);
        SELECT RAISE(ABORT,
            'worldkit: an event must belong to a run of the event log, keyed by its run and seq')
        WHERE NEW.seq = 1
            AND NEW.id IS NOT (SELECT run_key FROM log_runs WHERE run_id = NEW.run_id) * {1 << SEQ_BITS} + 1;
    END""",
    # A run key that exists would make REPLACE delete that run's row (a unique conflict).
    f"""CREATE TRIGGER IF NOT EXISTS log_runs_insert BEFORE INSERT ON log_runs
    BEGIN
        SELECT RAISE(ABORT, '{CLAIMED_RUN_MESSAGE}') WHERE EXISTS (
            SELECT 1 FROM log_runs WHERE run_id = NEW.run_id OR run_key = NEW.run_key);
        SELECT RAISE(ABORT, '{RUN_KEY_MESSAGE}')
        WHERE NEW.run_key IS NULL OR NEW.run_key NOT BETWEEN 1 AND {MAX_RUN_KEY};
    END""",
    f"""CREATE TRIGGER IF NOT EXISTS log_runs_head BEFORE UPDATE ON log_runs
    WHEN NEW.run_id IS NOT OLD.run_id OR NEW.seat IS NOT OLD.seat
        OR NEW.created_at IS NOT OLD.created_at OR NEW.session IS NOT OLD.session
        OR NEW.exclusive IS NOT OLD.exclusive OR NEW.meta IS NOT OLD.meta
        OR NEW.run_key IS NOT OLD.run_key OR NEW.head_seq <= OLD.head_seq
        OR NOT EXISTS (SELECT 1 FROM log_events
            WHERE id = NEW.run_key * {1 << SEQ_BITS} + NEW.head_seq AND hash = NEW.head_hash)
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
            OR NEW.run_key IS DISTINCT FROM OLD.run_key OR NEW.head_seq <= OLD.head_seq
            OR NOT EXISTS (SELECT 1 FROM log_events WHERE run_id = NEW.run_id
                AND seq = NEW.head_seq AND hash = NEW.head_hash) THEN
            RAISE EXCEPTION
                'worldkit: the head of run % can only move forward onto a stored event',
                OLD.run_id USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        RETURN NEW;
    END $$""",
    *_postgres_insert_only("log_events", "log_events_append_only", "worldkit_log_append_only"),
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
    row; 3 → 4: the insert-only `run_records` table and its guards; 4 → 5: runs gain
    `run_key`, and on SQLite the events are re-keyed by `event_key`)."""
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



def _upgrade_4_to_5(conn: Connection) -> None:
    """Runs gain `run_key` (numbered in order of creation); on SQLite the events table is
    rebuilt keyed by `event_key` (copied in key order, every column as it was) and every guard
    is installed anew, since SQLite triggers cannot be altered and some name the old layout."""
    conn.exec_driver_sql("ALTER TABLE log_runs ADD COLUMN run_key BIGINT")
    conn.exec_driver_sql("CREATE UNIQUE INDEX log_runs_run_key ON log_runs (run_key)")
    if conn.dialect.name == "postgresql":
        _run_guards(conn, [g for g in _POSTGRES_GUARDS if "worldkit_log_run_head()" in g and "FUNCTION" in g[:40]])
        return
    triggers = conn.exec_driver_sql("SELECT name FROM sqlite_master WHERE type = 'trigger'").all()
    for (name,) in triggers:
        conn.exec_driver_sql(f'DROP TRIGGER "{name}"')
    # Creation order: created_at, ties by the rowid (the order of the inserts).
    conn.exec_driver_sql(
        """UPDATE log_runs SET run_key = (SELECT count(*) FROM log_runs AS earlier
            WHERE earlier.created_at < log_runs.created_at
               OR (earlier.created_at = log_runs.created_at AND earlier.rowid <= log_runs.rowid))"""
    )
    old = "log_events_schema4"
    conn.exec_driver_sql(f"ALTER TABLE log_events RENAME TO {old}")
    sqlite_log_events.create(conn)
    names = ", ".join(column.name for column in log_events.c)
    picked = ", ".join(f"e.{column.name}" for column in log_events.c)
    conn.exec_driver_sql(
        f"INSERT INTO log_events (id, {names}) SELECT r.run_key * {1 << SEQ_BITS} + e.seq, {picked} "
        f"FROM {old} AS e JOIN log_runs AS r ON r.run_id = e.run_id ORDER BY r.run_key, e.seq"
    )
    moved = conn.exec_driver_sql("SELECT count(*) FROM log_events").scalar()
    kept = conn.exec_driver_sql(f"SELECT count(*) FROM {old}").scalar()
    if moved != kept:  # an event of no run (only a store edited past its guards holds one)
        raise StoreError(
            f"cannot upgrade the store to schema 5: {kept - moved} of {kept} events name no run of "
            "the event log; `worldkit log verify` on a copy made by the previous worldkit shows them"
        )
    conn.exec_driver_sql(f"DROP TABLE {old}")
    _run_guards(conn, _SQLITE_GUARDS + _SQLITE_RECORD_GUARDS)


#: Schema version → the step that upgrades a store of that version to the next one.
_UPGRADES = {2: _upgrade_2_to_3, 3: _upgrade_3_to_4, 4: _upgrade_4_to_5}


def install(conn: Connection) -> None:
    """Create the tables and guards in a fresh store, inside the caller's write transaction."""
    if conn.dialect.name == "postgresql":
        # Several processes may open a fresh store at once; DDL in PostgreSQL is not race-free.
        conn.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_INSTALL_LOCK})
    if installed_version(conn) is not None:
        return
    if conn.dialect.name == "postgresql":
        metadata.create_all(conn, checkfirst=True)
        _run_guards(conn, _POSTGRES_GUARDS + _POSTGRES_RECORD_GUARDS)
    else:
        tables = [table for table in metadata.sorted_tables if table.name != log_events.name]
        metadata.create_all(conn, tables=tables, checkfirst=True)
        sqlite_log_events.create(conn, checkfirst=True)
        _run_guards(conn, _SQLITE_GUARDS + _SQLITE_RECORD_GUARDS)
    conn.execute(
        sa.insert(store_meta).values(key="schema_version", value=str(SCHEMA_VERSION))
    )

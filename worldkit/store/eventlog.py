"""The event log of a run: every tool call, hash-chained, appended and read back.

Each event's hash is the SHA-256 of the canonical JSON of all its other fields, the previous
event's hash included; the first event links to a genesis hash derived from the run id. Every
append is committed before it returns (write-ahead: a server logs a call before answering it).
A lone writer appends with one INSERT that the database's guard checks against the chain;
writers that meet on one run take turns (the run's locked row on PostgreSQL, SQLite's write
lock), so concurrent servers and processes extend one gapless chain; the database itself rejects
updates, deletes and overwrites. The head is anchored outside the database (`anchor`).
Checking a chain and handing its state changes to a replay is `worldkit.store.chain`.

This module must never update or delete an event, and never put an event's time into any digest
but that event's own hash.
"""

from __future__ import annotations

import json
import operator
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import datetime, timezone
from hashlib import sha256 as _sha256
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, Protocol, TypedDict

import sqlalchemy as sa
from pydantic import AwareDatetime, BaseModel, ConfigDict, field_serializer

from worldkit.canon import canonical_json, sha256_json
from worldkit.errors import LogTampered, StoreError, UsageError
from worldkit.store.anchor import AnchorKey, LogAnchor, as_key, log_key, make_anchor, write_anchor
from worldkit.store.db import Store
from worldkit.store.times import format_time, now_text, parse_time, utc_now
from worldkit.store.runs import Head, check_run_id, claim_run, ensure_run, get_run, read_head
from worldkit.store.schema import SEQ_BITS, events_table, log_events, log_runs, order_column, run_events

#: Version of the event format and of the hash payload; stored with every event.
LOG_VERSION = 2
OUTCOMES: tuple[str, ...] = ("ok", "denied", "error")
Outcome = Literal["ok", "denied", "error"]

_HEX64 = re.compile(r"[0-9a-f]{64}")
_PAGE = 5_000
_WRITE_ATTEMPTS = 40
# The JSON text of a str, as canonical_json writes it (ensure_ascii=False), without the encoder.
_string = json.encoder.encode_basestring
_monotonic = time.monotonic


class Event(BaseModel):
    """One tool call of a run, as stored in its event log."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: int = LOG_VERSION
    """Format version of the event and of its hash payload."""
    run_id: str
    """The run the event belongs to."""
    seq: int
    """Position in the run's chain: 1, 2, 3, … without gaps."""
    time: AwareDatetime
    """When the call was logged (UTC). Digested only into this event's own hash."""
    seat: str
    """The seat the call acted as (the run's seat)."""
    session: str
    """The writer session (one `EventLog`, e.g. one server process) that logged the call."""
    tool: str
    """Name of the tool that was called."""
    arguments: dict[str, Any]
    """The call's arguments (stored as canonical JSON)."""
    outcome: Outcome
    """`ok`, `denied` (refused by policy, nothing changed) or `error` (the call failed)."""
    result_digest: str | None
    """SHA-256 (hex) of what the call returned, or None if it returned nothing."""
    detail: dict[str, Any] | None
    """Optional context, e.g. why a call was denied; hashed like every other field."""
    state_change: dict[str, Any] | None
    """What a replay needs to re-apply a permitted mutation; None for calls that change nothing."""
    prev_hash: str
    """Hash of the previous event, or the run's genesis hash for event 1."""
    hash: str
    """SHA-256 of the canonical JSON of every other field (see `hash_payload`)."""

    @field_serializer("time", when_used="json")
    def _stored_time(self, moment: datetime) -> str:
        # The exact text the hash covers, so an exported event can be re-hashed.
        return format_time(moment)

    def hash_payload(self) -> dict[str, Any]:
        """The fields the event's hash covers, as they go into the canonical JSON."""
        return {
            "arguments": self.arguments,
            "detail": self.detail,
            "outcome": self.outcome,
            "prev_hash": self.prev_hash,
            "result_digest": self.result_digest,
            "run_id": self.run_id,
            "seat": self.seat,
            "seq": self.seq,
            "session": self.session,
            "state_change": self.state_change,
            "time": format_time(self.time),
            "tool": self.tool,
            "v": self.version,
        }


class EventInput(TypedDict, total=False):
    """One call to log, for `EventLog.append_many` (the keyword arguments of `append`)."""

    tool: str
    arguments: Mapping[str, Any]
    outcome: str
    result_digest: str | None
    detail: Mapping[str, Any] | None
    state_change: Mapping[str, Any] | None


def genesis_hash(run_id: str) -> str:
    """The `prev_hash` of a run's first event: fixed by the run id alone."""
    return sha256_json({"genesis": run_id, "log": "worldkit.eventlog", "v": LOG_VERSION})


class EventSink(Protocol):
    """Where tool calls are logged (`EventLog` satisfies it; servers accept any such sink)."""

    def append(
        self,
        tool: str,
        arguments: Mapping[str, Any],
        outcome: str,
        result_digest: str | None,
        detail: Mapping[str, Any] | None = None,
        state_change: Mapping[str, Any] | None = None,
    ) -> Any: ...


class EventLog:
    """Appends the events of one run, acting as one seat. Safe to share between threads.

    Each append is durable when it returns: one committed statement (a batch from `append_many`
    is one transaction). A single writer knows its head, so an append is one INSERT that the
    database's chain guard checks; a writer that finds another one has appended to the run
    (the insert is refused) re-reads the head and from then on takes the run's lock for each
    append. The log holds one database connection (opened on first use) until `close`.

    `claim=True` creates the run for this log alone (a run id that exists is refused with
    `RunIdTaken`); otherwise an existing shared run is joined. Every event names the log's
    `session`. With `anchor`, the head is anchored in that file (see `worldkit.store.anchor`):
    at open, about every `anchor_every` seconds while appending, and — final — at `close`,
    signed with `key` (default: from the environment, `worldkit.store.anchor.log_key`). `close`
    also seals the head in the store. `meta` (JSON object) is stored with a run this log creates:
    how it was started, e.g. `{"trusted_staged": true}`.

    `resume_session` appends to an existing run as the session that created it: the crash
    recovery of a killed server (`worldkit log recover`), which finishes that server's last
    call in its own log. The run must exist and, if claimed, be claimed by that session.
    """

    def __init__(
        self,
        store: Store,
        run_id: str,
        seat: str,
        *,
        clock: Callable[[], datetime] = utc_now,
        claim: bool = False,
        anchor: Path | None = None,
        key: AnchorKey | bytes | None | Literal["env"] = "env",
        anchor_every: float = 1.0,
        meta: Mapping[str, Any] | None = None,
        resume_session: str | None = None,
    ) -> None:
        self.store = store
        self.run_id = check_run_id(run_id)
        self.seat = seat
        self.session = resume_session or uuid.uuid4().hex
        self.anchor_path = None if anchor is None else Path(anchor)
        self._key = log_key() if key == "env" else as_key(key)
        if self.anchor_path is not None and self._key is not None and not self._key.can_sign:
            raise UsageError(
                f"{self._key.source} is a public key: it checks anchors but cannot sign the anchor of run "
                f"{self.run_id}; set WORLDKIT_LOG_SIGNING_KEY to the private key (or unset the public one)"
            )
        self._anchor_every = anchor_every
        self._anchored_at = 0.0
        # When `record` next writes an anchor (never without an anchor file); set by `_anchor`.
        self._anchor_due = float("inf") if self.anchor_path is None else 0.0
        self._anchored_seq = -1
        self._clock = clock
        # The text of the clock's time, as `format_time` writes it (the default clock: cheaper).
        self._now_text: Callable[[], str] = now_text if clock is utc_now else lambda: format_time(clock())
        self._lock = threading.Lock()
        self._raw: Any = None
        self._driver: Any = None
        self._cursor: Any = None  # the driver's cursor the lone writer's appends go through
        self._shared = False  # set once another writer is seen: then every append locks
        self._closed = False
        genesis = genesis_hash(self.run_id)
        with store.guard("open the event log in"), store.write() as conn:
            if resume_session is not None:
                head = _resumed_head(conn, self.run_id, seat, resume_session, claim=claim)
            elif claim:
                head = claim_run(conn, self.run_id, seat, genesis, self.session, meta)
            else:
                head = ensure_run(conn, self.run_id, seat, genesis, self.session, meta)
        self._head: tuple[int, str] | None = (head.seq, head.hash)
        # SQLite keys an event by `event_key(run_key, seq)`: this plus seq (None on PostgreSQL).
        self._key_base = None if head.run_key is None else head.run_key << SEQ_BITS
        self._dialect = store.engine.dialect
        if self._key_base is None and self._dialect.name == "sqlite":
            raise StoreError(
                f"run {self.run_id} in store {store.url} has no run_key, which every run of a SQLite "
                f"store gets when it is created: the store was edited past its guards; "
                f"`worldkit log verify {self.run_id}` checks its log, and a new run id starts afresh"
            )
        self._sql = _statements(self._dialect)
        self._insert_text, self._insert_params = self._sql.insert.text, self._sql.insert.params
        # SQLite: the lone writer's INSERTs with the fields every event of this log shares written
        # into the statement (bound once, when it is prepared), one with every other value bound,
        # one with `detail` and one with `detail` and `state_change` the literal NULL (what most
        # calls store: the driver adapts a bound None through a failed protocol lookup, several
        # times the cost of binding a string); None where a field cannot be a literal.
        self._own_insert = None if self._key_base is None else _sqlite_own_insert(self.run_id, seat, self.session)
        self._own_insert_no_detail = None if self._own_insert is None else _sqlite_own_insert(
            self.run_id, seat, self.session, nulls=("detail",)
        )
        self._own_insert_no_extras = None if self._own_insert is None else _sqlite_own_insert(
            self.run_id, seat, self.session, nulls=("detail", "state_change")
        )
        # The fields every event of this log shares, as `row_hash` encodes them.
        self._fixed_text = f'"run_id":{_string(self.run_id)},"seat":{_string(self.seat)},"seq":'
        self._session_text = f'"session":{_string(self.session)},"state_change":'
        self._tail = f',"v":{LOG_VERSION}}}\n'
        self._anchor(head.seq, head.hash, final=False)

    def append(
        self,
        tool: str,
        arguments: Mapping[str, Any],
        outcome: str,
        result_digest: str | None,
        detail: Mapping[str, Any] | None = None,
        state_change: Mapping[str, Any] | None = None,
    ) -> Event:
        """Log one call as the run's next event (durable when this returns) and return it."""
        entry = _prepare(tool, arguments, outcome, result_digest, detail, state_change)
        return _own_event(self._write([entry])[0])

    def record(
        self,
        tool: str,
        arguments: Mapping[str, Any],
        outcome: str,
        result_digest: str | None,
        detail: Mapping[str, Any] | None = None,
        state_change: Mapping[str, Any] | None = None,
    ) -> tuple[int, str]:
        """`append` for servers: the same durable event, returning only its (seq, hash)."""
        row = _prepare(tool, arguments, outcome, result_digest, detail, state_change)
        with self._lock:
            head, cursor = self._head, self._cursor
            if head is not None and cursor is not None and not (self._shared or self._closed):
                # The lone writer's path: link after the known head, one committed INSERT.
                seq, prev = head[0] + 1, head[1]
                moment = self._now_text()
                tool, arguments, outcome, result_digest, detail, change = row.values()  # `_prepare`'s order
                # `row_hash` of the row, written out with the log's fixed fields pre-encoded;
                # `_prepare` checked outcome (a known word) and result_digest (hex): no escaping.
                quoted = "null" if result_digest is None else f'"{result_digest}"'
                digest = _sha256(
                    f'{{"arguments":{arguments},"detail":{"null" if detail is None else detail},'
                    f'"outcome":"{outcome}","prev_hash":"{prev}","result_digest":{quoted},'
                    f'{self._fixed_text}{seq},{self._session_text}{"null" if change is None else change},'
                    f'"time":"{moment}","tool":{_string(tool)}{self._tail}'.encode()
                ).hexdigest()
                text = self._own_insert
                if text is not None:  # SQLite: positional, in `_sqlite_own_insert` order
                    if detail is not None:
                        params: Any = (
                            self._key_base + seq, seq, moment, tool, arguments, outcome, result_digest,
                            detail, change, prev, digest,
                        )  # fmt: skip
                    elif change is None:
                        text = self._own_insert_no_extras
                        params = (
                            self._key_base + seq, seq, moment, tool, arguments, outcome, result_digest, prev,
                            digest,
                        )  # fmt: skip
                    else:
                        text = self._own_insert_no_detail
                        params = (
                            self._key_base + seq, seq, moment, tool, arguments, outcome, result_digest, change,
                            prev, digest,
                        )  # fmt: skip
                elif self._key_base is not None:  # SQLite: positional, in `_SQLITE_INSERT` order
                    params = (
                        self._key_base + seq, self.run_id, seq, LOG_VERSION, moment, self.seat,
                        self.session, tool, arguments, outcome, result_digest, detail, change, prev, digest,
                    )  # fmt: skip
                    text = _SQLITE_INSERT
                else:
                    params = self._insert_params({
                        **row, "version": LOG_VERSION, "run_id": self.run_id, "seq": seq,
                        "time": moment, "seat": self.seat, "session": self.session,
                        "prev_hash": prev, "hash": digest,
                    })  # fmt: skip
                    text = self._insert_text
                try:
                    cursor.execute(text, params)
                except self._dialect.dbapi.Error:
                    self._head = None  # fall through: re-read, retry, or fail below
                else:
                    self._head = (seq, digest)
                    if _monotonic() >= self._anchor_due:
                        self._anchor(seq, digest, final=False)
                    return seq, digest
        written = self._write([row])[0]
        return written["seq"], written["hash"]

    def append_many(self, entries: Iterable[EventInput]) -> list[Event]:
        """Log several calls, in order, as consecutive events in one transaction."""
        prepared = [
            _prepare(
                entry["tool"],
                entry["arguments"],
                entry["outcome"],
                entry.get("result_digest"),
                entry.get("detail"),
                entry.get("state_change"),
            )
            for entry in entries
        ]
        return [_own_event(row) for row in self._write(prepared)] if prepared else []

    def head(self) -> Head:
        """Where the run's chain ends now."""
        return get_run(self.store, self.run_id)

    def anchor_now(self, *, final: bool = False) -> LogAnchor | None:
        """Write the anchor of the current head now (None without an anchor file)."""
        head = self.head()
        return self._anchor(head.seq, head.hash, final=final, force=True)

    def close(self) -> None:
        """Seal the head in the store, write the final anchor and release the connection."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            try:
                with self.store.guard("close the event log in"), self.store.write() as conn:
                    head = read_head(conn, self.run_id, lock=True)
                    assert head is not None
                    if head.seq > head.sealed_seq:
                        conn.execute(
                            sa.update(log_runs)
                            .where(log_runs.c.run_id == self.run_id)
                            .where(log_runs.c.head_seq < head.seq)
                            .values(head_seq=head.seq, head_hash=head.hash)
                        )
                self._anchor(head.seq, head.hash, final=True, force=True)
            finally:
                if self._raw is not None:
                    self._release()

    def __enter__(self) -> EventLog:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _anchor(
        self, seq: int, head_hash: str, *, final: bool, force: bool = False
    ) -> LogAnchor | None:
        if self.anchor_path is None:
            return None
        now = time.monotonic()
        if not force and (seq == self._anchored_seq or now - self._anchored_at < self._anchor_every):
            return None
        anchor = make_anchor(
            run_id=self.run_id, seat=self.seat, session=self.session, seq=seq,
            head_hash=head_hash, final=final, key=self._key,
        )  # fmt: skip
        write_anchor(anchor, self.anchor_path, durable=final)
        self._anchored_at, self._anchored_seq = now, seq
        self._anchor_due = now + self._anchor_every
        return anchor

    def _write(self, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        with self._lock:
            if self._closed:
                raise StoreError(f"the event log of run {self.run_id} is closed; open a new one")
            last_error: BaseException | None = None
            for attempt in range(_WRITE_ATTEMPTS):
                raw = self._connection()
                dbapi = self._dialect.dbapi
                try:
                    if self._shared or self._head is None or len(entries) > 1:
                        rows = self._locked_write(raw, entries)
                    else:
                        rows = self._link(entries, *self._head)
                        # One statement, committed by the database as it completes.
                        raw.execute(self._sql.insert.text, self._sql.insert.params(rows[0]))
                    self._head = (rows[-1]["seq"], rows[-1]["hash"])
                    self._anchor(*self._head, final=False)
                    return rows
                except dbapi.Error as error:
                    last_error = error
                    self._rollback(raw)
                    self._head = None
                    if isinstance(error, dbapi.IntegrityError):
                        # Another writer extended the run: re-read, and lock from now on.
                        self._shared = True
                        continue
                    if isinstance(error, dbapi.OperationalError):
                        text = str(error).lower()
                        if not ("locked" in text or "busy" in text):
                            self._release(broken=True)
                        time.sleep(min(0.001 * 2**attempt, 0.25))
                        continue
                    break
                except BaseException:
                    self._rollback(raw)
                    raise
            raise StoreError(
                f"cannot append to the event log of run {self.run_id} in store "
                f"{self.store.url}: {last_error.__class__.__name__}: {_short(last_error)}; "
                "check that the store is reachable and writable, then retry"
            )

    def _locked_write(self, raw: Any, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """One transaction: take the run's lock, read its head, link and insert `entries`."""
        sql = self._sql
        cursor = raw.cursor()
        try:
            cursor.execute(sql.begin)
            cursor.execute(sql.lock.text, sql.lock.params({"run_id": self.run_id}))
            if cursor.fetchone() is None:  # pragma: no cover - runs are never deleted
                raise StoreError(f"run {self.run_id} vanished from store {self.store.url}")
            cursor.execute(sql.last.text, sql.last.params({"run_id": self.run_id}))
            found = cursor.fetchone()
            seq, prev = (found[0], found[1]) if found else (0, genesis_hash(self.run_id))
            rows = self._link(entries, seq, prev)
            if len(rows) == 1:
                cursor.execute(sql.insert.text, sql.insert.params(rows[0]))
            else:
                cursor.executemany(sql.insert.text, [sql.insert.params(row) for row in rows])
            cursor.execute("COMMIT")
        finally:
            cursor.close()
        return rows

    def _link(self, entries: list[dict[str, Any]], seq: int, prev: str) -> list[dict[str, Any]]:
        rows = []
        for entry in entries:
            seq += 1
            moment = self._clock()
            row = {
                **entry,
                "version": LOG_VERSION,
                "run_id": self.run_id,
                "seq": seq,
                "time": format_time(moment),
                "seat": self.seat,
                "session": self.session,
                "prev_hash": prev,
            }
            row["hash"] = prev = row_hash(row)
            if self._key_base is not None:
                row["id"] = self._key_base + seq
            row["_moment"] = moment
            rows.append(row)
        return rows

    def _connection(self) -> Any:
        """The log's own driver connection, in autocommit mode (each statement commits)."""
        if self._raw is None:
            raw = self.store.engine.raw_connection()
            driver = raw.driver_connection
            if self._dialect.name == "postgresql":
                driver.autocommit = True
            else:
                driver.isolation_level = None
                # SQLite checks foreign keys only on connections that ask, so they guard nothing
                # against an outside writer; the insert trigger is the guard (it also requires a
                # run's first event to name a stored run). Off here saves a lookup per append.
                driver.execute("PRAGMA foreign_keys=OFF")
            self._raw, self._driver, self._cursor = raw, driver, driver.cursor()
        return self._driver

    def _rollback(self, driver: Any) -> None:
        try:
            if self._dialect.name == "postgresql":
                if driver.info.transaction_status != 0:  # not idle: inside a failed BEGIN
                    driver.execute("ROLLBACK")
            elif driver.in_transaction:
                driver.execute("ROLLBACK")
        except self._dialect.dbapi.Error:
            self._release(broken=True)

    def _release(self, *, broken: bool = False) -> None:
        raw, cursor = self._raw, self._cursor
        self._raw, self._driver, self._cursor = None, None, None
        if raw is None:
            return
        try:
            cursor.close()
            if broken:
                raw.invalidate()
            else:
                if self._dialect.name == "postgresql":
                    raw.driver_connection.autocommit = False
                else:
                    raw.driver_connection.execute("PRAGMA foreign_keys=ON")
                raw.close()
        except Exception:  # noqa: BLE001 - a connection that cannot be returned is dropped
            raw.invalidate()


def _resumed_head(conn: Any, run_id: str, seat: str, session: str, *, claim: bool) -> Head:
    """The head of a run that `session` created, for a recovery that appends as that session."""
    if claim:
        raise UsageError(f"run {run_id}: a recovery resumes a run; it cannot also claim a new one")
    head = read_head(conn, run_id)
    if head is None:
        raise UsageError(f"run {run_id} is not in the store; pass the store the killed server logged to")
    if head.seat != seat:
        raise StoreError(f"run {run_id} belongs to seat {head.seat}, not {seat}")
    if head.session != session:
        raise StoreError(
            f"run {run_id} was created by session {head.session[:8]}…, not {session[:8]}…: only the "
            "run's own session can finish its interrupted call"
        )
    return head


class _Compiled:
    """A statement compiled once for a dialect, with its parameters in the driver's order."""

    def __init__(self, statement: sa.Executable, dialect: sa.Dialect) -> None:
        compiled = statement.compile(dialect=dialect)
        self.text = compiled.string
        order = tuple(compiled.positiontup or ()) if compiled.positional else None
        self._order = order
        # itemgetter builds the driver's tuple in C: this runs once per append.
        self._pick = operator.itemgetter(*order) if order and len(order) > 1 else None
        # Bound constants (e.g. LIMIT 1) keep the value they were compiled with.
        self._fixed = {k: v for k, v in compiled.params.items() if v is not None}

    def params(self, values: Mapping[str, Any]) -> tuple[Any, ...] | Mapping[str, Any]:
        if self._fixed:
            values = {**self._fixed, **values}
        if self._order is None:
            return values
        if self._pick is not None:
            return self._pick(values)
        return tuple(values[name] for name in self._order)


class _Statements:
    def __init__(self, dialect: sa.Dialect) -> None:
        table = events_table(dialect)
        lock = sa.select(log_runs.c.seat).where(log_runs.c.run_id == sa.bindparam("run_id"))
        if dialect.name == "postgresql":
            lock = lock.with_for_update(key_share=True)  # FOR NO KEY UPDATE, as `read_head(lock=True)`
        self.begin = "BEGIN" if dialect.name == "postgresql" else "BEGIN IMMEDIATE"
        self.lock = _Compiled(lock, dialect)
        self.last = _Compiled(
            sa.select(table.c.seq, table.c.hash)
            .where(*run_events(table, sa.bindparam("run_id")))
            .order_by(order_column(table).desc())
            .limit(1),
            dialect,
        )
        self.insert = _Compiled(sa.insert(table), dialect)


_STATEMENTS: dict[str, _Statements] = {}

# The lone writer's insert on SQLite, its parameters built in this order by `EventLog.record`.
_SQLITE_COLUMNS = (
    "id", "run_id", "seq", "version", "time", "seat", "session", "tool", "arguments", "outcome",
    "result_digest", "detail", "state_change", "prev_hash", "hash",
)  # fmt: skip
_SQLITE_INSERT = (
    f"INSERT INTO log_events ({', '.join(_SQLITE_COLUMNS)}) VALUES ({', '.join('?' * len(_SQLITE_COLUMNS))})"
)


def _sqlite_own_insert(run_id: str, seat: str, session: str, nulls: tuple[str, ...] = ()) -> str | None:
    """`_SQLITE_INSERT` with run_id, version, seat and session of one log as SQL literals (None if
    one holds a NUL, which a statement's text cannot), and the columns `nulls` as the literal NULL:
    fewer values to bind per append."""
    fixed = {"run_id": run_id, "version": LOG_VERSION, "seat": seat, "session": session}
    if any("\x00" in str(value) for value in fixed.values()):
        return None
    values = [
        "NULL" if name in nulls else "?" if name not in fixed else str(fixed[name]) if name == "version"
        else "'" + str(fixed[name]).replace("'", "''") + "'"
        for name in _SQLITE_COLUMNS
    ]  # fmt: skip
    return f"INSERT INTO log_events ({', '.join(_SQLITE_COLUMNS)}) VALUES ({', '.join(values)})"


def _statements(dialect: sa.Dialect) -> _Statements:
    found = _STATEMENTS.get(dialect.name)
    if found is None:
        found = _STATEMENTS[dialect.name] = _Statements(dialect)
    return found


def row_hash(row: Mapping[str, Any]) -> str:
    """The hash of a stored event row (JSON fields as their stored canonical text).

    Equal to `sha256_json(event.hash_payload())`; written out by hand because it runs once per
    append and per verified event, and the JSON fields are already canonical text.
    """
    digest = row["result_digest"]
    text = "".join(
        (
            '{"arguments":',
            row["arguments"],
            ',"detail":',
            "null" if row["detail"] is None else row["detail"],
            ',"outcome":',
            _string(row["outcome"]),
            ',"prev_hash":',
            _string(row["prev_hash"]),
            ',"result_digest":',
            "null" if digest is None else _string(digest),
            ',"run_id":',
            _string(row["run_id"]),
            ',"seat":',
            _string(row["seat"]),
            ',"seq":',
            str(int(row["seq"])),
            ',"session":',
            _string(row["session"]),
            ',"state_change":',
            "null" if row["state_change"] is None else row["state_change"],
            ',"time":',
            _string(row["time"]),
            ',"tool":',
            _string(row["tool"]),
            ',"v":',
            str(int(row["version"])),
            "}\n",
        )
    )
    return _sha256(text.encode("utf-8")).hexdigest()


def read_events(store: Store, run_id: str, *, after: int = 0) -> Iterator[Event]:
    """The run's events with `seq > after`, in order, as stored (unverified: see `chain`).

    An unknown run is refused here, not when iteration starts.
    """
    head = get_run(store, run_id)
    return _read(store, run_id, after, head.seq)


def _read(store: Store, run_id: str, after: int, upto: int) -> Iterator[Event]:
    for row in stored_rows(store, run_id, after, upto):
        try:
            yield row_event(row)
        except ValueError as error:
            raise LogTampered(
                f"event {row['seq']} of run {run_id} cannot be read ({_short(error)}); "
                f"`worldkit log verify {run_id}` says what is wrong with the log"
            ) from error


def _prepare(
    tool: str,
    arguments: Mapping[str, Any],
    outcome: str,
    result_digest: str | None,
    detail: Mapping[str, Any] | None,
    state_change: Mapping[str, Any] | None,
) -> dict[str, Any]:
    if not isinstance(tool, str) or not tool or len(tool) > 200:
        raise StoreError(f"tool name {tool!r} must be a non-empty string of at most 200 chars")
    if outcome not in OUTCOMES:
        raise StoreError(
            f"outcome {outcome!r} of a {tool} call is not one of {', '.join(OUTCOMES)}"
        )
    if result_digest is not None and not (
        isinstance(result_digest, str) and _HEX64.fullmatch(result_digest)
    ):
        raise StoreError(
            f"result digest {result_digest!r} of a {tool} call is not a lowercase hex SHA-256; "
            "digest the returned content with worldkit.canon.sha256_bytes"
        )
    return {  # in this order: `EventLog.record` unpacks the values
        "tool": tool,
        "arguments": _json_text(tool, "arguments", arguments, required=True),
        "outcome": outcome,
        "result_digest": result_digest,
        "detail": _json_text(tool, "detail", detail),
        "state_change": _json_text(tool, "state_change", state_change),
    }


def _json_text(tool: str, field: str, value: Any, *, required: bool = False) -> str | None:
    if value is None and not required:
        return None
    if not isinstance(value, Mapping):
        raise StoreError(
            f"{field} of a {tool} call must be a JSON object (dict), got {type(value).__name__}"
        )
    try:
        return canonical_json(dict(value))[:-1]
    except (TypeError, ValueError) as error:
        raise StoreError(
            f"{field} of a {tool} call cannot be stored as JSON ({error}); pass only str, int, "
            "float, bool, None, lists and dicts with string keys"
        ) from error


def row_event(row: Mapping[str, Any]) -> Event:
    return Event(
        version=row["version"],
        run_id=row["run_id"],
        seq=row["seq"],
        time=parse_time(row["time"]),
        seat=row["seat"],
        session=row["session"],
        tool=row["tool"],
        arguments=json.loads(row["arguments"]),
        outcome=row["outcome"],
        result_digest=row["result_digest"],
        detail=None if row["detail"] is None else json.loads(row["detail"]),
        state_change=None if row["state_change"] is None else json.loads(row["state_change"]),
        prev_hash=row["prev_hash"],
        hash=row["hash"],
    )


def _own_event(row: dict[str, Any]) -> Event:
    """The `Event` of a row this process just linked and stored (its fields are known good)."""
    return Event.model_construct(
        version=row["version"],
        run_id=row["run_id"],
        seq=row["seq"],
        time=row["_moment"].astimezone(timezone.utc),
        seat=row["seat"],
        session=row["session"],
        tool=row["tool"],
        arguments=json.loads(row["arguments"]),
        outcome=row["outcome"],
        result_digest=row["result_digest"],
        detail=None if row["detail"] is None else json.loads(row["detail"]),
        state_change=None if row["state_change"] is None else json.loads(row["state_change"]),
        prev_hash=row["prev_hash"],
        hash=row["hash"],
    )


def stored_rows(store: Store, run_id: str, after: int, upto: int) -> Iterator[dict[str, Any]]:
    """Stored rows (as dicts) with after < seq <= upto, in seq order, one short read per page."""
    table = events_table(store.engine.dialect)
    columns = [table.c[column.name] for column in log_events.c]
    while after < upto:
        query = (
            sa.select(*columns)
            .where(*run_events(table, run_id, after=after, upto=upto))
            .order_by(order_column(table))
            .limit(_PAGE)
        )
        with store.guard("read"), store.engine.connect() as conn:
            page = [dict(row._mapping) for row in conn.execute(query)]
        if not page:
            return
        yield from page
        after = page[-1]["seq"]


def _short(error: BaseException) -> str:
    return str(error).splitlines()[0][:200]

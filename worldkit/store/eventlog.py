"""The event log of a run: every tool call, hash-chained, appended and read back.

Each event's hash is the SHA-256 of the canonical JSON of all its other fields, the previous
event's hash included; the first event links to a genesis hash derived from the run id. Writers
take turns per run (a locked head row on PostgreSQL, SQLite's write lock), so concurrent servers
and processes extend one gapless chain; the database itself rejects updates and deletes.
Checking a chain and handing its state changes to a replay is `worldkit.store.chain`.

This module must never update or delete an event, and never put an event's time into any digest
but that event's own hash.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import datetime
from types import TracebackType
from typing import Any, Literal, Protocol, TypedDict

import sqlalchemy as sa
from pydantic import AwareDatetime, BaseModel, ConfigDict, field_serializer
from sqlalchemy.engine import Connection

from worldkit.canon import canonical_json, sha256_bytes, sha256_json
from worldkit.errors import LogTampered, StoreError
from worldkit.store.db import Store, format_time, parse_time, utc_now
from worldkit.store.runs import Head, check_run_id, ensure_run, get_run
from worldkit.store.schema import log_events, log_runs

#: Version of the event format and of the hash payload; stored with every event.
LOG_VERSION = 1
OUTCOMES: tuple[str, ...] = ("ok", "denied", "error")
Outcome = Literal["ok", "denied", "error"]

_HEX64 = re.compile(r"[0-9a-f]{64}")
_PAGE = 5_000
_WRITE_ATTEMPTS = 8
_encode = json.JSONEncoder(ensure_ascii=False).encode


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

    The log holds one database connection (opened on first use) until `close`; each append is
    one short write transaction, `append_many` writes a batch in one.
    """

    def __init__(
        self,
        store: Store,
        run_id: str,
        seat: str,
        *,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self.store = store
        self.run_id = check_run_id(run_id)
        self.seat = seat
        self._clock = clock
        self._lock = threading.Lock()
        self._conn: Connection | None = None
        with store.guard("open the event log in"), store.write() as conn:
            ensure_run(conn, self.run_id, seat, genesis_hash(self.run_id))

    def append(
        self,
        tool: str,
        arguments: Mapping[str, Any],
        outcome: str,
        result_digest: str | None,
        detail: Mapping[str, Any] | None = None,
        state_change: Mapping[str, Any] | None = None,
    ) -> Event:
        """Log one call as the run's next event and return it."""
        entry = _prepare(tool, arguments, outcome, result_digest, detail, state_change)
        return self._write([entry])[0]

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
        return self._write(prepared) if prepared else []

    def head(self) -> Head:
        """Where the run's chain ends now."""
        return get_run(self.store, self.run_id)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> EventLog:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _write(self, entries: list[dict[str, Any]]) -> list[Event]:
        with self._lock:
            last_error: BaseException | None = None
            for _attempt in range(_WRITE_ATTEMPTS):
                conn = self._connection()
                try:
                    with conn.begin():
                        rows = self._chain(conn, entries)
                    return [row_event(row) for row in rows]
                except (sa.exc.DBAPIError, conn.dialect.dbapi.Error) as error:
                    last_error = getattr(error, "orig", None) or error
                    if not _retryable(conn, last_error):
                        break
            raise StoreError(
                f"could not append to the event log of run {self.run_id} in store "
                f"{self.store.url}: {last_error.__class__.__name__}: {_short(last_error)}; "
                "check that the store is reachable and writable, then retry"
            )

    def _chain(self, conn: Connection, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Lock the run's head, link `entries` after it, store them and move the head."""
        sql = _statements(conn.dialect)
        # The hot path talks to the driver directly: SQLAlchemy's per-statement work would
        # otherwise cost more than the database does (see bench/eventlog.py).
        cursor = conn.connection.driver_connection.cursor()
        try:
            cursor.execute(sql.head.text, sql.head.params({"run_id": self.run_id}))
            found = cursor.fetchone()
            if found is None:  # pragma: no cover - created in __init__ and never deleted
                raise StoreError(f"run {self.run_id} vanished from store {self.store.url}")
            _seat, seq, prev = found
            rows = []
            for entry in entries:
                seq += 1
                row = {
                    **entry,
                    "version": LOG_VERSION,
                    "run_id": self.run_id,
                    "seq": seq,
                    "time": format_time(self._clock()),
                    "seat": self.seat,
                    "prev_hash": prev,
                }
                row["hash"] = prev = row_hash(row)
                rows.append(row)
            if len(rows) == 1:
                cursor.execute(sql.insert.text, sql.insert.params(rows[0]))
            else:
                cursor.executemany(sql.insert.text, [sql.insert.params(row) for row in rows])
            cursor.execute(
                sql.advance.text,
                sql.advance.params({"run_id": self.run_id, "head_seq": seq, "head_hash": prev}),
            )
        finally:
            cursor.close()
        return rows

    def _connection(self) -> Connection:
        if self._conn is None:
            self._conn = self.store.connect_for_writes()
        return self._conn


class _Compiled:
    """A statement compiled once for a dialect, with its parameters in the driver's order."""

    def __init__(self, statement: sa.Executable, dialect: sa.Dialect) -> None:
        compiled = statement.compile(dialect=dialect)
        self.text = compiled.string
        self._order = tuple(compiled.positiontup or ()) if compiled.positional else None

    def params(self, values: Mapping[str, Any]) -> tuple[Any, ...] | Mapping[str, Any]:
        if self._order is None:
            return values
        return tuple(values[name] for name in self._order)


class _Statements:
    def __init__(self, dialect: sa.Dialect) -> None:
        head = sa.select(log_runs.c.seat, log_runs.c.head_seq, log_runs.c.head_hash).where(
            log_runs.c.run_id == sa.bindparam("run_id")
        )
        if dialect.name == "postgresql":
            head = head.with_for_update()
        self.head = _Compiled(head, dialect)
        self.insert = _Compiled(sa.insert(log_events), dialect)
        self.advance = _Compiled(
            sa.update(log_runs)
            .where(log_runs.c.run_id == sa.bindparam("run_id"))
            .values(head_seq=sa.bindparam("head_seq"), head_hash=sa.bindparam("head_hash")),
            dialect,
        )


_STATEMENTS: dict[str, _Statements] = {}


def _statements(dialect: sa.Dialect) -> _Statements:
    found = _STATEMENTS.get(dialect.name)
    if found is None:
        found = _STATEMENTS[dialect.name] = _Statements(dialect)
    return found


def _retryable(conn: Connection, error: BaseException) -> bool:
    """A conflict or a busy database is worth another try; a lost connection is reopened."""
    dbapi = conn.dialect.dbapi
    if isinstance(error, dbapi.IntegrityError):
        # Only a writer that bypassed the head lock can cause this; the chain is re-read.
        return True
    if isinstance(error, dbapi.OperationalError):
        text = str(error).lower()
        if "locked" in text or "busy" in text:
            return True
        conn.invalidate()
        return True
    return False


def row_hash(row: Mapping[str, Any]) -> str:
    """The hash of a stored event row (JSON fields as their stored canonical text).

    Equal to `sha256_json(event.hash_payload())`; written out by hand because it runs once per
    append and per verified event, and the JSON fields are already canonical text.
    """
    text = "".join(
        (
            '{"arguments":',
            row["arguments"],
            ',"detail":',
            "null" if row["detail"] is None else row["detail"],
            ',"outcome":',
            _encode(row["outcome"]),
            ',"prev_hash":',
            _encode(row["prev_hash"]),
            ',"result_digest":',
            _encode(row["result_digest"]),
            ',"run_id":',
            _encode(row["run_id"]),
            ',"seat":',
            _encode(row["seat"]),
            ',"seq":',
            str(int(row["seq"])),
            ',"state_change":',
            "null" if row["state_change"] is None else row["state_change"],
            ',"time":',
            _encode(row["time"]),
            ',"tool":',
            _encode(row["tool"]),
            ',"v":',
            str(int(row["version"])),
            "}\n",
        )
    )
    return sha256_bytes(text.encode("utf-8"))


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
    return {
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
    columns = [column for column in log_events.c]
    while after < upto:
        query = (
            sa.select(*columns)
            .where(log_events.c.run_id == run_id, log_events.c.seq > after)
            .where(log_events.c.seq <= upto)
            .order_by(log_events.c.seq)
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

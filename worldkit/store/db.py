"""Where the store is and how to talk to it: URL resolution, engine creation, the `Store` handle.

A URL comes from `--store URL`, else the `WORLDKIT_STORE` environment variable, else the SQLite
file `.worldkit/store.db` under the current directory. SQLite runs in WAL mode with a busy timeout
so that several processes can write one file; write transactions take SQLite's write lock up
front (`BEGIN IMMEDIATE`) so a writer waits its turn instead of failing mid-transaction.

This module must never keep a global engine or connection: a `Store` is opened and passed in.
"""

from __future__ import annotations

import os
import re
import sqlite3
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.pool import StaticPool

from worldkit.errors import StoreError, StoreUnusable
from worldkit.store import schema
from worldkit.store.times import format_time, parse_time, utc_now  # noqa: F401 - re-exported for older imports

if TYPE_CHECKING:
    from worldkit.store.revisions import RevisionInfo, StoredRevision

ENV_VAR = "WORLDKIT_STORE"
DEFAULT_PATH = Path(".worldkit") / "store.db"
#: How long a SQLite writer waits for another writer's lock before giving up.
SQLITE_BUSY_TIMEOUT_MS = 60_000
_WRITE_OPTION = "worldkit_write"


def resolve_url(
    explicit: str | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> str:
    """The store URL: `explicit`, else $WORLDKIT_STORE, else `.worldkit/store.db` in `cwd`."""
    environ = os.environ if environ is None else environ
    for candidate in (explicit, environ.get(ENV_VAR)):
        if candidate is not None and candidate.strip():
            return normalize_url(candidate.strip())
    base = Path.cwd() if cwd is None else cwd
    return f"sqlite:///{(base / DEFAULT_PATH).resolve()}"


_URL_EXAMPLES = "sqlite:///path/store.db, postgresql+psycopg://user@host:5432/db or a file path"


def normalize_url(url: str) -> str:
    """A store URL parsed by SQLAlchemy (`make_url`): a bare file path is SQLite, `postgresql://` (and
    `postgres://`) the psycopg 3 driver. Something that looks like a URL but is not one (`postgresql+psycopg//…`,
    `sqlite:/x`) is a `UsageError` naming the fix, never a SQLite file of that name."""
    from worldkit.errors import UsageError

    if "://" not in url:
        scheme = re.match(r"^([A-Za-z][A-Za-z0-9+.-]*)(:|//)", url)
        if scheme and scheme.group(1).split("+")[0].lower() in _DIALECTS:
            name, rest = scheme.group(1), url[len(scheme.group(1)) :].lstrip(":")
            if name.lower().startswith("sqlite"):  # the file it names, absolute as worldkit writes it
                fixed = f"{name}:///{Path(rest[2:] if rest.startswith('//') else rest).expanduser().resolve()}"
            else:
                fixed = f"{name}://{rest.lstrip('/')}"
            raise UsageError(f"store URL {url!r} is malformed (a URL's scheme ends in `://`): did you mean {fixed!r}? "
                             f"Use e.g. {_URL_EXAMPLES}")  # fmt: skip
        return f"sqlite:///{Path(url).expanduser().resolve()}"
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            url = "postgresql+psycopg://" + url[len(prefix) :]
            break
    try:
        parsed = sa.make_url(url)
    except (sa.exc.ArgumentError, ValueError) as error:  # ValueError: a port that is not a number
        raise UsageError(f"store URL {url!r} is not a database URL ({error}); use e.g. {_URL_EXAMPLES}") from None
    if parsed.get_backend_name() not in ("sqlite", "postgresql"):
        raise UsageError(f"store URL {describe_url(parsed)} names the database {parsed.get_backend_name()!r}; worldkit "
                         f"stores live in SQLite or PostgreSQL: use e.g. {_URL_EXAMPLES}")  # fmt: skip
    return url


_DIALECTS = frozenset({"sqlite", "postgresql", "postgres", "mysql", "mariadb", "oracle", "mssql"})


def describe_url(url: str | sa.URL) -> str:
    """The URL as it may be shown to a user: any password is masked."""
    try:
        return sa.make_url(url).render_as_string(hide_password=True)
    except sa.exc.ArgumentError:
        return str(url)


def sqlite_path(url: str) -> Path | None:
    """The database file of a SQLite URL, or None for in-memory and non-SQLite URLs."""
    try:
        parsed = sa.make_url(url)
    except sa.exc.ArgumentError:
        return None
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    if str(parsed.database).startswith("file:"):
        return None
    return Path(str(parsed.database))


def create_engine(url: str) -> Engine:
    """An engine for `url`, with SQLite set up for concurrent writers (WAL, busy timeout)."""
    try:
        parsed = sa.make_url(url)
    except sa.exc.ArgumentError as error:
        raise StoreError(
            f"store URL {url!r} is not a database URL; use e.g. sqlite:///path/store.db or "
            "postgresql+psycopg://user@host:5432/db"
        ) from error
    if parsed.get_backend_name() != "sqlite":
        try:
            return sa.create_engine(parsed, pool_pre_ping=True)
        except (sa.exc.ArgumentError, ImportError) as error:
            raise StoreError(
                f"cannot use store {describe_url(parsed)}: {error}; worldkit supports sqlite:// "
                "and postgresql+psycopg:// URLs"
            ) from error
    in_memory = sqlite_path(url) is None
    options: dict[str, Any] = {
        "connect_args": {"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000, "check_same_thread": False}
    }
    if in_memory:
        # One shared connection, or every checkout would see its own empty database.
        options["poolclass"] = StaticPool
    engine = sa.create_engine(parsed, **options)
    _setup_sqlite(engine, wal=not in_memory)
    return engine


def _setup_sqlite(engine: Engine, *, wal: bool) -> None:
    @sa.event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Let SQLAlchemy, not the sqlite3 module, decide when transactions begin (see `_on_begin`).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        if wal:
            _enter_wal(cursor)
            # In WAL mode NORMAL is durable against application crashes, and much faster.
            cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @sa.event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        write = conn.get_execution_options().get(_WRITE_OPTION, False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")


def _enter_wal(cursor: Any) -> None:
    """Put the database in WAL mode, waiting for processes that are doing the same.

    The mode is stored in the file, so only the first connection ever changes it. That change
    needs an exclusive lock, and SQLite answers "database is locked" at once, without its busy
    handler, while another process opening the fresh file holds one; so wait here, up to the busy
    timeout, instead of failing the second of two processes that start together.
    """
    deadline = time.monotonic() + SQLITE_BUSY_TIMEOUT_MS / 1000
    pause = 0.005
    while True:
        try:
            (mode,) = cursor.execute("PRAGMA journal_mode").fetchone()
            if str(mode).lower() != "wal":
                cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as error:
            message = str(error).lower()
            if ("locked" not in message and "busy" not in message) or time.monotonic() > deadline:
                raise
            time.sleep(pause)
            pause = min(pause * 2, 0.2)


class Store:
    """An open store: an engine plus the tables worldkit keeps in it. Close it when done."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    @classmethod
    def open(cls, url: str | None = None, *, create: bool = True) -> Store:
        """Open (and, if empty, set up) the store at `url`, resolved by `resolve_url`.

        With `create=False` a SQLite file that does not exist yet is an error instead of being
        created, for commands that only read.
        """
        resolved = resolve_url(url)
        path = sqlite_path(resolved)
        if path is not None and not path.exists():
            if not create:
                raise StoreError(
                    f"no store at {path}; load something into it first (e.g. `worldkit world "
                    "load`), or point --store / WORLDKIT_STORE at an existing store"
                )
            path.parent.mkdir(parents=True, exist_ok=True)
        store = cls(create_engine(resolved))
        try:
            store.install(adopt=create)
        except BaseException:
            store.close()
            raise
        return store

    @property
    def url(self) -> str:
        """The store's URL with any password masked."""
        return describe_url(self.engine.url)

    @property
    def backend(self) -> str:
        """`sqlite` or `postgresql`."""
        return self.engine.dialect.name

    def install(self, *, adopt: bool = True) -> None:
        """Create the tables and guards if the store is empty; refuse another schema version.

        With `adopt=False` (commands that only read) a database that holds other tables but no
        worldkit store is refused rather than given worldkit's tables.
        """
        with self.guard("set up"):
            with self.engine.connect() as conn:
                version = schema.installed_version(conn)
                foreign = sorted(sa.inspect(conn).get_table_names()) if version is None else []
                conn.rollback()
            if version is None and foreign and not adopt:
                shown = ", ".join(foreign[:5]) + (", …" if len(foreign) > 5 else "")
                raise StoreError(
                    f"{self.url} is not a worldkit store: it holds other tables ({shown}) and no "
                    "worldkit schema; nothing was changed — point at a store worldkit wrote "
                    "(e.g. the --store of `worldkit run`)"
                )
            if version is None:
                with self.write() as conn:
                    schema.install(conn)
                    version = schema.installed_version(conn)
            elif version < schema.SCHEMA_VERSION:
                with self.write() as conn:
                    schema.migrate(conn, version)
                    version = schema.installed_version(conn)
        if version != schema.SCHEMA_VERSION:
            raise StoreError(
                f"store {self.url} has schema version {version}, this worldkit needs "
                f"{schema.SCHEMA_VERSION}; use a store made by this version (a new --store URL)"
            )

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """A write transaction (on SQLite it takes the write lock at once); commits on exit."""
        with self.engine.connect() as conn:
            conn.execution_options(**{_WRITE_OPTION: True})
            with conn.begin():
                yield conn

    def connect_for_writes(self) -> Connection:
        """A connection whose transactions are write transactions; the caller closes it."""
        conn = self.engine.connect()
        conn.execution_options(**{_WRITE_OPTION: True})
        return conn

    @contextmanager
    def guard(self, action: str) -> Iterator[None]:
        """Turn a failure to reach or use the database into a `StoreError` naming the store."""
        try:
            yield
        except (sa.exc.OperationalError, sa.exc.DatabaseError) as error:
            if not isinstance(error, sa.exc.OperationalError) and type(error) is not sa.exc.DatabaseError:
                raise  # an integrity or programming error: not about reaching the store
            # Unreachable, or (a plain DatabaseError) a file that is not a database at all.
            raise StoreUnusable(
                f"cannot {action} store {self.url}: {_first_line(error.orig)}; check that the "
                f"database is reachable and the URL right (--store or {ENV_VAR})"
            ) from error

    def put_revision(
        self, world: str, name: str, digest: str, parent: str | None, state_json: bytes
    ) -> RevisionInfo:
        """Store revision `name` of `world`; storing the same digest again changes nothing."""
        from worldkit.store import revisions

        with self.guard("write to"):
            return revisions.put_revision(self, world, name, digest, parent, state_json)

    def get_revision(self, world: str, name: str) -> StoredRevision | None:
        """Revision `name` of `world` with its state, or None if it was never stored."""
        from worldkit.store import revisions

        with self.guard("read"):
            return revisions.get_revision(self, world, name)

    def list_revisions(self, world: str) -> list[RevisionInfo]:
        """The stored revisions of `world`, sorted by name."""
        from worldkit.store import revisions

        with self.guard("read"):
            return revisions.list_revisions(self, world)

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Store({self.url!r})"


def _first_line(error: BaseException | None) -> str:
    text = str(error).strip() if error is not None else ""
    return text.splitlines()[0] if text else "unknown error"

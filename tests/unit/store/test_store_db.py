"""Opening a store: URL resolution, engine set-up per backend, schema installation."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

import worldkit.store as store_pkg
from worldkit.errors import StoreError
from worldkit.store import Store, resolve_url
from worldkit.store.db import describe_url, normalize_url
from worldkit.store.schema import SCHEMA_VERSION, store_meta


def test_explicit_url_wins_over_environment_and_default(tmp_path: Path) -> None:
    env = {"WORLDKIT_STORE": "sqlite:///from-env.db"}
    explicit = "sqlite:///explicit.db"
    assert resolve_url(explicit, environ=env, cwd=tmp_path) == explicit


def test_environment_wins_over_default(tmp_path: Path) -> None:
    env = {"WORLDKIT_STORE": "sqlite:///from-env.db"}
    assert resolve_url(None, environ=env, cwd=tmp_path) == "sqlite:///from-env.db"


def test_default_is_a_sqlite_file_under_the_current_directory(tmp_path: Path) -> None:
    expected = f"sqlite:///{tmp_path.resolve() / '.worldkit' / 'store.db'}"
    assert resolve_url(None, environ={}, cwd=tmp_path) == expected
    assert resolve_url("  ", environ={"WORLDKIT_STORE": ""}, cwd=tmp_path) == expected


def test_plain_paths_and_postgres_urls_are_normalized(tmp_path: Path) -> None:
    assert normalize_url(str(tmp_path / "s.db")) == f"sqlite:///{tmp_path.resolve() / 's.db'}"
    assert normalize_url("postgresql://u@h/db") == "postgresql+psycopg://u@h/db"
    assert normalize_url("postgres://u@h/db") == "postgresql+psycopg://u@h/db"
    assert normalize_url("postgresql+psycopg://u@h/db") == "postgresql+psycopg://u@h/db"


def test_passwords_are_never_shown() -> None:
    assert "secret" not in describe_url("postgresql+psycopg://u:secret@h/db")


def test_open_creates_the_default_file_and_its_folder(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("WORLDKIT_STORE", raising=False)
    with Store.open() as store:
        assert store.backend == "sqlite"
    assert (tmp_path / ".worldkit" / "store.db").is_file()


def test_open_without_create_refuses_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no store at .*missing.db.*--store"):
        Store.open(f"sqlite:///{tmp_path / 'missing.db'}", create=False)
    assert not (tmp_path / "missing.db").exists()


def test_in_memory_store_has_the_tables() -> None:
    with Store.open("sqlite://") as store:
        names = set(sa.inspect(store.engine).get_table_names())
    assert {"store_meta", "revisions", "log_runs", "log_events", "run_records"} <= names


def test_sqlite_file_runs_in_wal_mode_with_a_busy_timeout(tmp_path: Path) -> None:
    with Store.open(f"sqlite:///{tmp_path / 's.db'}") as store, store.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() >= 10_000
        assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 1  # NORMAL
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1


def test_reopening_keeps_data_and_installs_nothing_twice(store_url: str) -> None:
    with Store.open(store_url) as store:
        store.put_revision("w", "r1", "a" * 64, None, b"{}")
    with Store.open(store_url) as store:
        assert [r.name for r in store.list_revisions("w")] == ["r1"]
        with store.engine.connect() as conn:
            assert conn.execute(sa.select(sa.func.count()).select_from(store_meta)).scalar() == 1


def test_a_store_of_another_schema_version_is_refused(store_url: str) -> None:
    with Store.open(store_url) as store, store.engine.begin() as conn:
        conn.execute(sa.update(store_meta).values(value="99"))
    expected = f"schema version 99, this worldkit needs {SCHEMA_VERSION}"
    with pytest.raises(StoreError, match=expected):
        Store.open(store_url)


def test_an_unreachable_server_is_a_store_error_naming_the_store() -> None:
    url = "postgresql+psycopg://someone:hunter2@127.0.0.1:1/nowhere?connect_timeout=2"
    with pytest.raises(StoreError) as caught:
        Store.open(url)
    message = caught.value.message
    assert "127.0.0.1:1/nowhere" in message and "hunter2" not in message
    assert "--store" in message and "WORLDKIT_STORE" in message


def test_a_malformed_or_unsupported_url_is_bad_usage() -> None:
    from worldkit.errors import UsageError

    with pytest.raises(UsageError, match="not a database URL"):
        Store.open("://x")
    with pytest.raises(UsageError, match="names the database 'nosuchscheme'.*SQLite or PostgreSQL"):
        Store.open("nosuchscheme://x")


def test_public_names_are_complete() -> None:
    import types

    public = {
        name
        for name, value in vars(store_pkg).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert public == set(store_pkg.__all__)
    assert len(store_pkg.__all__) == len(set(store_pkg.__all__))

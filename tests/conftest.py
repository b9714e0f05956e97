"""Fixtures shared by every test: where the public source data lives, store URLs per backend, and a
guard that leaves the overlay check registry as it was."""

from __future__ import annotations

import gc
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import settings

from tests import session_results, xdist_order
from worldkit._process import freeze_process

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("WORLDKIT_SHARED_DATA", REPO.parent / "shared" / "data"))
PG_ADMIN_URL = os.environ.get(
    "WORLDKIT_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)


_OWN_CACHE = "_worldkit_test_cache"
_OWN_SESSION = "_worldkit_test_session"

# Hypothesis's default 200 ms deadline per example is a timed assertion: on a loaded 2-core machine
# it fails correct code (DeadlineExceeded). Speed is measured by bench/, never asserted in tests.
settings.register_profile("worldkit", deadline=None)
settings.load_profile("worldkit")


def pytest_configure(config: pytest.Config) -> None:
    """One world cache (`worldkit.world.cache`) per test session, outside the repo.

    Set before pytest-xdist starts its workers, so every worker and every CLI subprocess shares
    it: PharmaCo is loaded and validated once per session, not once per process. A run never
    reads an earlier run's cache, and never writes into the tree's own `.worldkit/`. Beside it, a
    fresh folder for the results the workers share (`tests/session_results.py`).
    """
    if hasattr(config, "workerinput"):
        return
    if session_results.ENV not in os.environ:  # results the workers share (tests/session_results.py)
        shared = tempfile.mkdtemp(prefix="worldkit-test-session-")
        os.environ[session_results.ENV] = shared
        setattr(config, _OWN_SESSION, shared)
    if "WORLDKIT_CACHE" in os.environ:
        return
    folder = tempfile.mkdtemp(prefix="worldkit-test-cache-")
    os.environ["WORLDKIT_CACHE"] = folder
    setattr(config, _OWN_CACHE, folder)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:  # noqa: ANN001 - xdist's WorkerController
    xdist_order.tell_worker(node.config, node.workerinput)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Longest tests first on each xdist worker (tests/xdist_order.py)."""
    xdist_order.reorder(config, items)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Keep the cyclic collector off what collection built, which lives as long as the worker.

    A worker imports every test module and most of worldkit and its libraries: a few million
    objects, which each full collection traversed again (measured on tests/unit/{world,overlay,run}:
    the collector took 7.4 s of a worker's 41 CPU-s, 5.6 s of it in 25 full collections). Frozen
    (`gc.freeze`), they are out of its sight; a full collection is also let wait for ten times as
    many younger ones (about 4 s of the worker's time was left to it, in 17 full collections).
    """
    freeze_process()
    gc.set_threshold(700, 10, 100)


def pytest_unconfigure(config: pytest.Config) -> None:
    folder = getattr(config, _OWN_CACHE, None)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
        os.environ.pop("WORLDKIT_CACHE", None)
    shared = getattr(config, _OWN_SESSION, None)
    if shared is not None:
        shutil.rmtree(shared, ignore_errors=True)
        os.environ.pop(session_results.ENV, None)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"public source data not found at {SHARED_DATA} (set WORLDKIT_SHARED_DATA)")
    return SHARED_DATA


def _postgres_or_skip() -> str:
    """A fresh PostgreSQL schema-isolated URL, or skip (fail under CI=true) if there is no server."""
    import sqlalchemy as sa

    try:
        engine = sa.create_engine(PG_ADMIN_URL)
        with engine.connect() as conn:
            conn.execute(sa.text("select 1"))
        engine.dispose()
    except Exception as error:  # noqa: BLE001 - any connection failure means "no server"
        reason = f"PostgreSQL not reachable at {PG_ADMIN_URL}: {error.__class__.__name__}"
        if os.environ.get("CI") == "true":
            pytest.fail(reason + " (CI=true requires it)")
        pytest.skip(reason)
    return PG_ADMIN_URL


@contextmanager
def postgres_schema() -> Iterator[str]:
    """A URL of a throwaway schema on the test PostgreSQL server (skip, or fail under CI=true,
    without a server); the schema is dropped afterwards."""
    import sqlalchemy as sa

    base = _postgres_or_skip()
    schema = f"wk_{uuid.uuid4().hex[:12]}"
    engine = sa.create_engine(base)
    with engine.begin() as conn:
        conn.execute(sa.text(f'create schema "{schema}"'))
    try:
        yield f"{base}?options=-csearch_path%3D{schema}"
    finally:
        with engine.begin() as conn:
            conn.execute(sa.text(f'drop schema "{schema}" cascade'))
        engine.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path):
    """A store URL on each backend; the PostgreSQL one lives in its own throwaway schema."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'store.db'}"
        return
    with postgres_schema() as url:
        yield url


@pytest.fixture
def restore_check_registry() -> Iterator[None]:
    """Leave the overlay check registry as it was: loading an InfoOrgBench packet's overlay registers
    `structure_score`, which other tests do not expect (modules opt in with `usefixtures`)."""
    from worldkit.overlay.checks import CHECKS

    saved = dict(CHECKS)
    yield
    CHECKS.clear()
    CHECKS.update(saved)


@pytest.fixture
def fixture_overlays_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fixture overlays and their world on the configured path: a run folder names its overlay
    by id only, and grading, regrading and serving one resolve it there (`worldkit.frozen.resolve`)."""
    fixtures = REPO / "tests" / "fixtures" / "overlays"
    monkeypatch.setenv("WORLDKIT_OVERLAYS", str(fixtures))
    monkeypatch.setenv("WORLDKIT_WORLDS", str(fixtures))

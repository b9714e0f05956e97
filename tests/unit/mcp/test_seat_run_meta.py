"""Issue 11, item 4: a trusted serve (`--trust-staged`) is recorded in the run's metadata, which the
store keeps fixed; arguments the SDK's validation refuses are logged bounded, not in full."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.unit.mcp.seat_support import Run, permissive, project
from tests.unit.store.conftest import old_sqlite_store
from worldkit.check_result import CheckResult
from worldkit.mcp.seat import default_tool_config
from worldkit.mcp.session import StagedSeat, open_run
from worldkit.store import Store, get_run

pytestmark = pytest.mark.anyio


def _staged(projection: Path, trusted: bool) -> StagedSeat:
    check = CheckResult(id="frozen-workspace", purpose="p", status="skip" if trusted else "pass",
                        reason="served because of --trust-staged" if trusted else None,
                        counts={"trusted_staged": trusted, "reference": "frozen"})  # fmt: skip
    return StagedSeat(projection=projection, config=default_tool_config(projection), workspace=None,
                      root=projection, trusted_staged=trusted, frozen_check=check)  # fmt: skip


@pytest.mark.parametrize("trusted", [True, False])
def test_the_run_records_whether_the_serve_was_trusted(
    tmp_path: Path, trusted: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    from worldkit._cli.main import run as cli

    projection = project(tmp_path, "S1")
    url = f"sqlite:///{tmp_path / 'store.db'}"
    with Store.open(url) as store:
        with open_run(store, "served", "S1", anchor=tmp_path / "a.json", staged=_staged(projection, trusted)) as log:
            log.append("list_files", {}, "ok", None)
        meta = get_run(store, "served").meta
        assert meta is not None and meta["trusted_staged"] is trusted
        assert meta["frozen_check"]["status"] == ("skip" if trusted else "pass")
        # Fixed once the run exists: the store refuses to rewrite it.
        with pytest.raises(sa.exc.DatabaseError), store.engine.begin() as conn:
            conn.exec_driver_sql("UPDATE log_runs SET meta = '{\"trusted_staged\":false}'")
    capsys.readouterr()
    assert cli(["log", "show", "served", "--store", url]) == 0
    shown = capsys.readouterr().out
    assert ("TRUSTED STAGED" in shown) is trusted and '"trusted_staged":' in shown


def test_a_store_of_schema_2_gains_run_meta(tmp_path: Path) -> None:
    url = old_sqlite_store(tmp_path / "old.db", 2)  # a store file as schema 2 had it
    with Store.open(url) as store:
        with open_run(store, "after", "S1", staged=None) as log:
            log.append("list_files", {}, "ok", None)
        assert get_run(store, "after").meta is None
        with pytest.raises(sa.exc.DatabaseError), store.engine.begin() as conn:
            conn.exec_driver_sql("UPDATE log_runs SET meta = '{}'")


async def test_an_argument_the_sdk_refuses_is_logged_bounded(tmp_path: Path) -> None:
    projection = project(tmp_path, "S1")
    run = Run(projection, permissive(projection), workspace=tmp_path / "ws")
    big = "x" * (20 * 1024 * 1024)
    try:
        async with run.client() as client:
            # An unknown argument (and a wrong type): refused by argument validation, no tool runs.
            result = await client.call_tool("write_file", {"path": "a.md", "content": big, "bogus": big})
            assert result.is_error
            result = await client.call_tool("read_file", {"path": big, "offset": "not a number"})
            assert result.is_error
        events = run.events()
        assert [e.outcome for e in events] == ["error", "error"]
        assert events[0].arguments["content"]["bytes"] == len(big) and events[0].arguments["bogus"]["truncated"]
        assert events[1].arguments["path"]["sha256"] and events[1].arguments["offset"] == "not a number"
        with run.store.engine.connect() as conn:
            stored = conn.exec_driver_sql("SELECT max(length(arguments)) FROM log_events").scalar()
        assert stored < 10_000
    finally:
        run.close()

"""Anchors are looked for everywhere they were written: deleting a run folder's `log-anchor.json`
no longer hides a truncated log or a deleted run from `verify --only event-logs --runs DIR`, because
the execution record and the record stored with the log still hold the anchor; a run with no
anchor anywhere fails unless its run.json declares it unanchored. On SQLite and PostgreSQL; every
tampered folder and log is a real run's, altered by the test."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.fixtures.overlays.paths import GOOD, WORLD
from worldkit._cli.main import run


@pytest.fixture
def ran(tmp_path: Path, store_url: str) -> tuple[Path, str, str]:
    """One oracle run of the good fixture: its folder, store URL and run id."""
    assert run(["run", "--overlay", str(GOOD), "--agent", "oracle", "--out", str(tmp_path / "runs"),
                "--store", store_url, "--json"]) == 0  # fmt: skip
    [folder] = (tmp_path / "runs").iterdir()
    return folder, store_url, folder.name


def _verify(capsys, runs: Path, store_url: str) -> tuple[int, dict]:
    capsys.readouterr()
    code = run(["verify", "--world", str(WORLD), "--only", "event-logs", "--store", store_url,
                "--runs", str(runs), "--json"])  # fmt: skip
    report = json.loads(capsys.readouterr().out)
    [check] = [c for c in report["checks"] if c["id"] == "event-logs"]
    return code, check


def _kinds(check: dict) -> set[str]:
    return {i["kind"] for i in check["items"]}


def _raw(store_url: str, *statements: tuple[str, dict]) -> None:
    """Statements with the append-only guards bypassed, as the database's owner could."""
    engine = sa.create_engine(store_url.replace("sqlite:///", "sqlite:///", 1))
    with engine.begin() as conn:
        if engine.dialect.name == "sqlite":
            for (name,) in conn.execute(sa.text("SELECT name FROM sqlite_master WHERE type = 'trigger'")).all():
                conn.execute(sa.text(f'DROP TRIGGER "{name}"'))
        else:
            conn.execute(sa.text("SET LOCAL session_replication_role = replica"))
        for sql, params in statements:
            conn.execute(sa.text(sql), params)
    engine.dispose()


def _truncate_with_head_moved_back(store_url: str, run_id: str) -> None:
    from worldkit.store import Store

    with Store.open(store_url) as store, store.engine.connect() as conn:
        last = conn.execute(sa.text("SELECT max(seq) FROM log_events WHERE run_id = :r"), {"r": run_id}).scalar()
        prev = conn.execute(sa.text("SELECT hash FROM log_events WHERE run_id = :r AND seq = :s"),
                            {"r": run_id, "s": last - 1}).scalar()  # fmt: skip
    _raw(store_url, ("DELETE FROM log_events WHERE run_id = :r AND seq = :s", {"r": run_id, "s": last}),
         ("UPDATE log_runs SET head_seq = :s, head_hash = :h WHERE run_id = :r", {"r": run_id, "s": last - 1, "h": prev}))


def _delete_run(store_url: str, run_id: str) -> None:
    _raw(store_url, ("DELETE FROM run_records WHERE run_id = :r", {"r": run_id}),
         ("DELETE FROM log_events WHERE run_id = :r", {"r": run_id}),
         ("DELETE FROM log_runs WHERE run_id = :r", {"r": run_id}))


def test_an_intact_run_passes(capsys, ran) -> None:
    folder, url, _ = ran
    code, check = _verify(capsys, folder.parent, url)
    assert code == 0 and check["status"] == "pass" and check["counts"]["anchored"] == 1


def test_a_deleted_anchor_file_fails_although_the_record_holds_the_anchor(capsys, ran) -> None:
    folder, url, _ = ran
    (folder / "log-anchor.json").unlink()
    code, check = _verify(capsys, folder.parent, url)
    assert code == 1 and _kinds(check) == {"anchor_missing"}
    assert check["counts"]["anchored"] == 1  # the log was still checked against the record's copy


def test_a_truncated_log_behind_a_deleted_anchor_is_caught(capsys, ran) -> None:
    folder, url, run_id = ran
    (folder / "log-anchor.json").unlink()
    _truncate_with_head_moved_back(url, run_id)
    code, check = _verify(capsys, folder.parent, url)
    assert code == 1 and "anchor_missing" in _kinds(check) and len(_kinds(check)) >= 2
    assert any(run_id in i["path"] and i["kind"] != "anchor_missing" for i in check["items"])


def test_a_deleted_run_behind_a_deleted_anchor_is_caught(capsys, ran) -> None:
    folder, url, run_id = ran
    (folder / "log-anchor.json").unlink()
    _delete_run(url, run_id)
    code, check = _verify(capsys, folder.parent, url)
    assert code == 1 and {"anchor_missing", "missing"} <= _kinds(check)


def test_every_folder_copy_gone_still_fails_on_the_stored_record(capsys, ran) -> None:
    folder, url, _ = ran
    (folder / "log-anchor.json").unlink()
    record = json.loads((folder / "execution-record.json").read_text())
    record["log_anchor"] = None
    (folder / "execution-record.json").write_text(json.dumps(record))
    code, check = _verify(capsys, folder.parent, url)
    assert code == 1 and "anchor_missing" in _kinds(check)


def test_a_run_with_no_anchor_anywhere_passes_only_when_declared(capsys, ran, tmp_path: Path) -> None:
    folder, url, _ = ran
    bare = tmp_path / "bare" / "never-anchored"
    shutil.copytree(folder, bare)
    (bare / "log-anchor.json").unlink()
    (bare / "execution-record.json").unlink()
    manifest = json.loads((bare / "run.json").read_text())
    manifest["run_id"] = "never-anchored"
    (bare / "run.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    code, check = _verify(capsys, bare.parent, url)
    assert code == 1 and _kinds(check) == {"anchor_missing"}
    (bare / "run.json").write_text(json.dumps({**manifest, "unanchored": True}, indent=2, sort_keys=True) + "\n")
    code, check = _verify(capsys, bare.parent, url)
    assert code == 0 and check["status"] == "pass"

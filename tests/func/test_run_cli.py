"""`worldkit run` end to end on the good fixture overlay: oracle, noop, curated, regrade, log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fixtures.overlays.paths import GOOD
from worldkit._cli.main import run
from worldkit.overlay import load_overlay
from worldkit.record.execution import read_record

pytestmark = pytest.mark.usefixtures("fixture_overlays_on_path")


def _run(capsys, tmp_path: Path, agent: str, condition: str = "full", store: str | None = None) -> dict:
    store = store or f"sqlite:///{tmp_path / 'store.db'}"
    argv = ["run", "--overlay", str(GOOD), "--agent", agent, "--condition", condition,
            "--out", str(tmp_path / "runs"), "--store", store, "--json"]
    assert run(argv) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture(scope="module")
def overlay():
    return load_overlay(GOOD)


@pytest.mark.parametrize("condition", ["full", "curated:curator-1"])
def test_oracle_passes_every_deterministic_criterion(capsys, tmp_path: Path, overlay, condition: str) -> None:
    if condition != "full" and condition.split(":")[1] not in overlay.curated:
        condition = f"curated:{sorted(overlay.curated)[0]}"
    summary = _run(capsys, tmp_path, "oracle", condition)
    assert summary["deterministic_total"] == sum(c.route == "deterministic" for c in overlay.rubric)
    assert summary["deterministic_passed"] == summary["deterministic_total"]
    semantic = [c.id for c in overlay.rubric if c.route == "semantic"]
    assert all(summary["criteria"][cid] == "ungraded" for cid in semantic)  # no judge: never guessed


def test_noop_passes_nothing(capsys, tmp_path: Path, overlay) -> None:
    summary = _run(capsys, tmp_path, "noop")
    passed = {cid for cid, verdict in summary["criteria"].items() if verdict == "pass"}
    assert passed == set() and summary["deterministic_passed"] == 0
    assert all(label == "not_accessed" for label in summary["access"].values())


def test_record_regrades_and_log_verifies(capsys, tmp_path: Path, store_url: str) -> None:
    summary = _run(capsys, tmp_path, "oracle", store=store_url)
    run_dir = Path(summary["record"]).parent
    record = read_record(run_dir / "execution-record.json")
    assert record.digests["state_before"] != record.digests["state_after"]
    assert record.trajectory and record.trajectory[-1]["hash"] == record.digests["event_log_head"]
    assert any(c.access == "accessed" for c in record.criteria)
    assert record.stats.tool_calls == len(record.trajectory)
    assert run(["regrade", str(run_dir), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["same_as_record"] is True
    assert run(["log", "verify", record.run_id, "--store", store_url]) == 0
    capsys.readouterr()
    # Tampering with the captured workspace after the run is caught on re-grading.
    (run_dir / "workspace" / "report.md").write_text("edited after the run\n")
    assert run(["regrade", str(run_dir)]) == 1
    assert "modified after the run" in capsys.readouterr().err


def test_run_is_blocked_by_a_tampered_stage(tmp_path: Path, monkeypatch, capsys) -> None:
    import worldkit.run.folder as runner
    from worldkit.overlay import apply_overlay as real_apply

    def tampering_apply(*args, **kwargs):
        result = real_apply(*args, **kwargs)
        target = next((result.candidate / "projection" / "files").rglob("*.md"))
        target.write_bytes(target.read_bytes() + b"x")
        return result

    monkeypatch.setattr(runner, "apply_overlay", tampering_apply)
    argv = ["run", "--overlay", str(GOOD), "--agent", "noop", "--out", str(tmp_path / "runs"),
            "--store", f"sqlite:///{tmp_path / 's.db'}"]
    assert run(argv) == 1
    assert "run blocked" in capsys.readouterr().err


def test_regrade_and_log_verify_refuse_a_log_cut_short_or_rewritten(capsys, tmp_path: Path, store_url: str) -> None:
    """The run folder's anchor catches a store cut short with its head moved back, and a record
    whose trajectory was rewritten (re-hashed), on regrade and on `log verify --record`."""
    import sqlalchemy as sa

    from worldkit.store import row_hash

    summary = _run(capsys, tmp_path, "oracle", store=store_url)
    run_dir = Path(summary["record"]).parent
    record = read_record(run_dir / "execution-record.json")
    assert record.log_anchor is not None and record.log_anchor["final"] is True
    assert record.log_anchor["seq"] == len(record.trajectory)
    assert json.loads((run_dir / "log-anchor.json").read_text()) == record.log_anchor
    assert run(["regrade", str(run_dir), "--store", store_url]) == 0
    assert run(["log", "verify", record.run_id, "--store", store_url, "--record", str(run_dir / "execution-record.json")]) == 0
    capsys.readouterr()

    # 1. The record's trajectory rewritten and re-hashed from event 1 (a consistent chain).
    saved = (run_dir / "execution-record.json").read_text()
    data = json.loads(saved)
    prev = data["trajectory"][0]["prev_hash"]
    for event in data["trajectory"]:
        row = {**event, "arguments": json.dumps(event["arguments"], sort_keys=True, separators=(",", ":"),
                                                 ensure_ascii=False),
               "detail": None if event["detail"] is None else json.dumps(event["detail"], sort_keys=True,
                                                                          separators=(",", ":"), ensure_ascii=False),
               "state_change": None if event["state_change"] is None else json.dumps(
                   event["state_change"], sort_keys=True, separators=(",", ":"), ensure_ascii=False),
               "prev_hash": prev}  # fmt: skip
        if event["seq"] == 1:
            event["outcome"] = row["outcome"] = "denied"
        event["prev_hash"] = prev
        event["hash"] = prev = row_hash(row)
    (run_dir / "execution-record.json").write_text(json.dumps(data))
    assert run(["regrade", str(run_dir)]) == 1
    assert "the execution record's trajectory" in capsys.readouterr().err
    (run_dir / "execution-record.json").write_text(saved)

    # 2. The store cut short past its guards, its sealed head moved back.
    engine = sa.create_engine(store_url)
    with engine.begin() as conn:
        pg = conn.dialect.name == "postgresql"
        for statement in (["DROP TRIGGER log_events_append_only ON log_events", "DROP TRIGGER log_runs_head ON log_runs"]
                          if pg else ["DROP TRIGGER log_events_no_delete", "DROP TRIGGER log_runs_head"]):  # fmt: skip
            conn.exec_driver_sql(statement)
        last = len(record.trajectory)
        conn.execute(sa.text("DELETE FROM log_events WHERE run_id = :r AND seq = :s"), {"r": record.run_id, "s": last})
        conn.execute(sa.text("UPDATE log_runs SET head_seq = :s, head_hash = :h WHERE run_id = :r"),
                     {"r": record.run_id, "s": last - 1, "h": record.trajectory[-2]["hash"]})  # fmt: skip
    engine.dispose()
    assert run(["log", "verify", record.run_id, "--store", store_url]) == 0  # the store alone cannot tell
    capsys.readouterr()
    assert run(["regrade", str(run_dir), "--store", store_url]) == 1
    assert f"the anchor records {last} events but the stored log ends at event {last - 1}" in capsys.readouterr().err
    assert run(["log", "verify", record.run_id, "--store", store_url, "--run-dir", str(run_dir)]) == 1
    assert "cut short, head moved back" in capsys.readouterr().err

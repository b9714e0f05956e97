"""`worldkit run` end to end on the good fixture overlay: oracle, noop, curated, regrade, log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fixtures.overlays.paths import GOOD
from worldkit._cli.main import run
from worldkit.overlay import load_overlay
from worldkit.run.record import read_record


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

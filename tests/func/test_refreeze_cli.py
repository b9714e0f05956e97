"""`worldkit freeze --world W --overlays`: after a world edit, one command renews the world's
manifests, every overlay's pin and lock, and says what changed; an overlay that fails keeps its lock."""

from __future__ import annotations

from pathlib import Path

import pytest

from worldkit._cli.main import run


def test_refreeze_reports_changes_and_refuses_a_failing_overlay(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["world", "new", "beta", "--out", str(tmp_path)]) == 0
    world, overlay = tmp_path / "worlds" / "beta", tmp_path / "overlays" / "beta" / "first-task.yaml"
    lock = tmp_path / "manifests" / "beta" / "overlays" / "first-task.json"
    assert run(["freeze", "--world", str(world), "--overlays"]) == 0
    capsys.readouterr()
    assert run(["freeze", "--world", str(world), "--overlays"]) == 0
    assert capsys.readouterr().out.endswith("  nothing changed\n")
    frozen_lock = lock.read_bytes()
    # An edit to a document the task does not use, and an oracle that no longer reads REQ-2.
    content = world / "data" / "content.yaml"
    content.write_text(content.read_text().replace("third quarter", "fourth quarter"))
    overlay.write_text(overlay.read_text().replace("    - {tool: get_record, args: {id: REQ-2}}\n", ""))
    assert run(["freeze", "--world", str(world), "--overlays"]) == 1
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == f"froze beta and 0 overlay(s) in {tmp_path / 'manifests' / 'beta'}"
    assert lines[1].startswith("  revision   r1 ") and lines[2].startswith("  projection r1 2025-06-02 S1 ")
    assert lines[3].startswith("  pin        first-task ")  # re-pinned to the new projection …
    assert "  overlay first-task NOT frozen (its old lock is kept):" in lines
    assert "reference-evidence-not-accessed evidence[C5]" in out and "{tool: get_record, args: {id: REQ-2}}" in out
    assert lock.read_bytes() == frozen_lock  # … but not frozen: verify reports the stale lock
    assert run(["verify", "--world", str(world), "--only", "overlay-locks,reference-access"]) == 1

"""Grading refuses a workspace a killed seat server left a staged write in (only its log can settle it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures.overlays.paths import GOOD
from worldkit.errors import UsageError
from worldkit.mcp.confine import leftover_temp_files
from worldkit.run.regrade import grade_workspace


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_dead_writers_temp_file_is_refused_naming_log_recover(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    (workspace / "sub").mkdir(parents=True)
    (workspace / "report.md").write_text("draft\n", encoding="utf-8")
    leftover = f".wk-tmp-{_dead_pid()}-{'ab' * 8}"
    (workspace / "sub" / leftover).write_bytes(b"final\n")
    assert leftover_temp_files(workspace) == [f"sub/{leftover}"]
    with pytest.raises(UsageError) as caught:
        grade_workspace(GOOD, workspace, log="run-7")
    message = str(caught.value)
    assert f"sub/{leftover}" in message and "worldkit log recover run-7 --workspace" in message


def test_a_live_writers_temp_file_and_look_alikes_are_not_leftovers(tmp_path: Path) -> None:
    import os

    (tmp_path / f".wk-tmp-{os.getpid()}-{'cd' * 8}").write_bytes(b"in flight")  # this process is alive
    (tmp_path / ".wk-tmp-notapid-x").write_bytes(b"an agent's own file")
    (tmp_path / "wk-tmp-1-0000000000000000").write_bytes(b"no dot")
    assert leftover_temp_files(tmp_path) == []

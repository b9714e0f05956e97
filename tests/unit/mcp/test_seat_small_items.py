"""Smaller seat-server items of issue 11: long names, the temp file, refused huge arguments, leftovers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.unit.mcp.seat_support import Run, error_text, permissive, project
from worldkit.mcp.confine import (
    MAX_LOGGED_STRING_CHARS,
    bounded_arguments,
    sweep_temp_files,
    write_confined,
)
from worldkit.mcp.state import DiskWorkspace

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("name", ["a" * 252 + ".md", "é" * 126 + ".md", "日" * 83 + ".md"])
def test_a_255_byte_name_is_written(tmp_path: Path, name: str) -> None:
    assert len(name.encode()) <= 255
    write_confined(tmp_path, f"deep/er/{name}", b"x")
    assert (tmp_path / "deep" / "er" / name).read_bytes() == b"x"
    assert sorted(p.name for p in (tmp_path / "deep" / "er").iterdir()) == [name]  # no temp file left


def test_a_failed_write_leaves_no_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import errno

    from worldkit.mcp import confine

    def full_disk(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    (tmp_path / "kept").mkdir()
    monkeypatch.setattr(confine.os, "fsync", full_disk)
    with pytest.raises(OSError, match="No space"):
        write_confined(tmp_path, "kept/made/one/f.md", b"x")
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["kept"]  # no folder, no temp file


def test_a_file_named_like_the_temp_file_survives(tmp_path: Path) -> None:
    pid = os.getpid()
    for decoy in (f".report.md.tmp-{pid}", f".wk-tmp-{pid}-{'0' * 16}"):
        (tmp_path / decoy).write_bytes(b"the agent's own file")
    write_confined(tmp_path, "report.md", b"report")
    assert (tmp_path / "report.md").read_bytes() == b"report"
    for decoy in (f".report.md.tmp-{pid}", f".wk-tmp-{pid}-{'0' * 16}"):
        assert (tmp_path / decoy).read_bytes() == b"the agent's own file"


def test_temp_files_of_dead_writers_are_swept_on_start(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    (tmp_path / "sub").mkdir()
    leftover = tmp_path / "sub" / f".wk-tmp-{pid}-{'a' * 16}"
    leftover.write_bytes(b"half")
    mine = tmp_path / f".wk-tmp-{os.getpid()}-{'b' * 16}"
    mine.write_bytes(b"in flight")
    keep = tmp_path / ".wk-tmp-notes.md"
    keep.write_bytes(b"agent")
    DiskWorkspace(tmp_path)
    assert not leftover.exists() and mine.exists() and keep.exists()
    assert sweep_temp_files(tmp_path) == []


def test_bounded_arguments() -> None:
    big = "x" * (20 * 1024 * 1024)
    bounded = bounded_arguments({"path": "a.md", "content": big, "to": ["P3", big]})
    assert bounded["path"] == "a.md" and bounded["to"][0] == "P3"
    assert bounded["content"]["bytes"] == len(big) and bounded["content"]["truncated"] is True
    assert len(repr(bounded)) < 2 * MAX_LOGGED_STRING_CHARS


async def test_a_refused_20_mb_argument_is_not_stored_in_full(tmp_path: Path) -> None:
    projection = project(tmp_path, "S1")
    run = Run(projection, permissive(projection), workspace=tmp_path / "ws")
    try:
        async with run.client() as client:
            result = await client.call_tool("write_file", {"path": "big.md", "content": "x" * (20 * 1024 * 1024)})
            assert "not allowed" in error_text(result)
            ok = await client.call_tool("write_file", {"path": "small.md", "content": "fine"})
            assert not ok.is_error
        refused, written = run.events()
        assert refused.outcome == "denied"
        content = refused.arguments["content"]
        assert content["bytes"] == 20 * 1024 * 1024 and len(content["sha256"]) == 64
        assert written.arguments == {"path": "small.md", "content": "fine"}
    finally:
        run.close()

"""Bad inputs get their documented errors (exit 2 or 3, one line naming the item and the fix),
never "internal error" (exit 4): a store file that is not a database, an output folder that
cannot be written (under /proc)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from worldkit._cli.main import run


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = run(list(argv))
    err = capsys.readouterr().err
    assert "internal error" not in err and "Traceback" not in err
    return code, err


@pytest.mark.parametrize("content", [b"not a database, just text\n" * 20, b"\x00" * 4096, b"SQLite format 3\x00" + b"\xff" * 200])
def test_a_store_file_that_is_not_sqlite_is_an_environment_error(capsys, tmp_path: Path, content: bytes) -> None:
    bad = tmp_path / "store.db"
    bad.write_bytes(content)
    code, err = _run(capsys, "log", "list", "--store", f"sqlite:///{bad}")
    assert code == 5 and str(bad) in err and "--store" in err  # the store is the environment (README: exit 5)
    assert bad.read_bytes() == content  # nothing was written into it


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux's")
@pytest.mark.parametrize("argv", [
    ["materialize", "--world", "pharmaco_demo", "--rev", "r1", "--date", "2026-03-02", "--seat", "EMP-QA-001",
     "--out", "/proc/worldkit-out"],
    ["overlay", "apply", "pharmaco_demo/qualification-sweep", "--out", "/proc/worldkit-out"],
    ["export", "harbor", "--overlay", "pharmaco_demo/qualification-sweep", "--out", "/proc/worldkit-out"],
])  # fmt: skip
def test_an_output_folder_under_proc_is_a_usage_error(capsys, argv: list[str]) -> None:
    code, err = _run(capsys, *argv)
    assert code == 2 and "/proc/worldkit-out" in err and "writable disk" in err


def test_a_deliverable_csv_with_a_200_kb_field_is_graded_not_crashed(capsys, tmp_path: Path) -> None:
    """The csv module refuses a field over 128 KiB; the table check fails the criterion and says why."""
    import json

    from tests.fixtures.overlays.paths import GOOD
    from worldkit.overlay.tables import TableError, read_table

    text = "record,status,window_days\nCC-1,approved," + "3" * 200_000 + "\n"
    with pytest.raises(TableError, match="field larger than field limit"):
        read_table(text)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "status.csv").write_text(text, encoding="utf-8")
    (workspace / "report.md").write_text("# CC-1\n\n" + "x" * 200_000 + "\n", encoding="utf-8")
    capsys.readouterr()
    code = run(["grade", "--overlay", str(GOOD), "--workspace", str(workspace), "--json"])
    out = capsys.readouterr()
    assert code == 0 and "internal error" not in out.out + out.err
    graded = json.loads(out.out)
    assert graded["deterministic_passed"] < graded["deterministic_total"]


@pytest.mark.slow
def test_a_1_gib_workspace_file_is_digested_in_bounded_memory(tmp_path: Path) -> None:
    """A sparse 1 GiB file in a workspace: the scan grading uses reads it in chunks (peak memory far
    below its size) and digests it as `sha256sum` would."""
    import hashlib
    import tracemalloc

    from worldkit.mcp.state import scan_workspace

    (tmp_path / "big.bin").touch()
    os_size = 1 << 30
    with open(tmp_path / "big.bin", "r+b") as handle:
        handle.truncate(os_size)
    (tmp_path / "small.md").write_text("x\n")
    tracemalloc.start()
    found = scan_workspace(tmp_path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    zeros = hashlib.sha256()
    block = bytes(1 << 20)
    for _ in range(os_size >> 20):
        zeros.update(block)
    assert found == {"big.bin": zeros.hexdigest(), "small.md": hashlib.sha256(b"x\n").hexdigest()}
    assert peak < 64 << 20

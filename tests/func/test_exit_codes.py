"""The README's exit-code table, row by row, against real failures of the CLI."""

from __future__ import annotations

import re
import shutil
import socket
from pathlib import Path

import pytest

from worldkit._cli.main import run
from worldkit.errors import ExitCode

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")
QS = REPO / "overlays" / "pharmaco_demo" / "qualification-sweep"


def readme_table() -> dict[int, str]:
    section = README.split("## Exit codes and errors", 1)[1].split("\n## ", 1)[0]
    return {int(m.group(1)): m.group(2) for m in re.finditer(r"^\| (\d) \| ([^|]+) \|", section, re.M)}


def test_the_table_is_the_exit_codes_worldkit_defines() -> None:
    table = readme_table()
    assert sorted(table) == sorted(int(code) for code in ExitCode)
    assert table[int(ExitCode.ENVIRONMENT)].strip() == "environment" and "bug" in README.split("| 4 |", 1)[1].split("\n")[0]


def _overlay(tmp_path: Path, **fields: str) -> Path:
    shutil.copytree(QS, tmp_path / "qs")
    path = tmp_path / "qs" / "overlay.yaml"
    text = path.read_text(encoding="utf-8")
    for key, value in fields.items():
        text = re.sub(rf"^{key}: .*$", f"{key}: {value}", text, count=1, flags=re.M)
    path.write_text(text, encoding="utf-8")
    return path


def _altered_manifests(tmp_path: Path) -> Path:
    copy = tmp_path / "manifests"
    shutil.copytree(REPO / "manifests" / "pharmaco_demo", copy)
    revisions = copy / "revisions.json"
    text = revisions.read_text(encoding="utf-8")
    digest = re.search(r'"digest": "([0-9a-f]{64})"', text).group(1)
    revisions.write_text(text.replace(digest, "0" * 64, 1), encoding="utf-8")
    return copy


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def failures(tmp_path: Path) -> dict[str, tuple[int, list[str]]]:
    """Each a real failure → the code the README's table gives it."""
    seat = ["--world", "pharmaco_demo", "--rev", "r2", "--date", "2026-03-02"]
    return {
        "a check failed: a revision digest that is not the frozen one": (1, ["verify", "--world", "pharmaco_demo", "--only",
                                                                            "revision-digests", "--manifests", str(_altered_manifests(tmp_path))]),
        "bad usage: unknown seat on the command line": (2, ["materialize", *seat, "--seat", "EMP-NOPE", "--out", str(tmp_path / "o")]),
        "bad usage: malformed date": (2, ["materialize", "--world", "pharmaco_demo", "--rev", "r2", "--date", "2026-13-45",
                                          "--seat", "EMP-QC-001", "--out", str(tmp_path / "o2")]),
        "bad usage: malformed store URL": (2, ["log", "list", "--store", "postgresql+psycopg//postgres@127.0.0.1/x"]),
        "bad usage: a run folder that does not exist": (2, ["grade", str(tmp_path / "no-such-run")]),
        "invalid overlay: a seat its world lacks": (3, ["overlay", "apply", str(_overlay(tmp_path / "b", seat="EMP-NOPE-9")),
                                                        "--out", str(tmp_path / "t")]),
        "invalid overlay: an unknown key": (3, ["overlay", "check", str(_overlay(tmp_path / "c", title="x\ntitel: typo"))]),
        "environment: the store cannot be reached": (5, ["log", "list", "--store",
                                                         f"postgresql+psycopg://nobody@127.0.0.1:{_free_port()}/none"]),
        "environment: a port is taken": (5, ["serve", *seat, "--seat", "EMP-QC-001", "--transport", "http",
                                             "--port", "{held}"]),
    }  # fmt: skip


def test_every_failure_exits_with_the_code_the_readme_gives(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table = readme_table()
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen(1)
        for name, (code, argv) in failures(tmp_path).items():
            assert code in table, name
            argv = [a.replace("{held}", str(held.getsockname()[1])) for a in argv]
            got = run(argv)
            err = capsys.readouterr().err
            assert got == code, f"{name}: exit {got}, the README says {code} ({table[code].strip()}); stderr: {err[-600:]}"
            assert "Traceback" not in err and (code == 1 or err.startswith("error: ")), name  # a check reports on stdout

"""`worldkit world stats` end to end: the demo world's figures, the JSON keys, and usage errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.builders import WorldSpec
from worldkit._cli.main import run


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict:
    assert run(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_pharmaco_demo_stats_json(capsys: pytest.CaptureFixture[str]) -> None:
    info = _json(capsys, ["world", "stats", "pharmaco_demo", "--date", "2026-03-02", "--json"])
    assert {"people", "files_per_seat", "records", "messages", "overlays", "criteria"} <= info.keys()
    assert info["people"] >= 60
    assert sorted(info["files_per_seat"]) == ["EMP-MSAT-002", "EMP-MSAT-003", "EMP-QA-001", "EMP-QC-001", "EMP-RA-001", "EMP-SQ-002"]
    for seat in ("EMP-MSAT-002", "EMP-MSAT-003", "EMP-QC-001"):
        assert info["files_per_seat"][seat] == 775
    for seat, near in info["near_duplicates_per_seat"].items():  # the near-duplicate measure, per seat
        assert near["files"] == info["files_per_seat"][seat] and 0 <= near["in_groups"] <= near["files"]
        assert near["share"] <= 0.08
    assert info["records"] > 0 and info["messages"] > 0
    assert info["overlays"] >= 0 and info["criteria"] >= info["overlays"]
    for seat, formats in info["formats_per_seat"].items():  # the office mix, per seat
        assert sum(formats.values()) == info["files_per_seat"][seat]
        assert {"DOCX", "PDF", "XLSX"} <= set(formats) and formats["PDF"] >= 100 and formats["DOCX"] >= 100
    assert any("EML" in formats for formats in info["formats_per_seat"].values())


def test_default_date_and_text_output(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["world", "stats", "pharmaco_demo"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "pharmaco_demo r2 at 2026-03-02"
    assert "Files per seat" in out and "Counts" in out
    assert out[out.index("Counts") + 2].split() == ["PEOPLE", "SEATS", "RECORDS", "MESSAGES", "OVERLAYS", "CRITERIA"]
    counts = [int(cell) for cell in out[out.index("Counts") + 4].split()]
    assert counts[0] > 0 and counts[1] >= 6 and counts[5] >= counts[4]
    seat_rows = [line.split() for line in out[out.index("Files per seat"):] if line.strip().startswith("EMP-")]
    assert ["EMP-QC-001"] == [row[0] for row in seat_rows if row[0] == "EMP-QC-001"] and int(seat_rows[0][1]) >= 775
    assert all(" DOCX" in " ".join(row) and " PDF" in " ".join(row) for row in seat_rows)  # the FORMATS column: the office mix


def test_files_per_seat_grow_with_the_date(capsys: pytest.CaptureFixture[str]) -> None:
    early = _json(capsys, ["world", "stats", "pharmaco_demo", "--date", "2025-03-03", "--json"])
    late = _json(capsys, ["world", "stats", "pharmaco_demo", "--date", "2026-03-02", "--json"])
    assert early["files_per_seat"]["EMP-QC-001"] < late["files_per_seat"]["EMP-QC-001"]
    assert early["messages"] < late["messages"]


def test_small_world_and_bad_date(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    world = WorldSpec().write(tmp_path / "world")
    info = _json(capsys, ["world", "stats", str(world), "--date", "2025-12-31", "--rev", "r1", "--json"])
    assert info["world"] == "mini" and info["rev"] == "r1" and set(info["files_per_seat"]) == {"S1", "S2", "S4"}
    assert run(["world", "stats", str(world), "--date", "31/12/2025"]) == 2
    assert "malformed date '31/12/2025'" in capsys.readouterr().err


def test_world_without_default_date_needs_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    world = WorldSpec().write(tmp_path / "world")
    assert run(["world", "stats", str(world)]) == 2
    assert "has no default date; pass --date YYYY-MM-DD" in capsys.readouterr().err

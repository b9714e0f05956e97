"""`worldkit tasks list`: every shipped task, local overlays beside them (first found wins), packets of a folder."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from worldkit._cli.main import run

REPO = Path(__file__).resolve().parents[2]
SHIPPED = sorted((p.parent.name, p.name) for p in (REPO / "overlays").glob("*/*") if p.is_dir() or p.suffix == ".yaml")


def _listed(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert run(["tasks", "list", "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_every_shipped_task_is_listed_with_its_seat_date_conditions_and_criteria(capsys) -> None:
    tasks = _listed(capsys)["tasks"]
    assert sorted((t["world"], t["id"]) for t in tasks) == SHIPPED and len(SHIPPED) >= 18
    ild = next(t for t in tasks if t["id"] == "ild-warning")
    assert (ild["world"], ild["rev"], ild["date"], ild["seat"]) == ("oncology_regwriting", "r1", "2026-04-20", "EMP-SAF-001")
    assert ild["conditions"] == ["full", "curated:curator-1", "curated:curator-2"]
    assert ild["criteria"] == {"deterministic": 7, "semantic": 1} and ild["inspect"] == "worldkit/ild_warning"
    assert {t["origin"] for t in tasks} == {"shipped"}


def test_the_table_and_the_world_filter(capsys) -> None:
    assert run(["tasks", "list", "--world", "pharmaco_demo"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:6] == ["world", "task", "from", "rev", "date", "seat"]
    assert out[-1] == "8 task(s)"
    row = next(line.split() for line in out if " qualification-sweep " in line)
    assert row == ["pharmaco_demo", "qualification-sweep", "shipped", "r2", "2026-03-02", "EMP-QC-001",
                   "full,curated:curator-1,curated:curator-2", "4+1", "worldkit/qualification_sweep"]


def test_an_unknown_world_is_bad_usage(capsys) -> None:
    assert run(["tasks", "list", "--world", "nope"]) == 2
    assert "no tasks for world 'nope'" in capsys.readouterr().err


def test_local_overlays_come_first_and_a_broken_one_is_named(tmp_path: Path, capsys) -> None:
    local = tmp_path / "mine" / "overlays" / "pharmaco_demo"
    shutil.copytree(REPO / "overlays" / "pharmaco_demo" / "qualification-sweep", local / "qualification-sweep")
    (local / "half-written.yaml").write_text("id: half-written\ntitle: [unclosed\n", encoding="utf-8")
    tasks = _listed(capsys, "--world", "pharmaco_demo", "--worlds", str(tmp_path / "mine"))["tasks"]
    by_id = {t["id"]: t for t in tasks}
    assert by_id["qualification-sweep"]["origin"] == "local" and by_id["stability-update"]["origin"] == "shipped"
    assert [t["id"] for t in tasks].count("qualification-sweep") == 1
    assert by_id["half-written"]["problem"] and by_id["half-written"]["inspect"] == "worldkit/task"
    assert len(tasks) == 9


def test_infoorg_packets_of_a_folder_are_listed(tmp_path: Path, capsys) -> None:
    from tests.fixtures.jira_export import write_jira_export
    from worldkit.infoorg.packets import build_packets, write_packets
    from worldkit.overlay.checks import CHECKS

    saved = dict(CHECKS)
    try:
        write_packets(build_packets("thread", write_jira_export(tmp_path / "export"), 1), tmp_path / "packets")
        listed = _listed(capsys, "--world", "pharmaco_demo", "--packets", str(tmp_path / "packets"))
        assert run(["tasks", "list", "--world", "pharmaco_demo", "--packets", str(tmp_path / "packets")]) == 0
        table = capsys.readouterr().out
    finally:
        CHECKS.clear()
        CHECKS.update(saved)
    [packet] = listed["packets"]
    assert packet["family"] == "thread" and packet["records"] > 0 and Path(packet["path"]).parent == tmp_path / "packets"
    assert packet["id"] in table and table.rstrip().endswith("8 task(s), 1 packet(s)")

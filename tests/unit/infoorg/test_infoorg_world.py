"""The `infoorg` world: a small records office whose clerk seat hosts every InfoOrgBench packet."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from worldkit._cli.main import run
from worldkit.access.summary import describe_world
from worldkit.infoorg.overlays import REV, SEAT, WORLD
from worldkit.materialize.write import materialize
from worldkit.world import load_world

DATE = "2026-05-04"


def files_of(projection: Path) -> list[str]:
    manifest = json.loads((projection / "manifest.json").read_text(encoding="utf-8"))
    return [entry["path"] for entry in manifest["files"]]


@pytest.fixture(scope="module")
def projection(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return materialize(WORLD, REV, DATE, SEAT, tmp_path_factory.mktemp("infoorg") / "p").out


def test_the_world_loads_with_one_clerk_seat() -> None:
    package = load_world(WORLD)
    assert package.revision_names == [REV]
    assert package.spec.default_date == dt.date.fromisoformat(DATE)
    info = describe_world(package)
    assert info["company"] == "Fenwick Records Office"
    assert info["seats"] == [
        {"id": SEAT, "person": "ahale", "name": "Aisling Hale", "roles": ["employee", "records-clerk"]}
    ]
    assert info["counts"]["people"] == 6 and info["counts"]["records"] == 0


def test_world_show_prints_the_seat_and_counts(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["world", "show", WORLD]) == 0
    lines = [line.split("   ") for line in capsys.readouterr().out.splitlines()]
    rows = [[cell.strip() for cell in line if cell.strip()] for line in lines]
    assert rows[0][0].startswith("infoorg — Fenwick Records Office, history ")
    assert ["SEAT", "PERSON", "NAME", "ROLES"] in rows
    assert ["EMP-ORG-001", "ahale", "Aisling Hale", "employee, records-clerk"] in rows
    counts = rows.index(["PEOPLE", "SEATS", "DOCUMENTS", "RECORDS", "MESSAGES", "TEMPLATES"])
    assert rows[counts + 2] == ["6", "1", "7", "0", "1", "1"]


def test_the_clerk_sees_policies_procedures_own_desk_and_team_mail(projection: Path) -> None:
    assert files_of(projection) == [
        "files/Desk/ahale/intake checklist.md",
        "files/Policies/RP-01 Filing policy.md",
        "files/Policies/RP-02 Folder naming.md",
        "files/RecordsManagement/Procedures/RM-P-03 Inbox intake.md",
        "mail/MSG-INTAKE-2026-04-28.json",
        "seat.json",
        "tools.json",
    ]


def test_confidential_private_and_future_items_stay_out(projection: Path, tmp_path: Path) -> None:
    seen = " ".join(files_of(projection))
    assert "staffing" not in seen  # confidential: records managers only
    assert "rvance" not in seen  # another clerk's desk
    assert "Retention schedule" not in seen  # dated after the packet date
    later = materialize(WORLD, REV, "2026-09-01", SEAT, tmp_path / "later").out
    assert "files/Policies/RP-04 Retention schedule 2027.md" in files_of(later)


def test_policies_render_from_the_template_with_the_papers_folder_rules(projection: Path) -> None:
    naming = (projection / "files" / "Policies" / "RP-02 Folder naming.md").read_text(encoding="utf-8")
    assert naming.startswith("# RP-02 Folder naming\n\nOwner: Records Management. Version 2")
    for rule in ("neither `/` nor `\\`", "not `.` or `..`", "does not end in `.txt`", "`F12`"):
        assert rule in naming
    assert naming.rstrip().endswith("Questions about this policy go to Tomas Brandt (Records Manager).")


def test_projection_is_reproducible(projection: Path, tmp_path: Path) -> None:
    again = materialize(WORLD, REV, DATE, SEAT, tmp_path / "again")
    assert again.fingerprint == json.loads((projection / "manifest.json").read_bytes())["fingerprint"]
    for path in files_of(projection):
        assert (again.out / path).read_bytes() == (projection / path).read_bytes()

"""The organizer's record operations: bounds, refusals, crash recovery and concurrent movers."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from worldkit.canon import sha256_bytes
from worldkit.infoorg.organizer import Organizer, OrganizerRefused
from worldkit.infoorg.validity import check_workspace


def make_workspace(root: Path, count: int = 6, text: str = "Record {id} about budgets.\n") -> Path:
    ws = root / "ws"
    (ws / "inbox").mkdir(parents=True)
    for i in range(1, count + 1):
        record = f"F{i:03d}"
        (ws / "inbox" / f"{record}.txt").write_text(text.format(id=record), encoding="utf-8")
    return ws


def hashes(ws: Path) -> dict[str, str]:
    files = [p for p in ws.rglob("*.txt") if ".organizer" not in p.parts]
    return {p.stem: sha256_bytes(p.read_bytes()) for p in files}


def assert_each_record_once(ws: Path, expected: dict[str, str]) -> None:
    scan = check_workspace(ws, expected)
    assert not (scan.missing or scan.duplicated or scan.changed or scan.unexpected), scan.problems


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_workspace(tmp_path)


def test_list_pages_are_bounded_and_ordered(tmp_path: Path) -> None:
    organizer = Organizer(make_workspace(tmp_path, count=450))
    first = organizer.list_files()
    assert len(first.entries) == 200 and first.total == 450 and first.next_offset == 200
    assert first.entries[0].id == "F001" and first.entries[0].path == ["inbox"]
    last = organizer.list_files(offset=400)
    assert len(last.entries) == 50 and last.next_offset is None
    with pytest.raises(OrganizerRefused, match="limit must be between 1 and 200"):
        organizer.list_files(limit=201)


def test_read_paginates_the_exact_text(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, count=1, text="é" * 250_001)
    organizer = Organizer(ws)
    parts, offset = [], 0
    while offset is not None:
        page = organizer.read_file("F001", offset=offset)
        assert len(page.text) <= 100_000
        parts.append(page.text)
        offset = page.next_offset
    assert "".join(parts) == "é" * 250_001 and len(parts) == 3
    assert organizer.read_file("F001", offset=3, length=2).text == "éé"
    with pytest.raises(OrganizerRefused, match="unknown record id 'F999'"):
        organizer.read_file("F999")
    with pytest.raises(OrganizerRefused, match="length must be between"):
        organizer.read_file("F001", length=100_001)


def test_search_is_literal_case_insensitive_and_capped(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, count=50, text="Budget (Q3) for {id}; budget again.\n")
    organizer = Organizer(ws)
    result = organizer.search_files("BUDGET (q3)")
    assert len(result.matches) == 40 and result.truncated
    assert result.matches[0].id == "F001" and "Budget (Q3)" in result.matches[0].snippet
    assert organizer.search_files("f007;").matches[0].id == "F007"  # no regex semantics
    assert organizer.search_files(".*").matches == []
    with pytest.raises(OrganizerRefused, match="query is empty"):
        organizer.search_files("  ")


def test_move_creates_folders_and_never_changes_bytes(ws: Path) -> None:
    before = hashes(ws)
    organizer = Organizer(ws)
    result = organizer.move_files(["F001", "F002", "F001"], ["m1", "budget"])
    assert [m.id for m in result.moved] == ["F001", "F002"]
    assert (ws / "m1" / "budget" / "F001.txt").is_file()
    again = organizer.move_files(["F001"], ["m1", "budget"])
    assert again.moved == [] and again.already_there == ["F001"]
    organizer.move_files(["F003"], [])  # the workspace root is a valid place
    assert (ws / "F003.txt").is_file()
    assert hashes(ws) == before
    inventory = organizer.check_inventory()
    assert inventory.intact and inventory.present == 6 and inventory.placed == 2
    assert inventory.unplaced == ["F003", "F004", "F005", "F006"]
    assert {a.id: a.path for a in inventory.assignments} == {
        "F001": ["m1", "budget", "F001.txt"], "F002": ["m1", "budget", "F002.txt"],
        "F003": ["F003.txt"], "F004": ["inbox", "F004.txt"], "F005": ["inbox", "F005.txt"],
        "F006": ["inbox", "F006.txt"],
    }  # fmt: skip
    assert not (ws / ".organizer" / "journal.json").exists()


@pytest.mark.parametrize(
    ("ids", "destination", "message"),
    [
        (["F001"], ["ok", "F12"], "looks like a record id"),
        (["F001"], ["a/b"], "path separator"),
        (["F001"], [".."], "reserved"),
        (["F001"], ["notes.txt"], "ends in '.txt'"),
        (["F001"], [""], "empty"),
        (["F001"], [".organizer"], "reserved for the organizer"),
        (["F001"], ["x" * 300], "longer than 255 bytes"),
        (["F001", "F404"], ["ok"], "unknown record id 'F404'"),
        ([], ["ok"], "no record ids"),
    ],
)
def test_refused_moves_change_nothing(ws: Path, ids, destination, message: str) -> None:
    organizer = Organizer(ws)
    with pytest.raises(OrganizerRefused, match=message):
        organizer.move_files(ids, destination)
    assert sorted(p.name for p in ws.iterdir()) == [".organizer", "inbox"]
    assert len(list((ws / "inbox").iterdir())) == 6


def test_a_file_in_the_way_of_a_folder_is_refused(ws: Path) -> None:
    organizer = Organizer(ws)
    (ws / "plan").write_text("stray")
    with pytest.raises(OrganizerRefused, match="a file with that name exists"):
        organizer.move_files(["F001"], ["plan", "q"])


def test_inventory_reports_damage_without_quality_hints(ws: Path) -> None:
    organizer = Organizer(ws)
    organizer.move_files(["F001"], ["a"])
    (ws / "inbox" / "F002.txt").unlink()
    (ws / "inbox" / "F003.txt").write_text("edited")
    (ws / "a" / "F004.txt").write_bytes((ws / "inbox" / "F004.txt").read_bytes())
    (ws / "notes.md").write_text("x")
    inventory = organizer.check_inventory()
    assert inventory.missing == ["F002"]
    assert inventory.changed == ["F003"]
    assert inventory.duplicated == {"F004": ["a/F004.txt", "inbox/F004.txt"]}
    assert inventory.unexpected == ["notes.md"]
    assert not inventory.intact
    assert set(inventory.model_dump()) == {
        "expected", "present", "placed", "missing", "duplicated", "changed", "unexpected",
        "unplaced", "intact", "assignments",
    }  # fmt: skip
    # Table 9: the actual assignments, of every record found exactly once (F002 is gone, F004
    # is doubled); locations only, no word about how good they are.
    assert [(a.id, a.path) for a in inventory.assignments] == [
        ("F001", ["a", "F001.txt"]),
        ("F003", ["inbox", "F003.txt"]),
        ("F005", ["inbox", "F005.txt"]),
        ("F006", ["inbox", "F006.txt"]),
    ]
    with pytest.raises(OrganizerRefused, match="record F004 appears 2 times"):
        organizer.move_files(["F004"], ["b"])


def test_inventory_is_taken_once_and_kept(ws: Path) -> None:
    Organizer(ws)
    (ws / "inbox" / "F001.txt").write_text("edited after the start")
    assert Organizer(ws).check_inventory().changed == ["F001"]


def test_an_interrupted_move_is_rolled_forward(ws: Path) -> None:
    expected = hashes(ws)
    Organizer(ws)  # takes the inventory
    moves = [
        {"id": f"F00{i}", "from": f"inbox/F00{i}.txt", "to": f"done/F00{i}.txt"}
        for i in range(1, 5)
    ]
    journal = {"schema_version": 1, "destination": ["done"], "moves": moves}
    (ws / ".organizer" / "journal.json").write_text(json.dumps(journal))
    (ws / "done").mkdir()
    for move in moves[:2]:  # the crash came after two renames
        (ws / move["from"]).rename(ws / move["to"])
    assert_each_record_once(ws, expected)
    organizer = Organizer(ws)
    assert sorted(p.name for p in (ws / "done").iterdir()) == [f"F00{i}.txt" for i in range(1, 5)]
    assert not (ws / ".organizer" / "journal.json").exists()
    assert organizer.check_inventory().intact


def test_concurrent_movers_never_lose_or_duplicate(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, count=60)
    expected = hashes(ws)
    first, second = Organizer(ws), Organizer(ws)  # two servers on one workspace
    ids = sorted(expected)
    errors: list[BaseException] = []

    def mover(organizer: Organizer, folder: str) -> None:
        try:
            for round_ in range(15):
                organizer.move_files(ids[round_ % 3 :: 2], [folder, f"r{round_ % 4}"])
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [
        threading.Thread(target=mover, args=(first, "left")),
        threading.Thread(target=mover, args=(second, "right")),
        threading.Thread(target=mover, args=(first, "middle")),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert_each_record_once(ws, expected)


def test_replay_reapplies_logged_moves(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "a")
    copy = make_workspace(tmp_path / "b")
    organizer = Organizer(ws)
    result = organizer.move_files(["F001", "F002"], ["x", "y"])
    change = {
        "kind": "infoorg.move_files",
        "moves": [{"id": m.id, "from": m.from_path, "to": m.to_path} for m in result.moved],
    }
    Organizer(copy).replay(change)
    assert check_workspace(copy, hashes(copy)).paths == check_workspace(ws, hashes(ws)).paths

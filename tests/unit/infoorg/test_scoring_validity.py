"""Validity before structure: records once, bytes unchanged, no stray files, allowed names."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest

from worldkit.errors import InvalidOverlay
from worldkit.infoorg.reference import Reference, ReferenceRecord, load_reference
from worldkit.infoorg.scoring import score_trees, score_workspace
from worldkit.infoorg.tree import InvalidHierarchy, folder_name_problem, strip_wrapper

REFERENCE = {
    "F001": ("m1", "abstract"),
    "F002": ("m1", "abstract"),
    "F003": ("m1", "decisions"),
    "F004": ("m2", "abstract"),
    "F005": ("m2", "actions"),
    "F006": ("m2", "actions"),
}


@pytest.mark.parametrize(
    "name", ["budget", "F", "f12", "F12a", "Q3 plans", "a.txt.bak", ".hidden", "...", "12"]
)
def test_allowed_folder_names(name: str) -> None:
    assert folder_name_problem(name) is None


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("", "empty"),
        ("a/b", "separator"),
        ("a\\b", "separator"),
        (".", "reserved"),
        ("..", "reserved"),
        ("notes.txt", ".txt"),
        ("F12", "record id"),
        ("X1", "record id"),
        ("Z0001", "record id"),
    ],
)
def test_disallowed_folder_names(name: str, reason: str) -> None:
    problem = folder_name_problem(name)
    assert problem is not None and reason in problem


def test_strip_wrapper_drops_only_the_prefix_shared_by_all() -> None:
    assert strip_wrapper({"a": ["w", "x", "y"], "b": ["w", "x"], "c": ["w", "x", "z"]}) == {
        "a": ("y",),
        "b": (),
        "c": ("z",),
    }


def test_missing_extra_and_badly_named_records_make_the_output_invalid() -> None:
    output = {r: list(p) for r, p in REFERENCE.items() if r != "F006"}
    output["F001"] = ["m1", "F12"]
    output["F999"] = ["m2"]
    score = score_trees(REFERENCE, output)
    assert not score.valid and score.S == 0.0
    assert score.f1_bal is None and score.levels == {}
    text = "\n".join(score.problems)
    assert "record F006 is missing" in text
    assert "record F999 is not in the reference" in text
    assert "record F001: folder name 'F12' looks like a record id" in text
    assert "rename the folder" in text


def test_a_bad_reference_raises() -> None:
    with pytest.raises(InvalidHierarchy, match="reference record F001: folder name 'X1'"):
        score_trees({"F001": ["X1"], "F002": ["b"]}, {"F001": [], "F002": []})


# ---- workspaces on disk ------------------------------------------------------------------------


def make_packet(root: Path) -> Path:
    packet = root / "packet"
    inbox = packet / "candidate" / "inbox"
    inbox.mkdir(parents=True)
    records = {}
    for record, path in REFERENCE.items():
        data = f"summary sentence {record} ünïcode\n".encode()
        (inbox / f"{record}.txt").write_bytes(data)
        records[record] = ReferenceRecord(
            path=path, sha256=hashlib.sha256(data).hexdigest(), source=f"test/{record}"
        )
    (packet / "verifier").mkdir()
    reference = Reference(schema_version=1, records=records)
    (packet / "verifier" / "reference.json").write_text(reference.canonical_json())
    return packet


@pytest.fixture
def packet(tmp_path: Path) -> Path:
    return make_packet(tmp_path)


@pytest.fixture
def workspace(tmp_path: Path, packet: Path) -> Path:
    ws = tmp_path / "workspace"
    shutil.copytree(packet / "candidate" / "inbox", ws / "inbox")
    return ws


def organize(ws: Path, layout: dict[str, tuple[str, ...]]) -> None:
    for record, path in layout.items():
        source = next(ws.rglob(f"{record}.txt"))
        target = ws.joinpath(*path) / f"{record}.txt"
        target.parent.mkdir(parents=True, exist_ok=True)
        source.rename(target)


def test_untouched_inbox_is_valid_and_scores_zero(packet: Path, workspace: Path) -> None:
    score = score_workspace(packet, workspace)
    assert score.valid and score.problems == []
    assert score.S == 0.0 and score.category == "both"


def test_perfect_workspace_scores_one(packet: Path, workspace: Path) -> None:
    organize(workspace, {r: ("Meetings", "x" + p[0], p[1]) for r, p in REFERENCE.items()})
    (workspace / ".organizer").mkdir()
    (workspace / ".organizer" / "lock").write_text("")  # organizer state is not scored
    score = score_workspace(packet, workspace)  # the emptied inbox/ is ignored too
    assert score.valid and score.S == 1.0 and score.category == "none" and score.exact


def test_records_left_in_the_inbox_count_as_an_inbox_folder(packet: Path, workspace: Path) -> None:
    organize(workspace, {r: p for r, p in REFERENCE.items() if r not in ("F005", "F006")})
    paths = {r: list(p) for r, p in REFERENCE.items()}
    paths["F005"] = paths["F006"] = ["inbox"]
    assert score_workspace(packet, workspace) == score_trees(REFERENCE, paths)


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        (lambda ws: (ws / "inbox" / "F002.txt").unlink(), "record F002 is missing"),
        (
            lambda ws: shutil.copy(ws / "inbox" / "F002.txt", ws / "F002.txt"),
            "record F002 appears 2 times (F002.txt, inbox/F002.txt)",
        ),
        (
            lambda ws: (ws / "inbox" / "F003.txt").write_text("edited"),
            "record F003 at inbox/F003.txt does not match its original bytes",
        ),
        (lambda ws: (ws / "notes.md").write_text("plan"), "unexpected entry notes.md"),
        (lambda ws: (ws / "inbox" / "F777.txt").write_text("x"), "unexpected entry inbox/F777.txt"),
        (lambda ws: organize(ws, {"F001": ("Q7",)}), "folder Q7: folder name 'Q7' looks like"),
        (lambda ws: (ws / "empty.txt").mkdir(), "folder empty.txt: folder name 'empty.txt' ends"),
        (
            lambda ws: os.symlink(ws / "inbox" / "F001.txt", ws / "link.txt"),
            "unexpected entry link.txt",
        ),
    ],
)
def test_invalid_workspaces_score_zero(packet: Path, workspace: Path, damage, expected) -> None:
    damage(workspace)
    score = score_workspace(packet, workspace)
    assert not score.valid and score.S == 0.0
    assert any(expected in problem for problem in score.problems), score.problems


def test_load_reference_names_the_file_record_and_field(packet: Path) -> None:
    file = packet / "verifier" / "reference.json"
    file.write_text(file.read_text().replace('"sha256":"', '"sha256":"zz', 1))  # F001's digest
    with pytest.raises(InvalidOverlay) as caught:
        load_reference(packet)
    message = caught.value.message
    assert str(file) in message and "entity F001" in message and "field sha256" in message


def test_load_reference_without_a_reference(tmp_path: Path) -> None:
    with pytest.raises(InvalidOverlay, match="no reference found"):
        load_reference(tmp_path)


def test_reference_bytes_are_canonical(packet: Path) -> None:
    reference = load_reference(packet)
    text = (packet / "verifier" / "reference.json").read_text()
    assert reference.canonical_json() == text and text.endswith("\n")
    assert Reference.model_validate_json(text) == reference

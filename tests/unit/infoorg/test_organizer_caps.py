"""Organizer hardening (issue 11): destination caps before journaling, recovery that survives a plan
it cannot apply, and `.organizer/` outside the scored tree (anything placed there is invalid)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.unit.infoorg.test_organizer_library import (
    assert_each_record_once,
    hashes,
    make_workspace,
)
from tests.unit.infoorg.test_scoring_validity import make_packet
from worldkit.infoorg.organizer import (
    DESTINATION_BYTES_MAX,
    DESTINATION_DEPTH_MAX,
    Organizer,
    OrganizerRefused,
)
from worldkit.infoorg.scoring import score_workspace
from worldkit.infoorg.validity import check_workspace


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_workspace(tmp_path)


@pytest.mark.parametrize(
    ("destination", "message"),
    [
        (["a"] * 1500, "1500 folder levels"),
        (["a"] * (DESTINATION_DEPTH_MAX + 1), f"at most {DESTINATION_DEPTH_MAX}"),
        (["x" * 200] * 6, f"at most {DESTINATION_BYTES_MAX} bytes"),
    ],
)
def test_a_destination_too_deep_or_too_long_is_refused_before_journaling(
    ws: Path, destination: list[str], message: str
) -> None:
    expected = hashes(ws)
    organizer = Organizer(ws)
    with pytest.raises(OrganizerRefused, match=message):
        organizer.move_files(["F001"], destination)
    assert not (ws / ".organizer" / "journal.json").exists()
    assert sorted(p.name for p in ws.iterdir()) == [".organizer", "inbox"]
    organizer.move_files(["F001"], ["a"] * DESTINATION_DEPTH_MAX)  # the limit itself is allowed
    assert Organizer(ws).check_inventory().intact  # and the server still starts
    assert_each_record_once(ws, expected)


def test_a_move_past_path_max_is_refused_naming_the_limit(tmp_path: Path) -> None:
    deep = tmp_path.joinpath(*["d" * 200] * 16)  # an absolute workspace path of ~3,300 bytes
    deep.mkdir(parents=True)
    ws = make_workspace(deep)
    expected = hashes(ws)
    organizer = Organizer(ws)
    destination = ["n" * 180] * 5  # 904 bytes: within the destination cap, past PATH_MAX on disk
    with pytest.raises(OrganizerRefused, match=r"PATH_MAX = 4096 bytes; use fewer or shorter folder names"):
        organizer.move_files(["F001"], destination)
    assert not (ws / ".organizer" / "journal.json").exists()
    assert_each_record_once(ws, expected)


def test_the_organizer_tool_names_the_length_limit(tmp_path: Path) -> None:
    import anyio
    from mcp import Client

    from worldkit.mcp.organizer import build_organizer_server

    ws = make_workspace(tmp_path)

    async def call() -> str:
        async with Client(build_organizer_server(ws)) as client:
            result = await client.call_tool("move_files", {"ids": ["F001"], "destination": ["x" * 200] * 6})
            assert result.is_error
            return result.content[0].text  # type: ignore[union-attr]

    text = anyio.run(call)
    assert f"at most {DESTINATION_BYTES_MAX} bytes" in text and len(text) < 400


def test_recovery_survives_a_plan_it_cannot_apply(ws: Path) -> None:
    expected = hashes(ws)
    Organizer(ws)
    deep = ["a"] * 1500
    moves = [{"id": f"F00{i}", "from": f"inbox/F00{i}.txt", "to": "/".join([*deep, f"F00{i}.txt"])} for i in (1, 2)]
    (ws / ".organizer" / "journal.json").write_text(json.dumps({"schema_version": 1, "destination": deep,
                                                                 "moves": moves}))
    organizer = Organizer(ws)  # the start no longer fails for good
    assert not (ws / ".organizer" / "journal.json").exists()
    assert (ws / ".organizer" / "journal.rejected.json").is_file()
    assert organizer.list_files().total == 6
    assert organizer.check_inventory().intact
    assert_each_record_once(ws, expected)


def test_a_rejected_plan_is_undone_where_it_had_started(ws: Path) -> None:
    expected = hashes(ws)
    Organizer(ws)
    moves = [{"id": f"F00{i}", "from": f"inbox/F00{i}.txt", "to": f"done/F00{i}.txt"} for i in (1, 2, 3)]
    journal = {"schema_version": 1, "destination": ["done", "F12"], "moves": moves}  # a name no call can make
    (ws / ".organizer" / "journal.json").write_text(json.dumps(journal))
    (ws / "done").mkdir()
    (ws / "inbox" / "F001.txt").rename(ws / "done" / "F001.txt")
    Organizer(ws)
    assert (ws / "inbox" / "F001.txt").is_file() and not (ws / "done" / "F001.txt").exists()
    assert_each_record_once(ws, expected)


def test_a_journal_that_leaves_the_tree_is_not_followed(ws: Path, tmp_path: Path) -> None:
    Organizer(ws)
    moves = [{"id": "F001", "from": "inbox/F001.txt", "to": "../outside/F001.txt"}]
    (ws / ".organizer" / "journal.json").write_text(json.dumps({"schema_version": 1, "destination": ["x"],
                                                                 "moves": moves}))
    Organizer(ws)
    assert (ws / "inbox" / "F001.txt").is_file() and not (tmp_path / "outside").exists()


def test_a_record_copied_into_the_organizer_state_makes_the_output_invalid(tmp_path: Path) -> None:
    packet = make_packet(tmp_path)
    workspace = tmp_path / "workspace"
    shutil.copytree(packet / "candidate" / "inbox", workspace / "inbox")
    Organizer(workspace)  # the server's own state is allowed
    assert score_workspace(packet, workspace).valid
    shutil.copy(workspace / "inbox" / "F001.txt", workspace / ".organizer" / "F001.txt")
    score = score_workspace(packet, workspace)
    assert not score.valid and score.S == 0.0
    assert any(".organizer/F001.txt" in p for p in score.problems)
    (workspace / ".organizer" / "F001.txt").unlink()
    (workspace / ".organizer" / "sub").mkdir()
    assert ".organizer/sub" in check_workspace(workspace, {}).unexpected
    (workspace / ".organizer" / "sub").rmdir()
    (workspace / ".organizer" / "inventory.json").unlink()
    (workspace / ".organizer" / "inventory.json").symlink_to(workspace / "inbox" / "F001.txt")
    assert ".organizer/inventory.json" in check_workspace(workspace, {}).unexpected

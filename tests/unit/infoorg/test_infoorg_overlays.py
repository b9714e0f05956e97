"""Packets as overlays on the `infoorg` world: the description, the check type, staging, runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.fixtures.jira_export import write_jira_export
from worldkit.agents.infoorg import BaselineAgent, packet_agent
from worldkit.agents.registry import NoopAgent
from worldkit.errors import CheckFailed, InvalidOverlay, OutputExists, UsageError
from worldkit.infoorg.baselines import run_task
from worldkit.infoorg.check import CHECK_TYPE, StructureScoreCheck, register
from worldkit.infoorg.instructions import render_criterion, render_tool_instruction
from worldkit.infoorg.overlays import (
    OVERLAY_FILE,
    SEAT,
    bind_world,
    check_overlay,
    grade_workspace,
    load_overlay,
    stage_workspace,
)
from worldkit.infoorg.packets import build_packets, write_packets
from worldkit.infoorg.reference import load_reference
from worldkit.materialize.write import materialize
from worldkit.overlay.checks import CHECKS
from worldkit.overlay.models import Criterion
from worldkit.run.infoorg_packet import run_packet
from worldkit.store import Store, read_events

pytestmark = pytest.mark.usefixtures("restore_check_registry")  # loading a packet registers a check


@pytest.fixture(scope="module")
def packets(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("overlays")
    write_packets(build_packets("thread", write_jira_export(root / "export"), 3), root / "packets")
    return sorted((root / "packets").iterdir())


@pytest.fixture()
def packet(packets: list[Path], tmp_path: Path) -> Path:
    """A private copy of the first packet, free to tamper with."""
    return Path(shutil.copytree(packets[0], tmp_path / packets[0].name))


def file_by_reference(packet: Path, workspace: Path) -> None:
    for record, path in load_reference(packet).paths().items():
        target = workspace.joinpath(*path)
        target.mkdir(parents=True, exist_ok=True)
        (workspace / "inbox" / f"{record}.txt").replace(target / f"{record}.txt")


def test_every_packet_is_an_overlay_on_the_clerk_seat(packets: list[Path], tmp_path: Path) -> None:
    fingerprint = materialize("infoorg", "r1", "2026-05-04", SEAT, tmp_path / "p").fingerprint
    for packet in packets:
        overlay = load_overlay(packet)
        info = json.loads((packet / "packet.json").read_bytes())
        assert (overlay.id, overlay.family) == (info["task_id"], "thread")
        assert (overlay.world, overlay.rev, overlay.date.isoformat(), overlay.seat) == (
            "infoorg", "r1", "2026-05-04", "EMP-ORG-001")
        assert overlay.pinned_fingerprint == fingerprint
        assert overlay.request == (packet / "candidate" / "request.md").read_text(encoding="utf-8")
        assert overlay.criterion == render_criterion("thread") and overlay.criterion in overlay.request
        assert overlay.tool_instruction == render_tool_instruction()
        assert overlay.surfaces == ("organizer",) and overlay.permitted == ("move_files",)
        assert overlay.tools == ("list_files", "read_file", "search_files", "move_files", "check_inventory")
        assert overlay.deliverable.kind == "workspace_tree"
        assert overlay.packet.candidate_digest == info["candidate_digest"]
        [criterion] = overlay.rubric
        assert criterion.route == "deterministic" and criterion.check.type == CHECK_TYPE
        assert check_overlay(packet) == overlay


def test_overlay_bytes_are_canonical_and_hold_no_record_text(packets: list[Path], tmp_path: Path) -> None:
    raw = (packets[0] / OVERLAY_FILE).read_bytes()
    assert raw == json.dumps(json.loads(raw), sort_keys=True, separators=(",", ":"),
                             ensure_ascii=False).encode("utf-8") + b"\n"
    texts = [p.read_text(encoding="utf-8") for p in (packets[0] / "candidate" / "inbox").glob("*.txt")]
    assert not any(text in raw.decode("utf-8") for text in texts)
    again = tmp_path / "again"
    write_packets(build_packets("thread", write_jira_export(tmp_path / "export"), 3), again)
    for packet in packets:
        assert (again / packet.name / OVERLAY_FILE).read_bytes() == (packet / OVERLAY_FILE).read_bytes()


def test_building_leaves_the_check_registry_alone_and_loading_registers(tmp_path: Path) -> None:
    CHECKS.pop(CHECK_TYPE, None)
    write_packets(build_packets("thread", write_jira_export(tmp_path / "export"), 1), tmp_path / "p")
    assert CHECK_TYPE not in CHECKS
    load_overlay(tmp_path / "p" / "thread-001")
    assert CHECKS[CHECK_TYPE] is StructureScoreCheck
    assert register() is StructureScoreCheck  # idempotent
    criterion = Criterion.model_validate({
        "id": "S", "text": "structure", "route": "deterministic",
        "check": {"type": "structure_score", "reference_sha256": "0" * 64},
    })  # fmt: skip
    assert isinstance(criterion.check, StructureScoreCheck)


def test_check_overlay_refuses_a_stale_or_edited_overlay(packet: Path) -> None:
    overlay = json.loads((packet / OVERLAY_FILE).read_bytes())
    stale = {**overlay, "pinned_fingerprint": "0" * 64}
    (packet / OVERLAY_FILE).write_text(json.dumps(stale), encoding="utf-8")
    with pytest.raises(CheckFailed, match="no longer matches the projection of infoorg r1 2026-05-04"):
        check_overlay(packet)
    assert check_overlay(packet, fresh=False).pinned_fingerprint == "0" * 64
    (packet / OVERLAY_FILE).write_text(json.dumps({**overlay, "request": "Do it."}), encoding="utf-8")
    with pytest.raises(CheckFailed, match="request differs from candidate/request.md"):
        check_overlay(packet)
    (packet / OVERLAY_FILE).write_text(json.dumps({**overlay, "seat": 7}), encoding="utf-8")
    with pytest.raises(InvalidOverlay, match="field seat"):
        check_overlay(packet)
    (packet / OVERLAY_FILE).unlink()
    with pytest.raises(InvalidOverlay, match="no overlay.json"):
        check_overlay(packet)


def test_the_world_binding_names_its_inputs() -> None:
    binding = bind_world()
    assert (binding.world, binding.rev, binding.seat) == ("infoorg", "r1", "EMP-ORG-001")
    assert binding.date.isoformat() == "2026-05-04"
    with pytest.raises(UsageError, match="unknown seat|EMP-NOPE"):
        bind_world(seat="EMP-NOPE")


def test_grading_untouched_perfect_and_invalid_workspaces(packet: Path, tmp_path: Path) -> None:
    overlay = load_overlay(packet)
    workspace = tmp_path / "ws"
    assert stage_workspace(packet, workspace) is True
    untouched = grade_workspace(packet, workspace, overlay)["S"]
    assert not untouched.passed and "S = 0.00" in untouched.detail
    file_by_reference(packet, workspace)
    perfect = grade_workspace(packet, workspace, overlay)["S"]
    assert perfect.passed and perfect.detail == "S = 100.00 (F1_bal 100.00, E 100.00, category none)"
    next(workspace.rglob("F001.txt")).unlink()
    invalid = grade_workspace(packet, workspace, overlay)["S"]
    assert not invalid.passed and invalid.detail.startswith("invalid output, S = 0: record F001 is missing")


def test_the_check_refuses_a_changed_reference(packet: Path, tmp_path: Path) -> None:
    overlay = load_overlay(packet)
    workspace = tmp_path / "ws"
    stage_workspace(packet, workspace)
    file_by_reference(packet, workspace)
    reference = packet / "verifier" / "reference.json"
    reference.write_bytes(reference.read_bytes().replace(b'"ACME-', b'"ACNE-'))
    result = grade_workspace(packet, workspace, overlay)["S"]
    assert not result.passed and "differs from the digest pinned in the overlay" in result.detail


def test_staging_resumes_a_packet_workspace_and_refuses_a_foreign_one(packet: Path, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    assert stage_workspace(packet, workspace) is True
    (workspace / "inbox" / "F002.txt").rename(workspace / "F002.txt")
    assert stage_workspace(packet, workspace) is False  # resumed as it is
    assert (workspace / "F002.txt").is_file()
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.md").write_text("mine", encoding="utf-8")
    with pytest.raises(UsageError, match="does not hold this packet's records once each"):
        stage_workspace(packet, foreign)
    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(UsageError, match="is a file"):
        stage_workspace(packet, tmp_path / "file")


def test_a_baseline_agent_scores_what_the_direct_baseline_scores(packet: Path, tmp_path: Path) -> None:
    with Store.open(f"sqlite:///{tmp_path / 'store.db'}") as store:
        result = run_packet(packet, packet_agent("baseline:silhouette", "thread-001"), store,
                            out=tmp_path / "runs", run_id="r-1")
        events = list(read_events(store, "r-1"))
    direct = run_task(packet)
    assert result.score.valid and result.score.S == pytest.approx(direct.scores["silhouette"])
    assert result.rubric["S"][0] is True and result.replay_matches
    tools = [event.tool for event in events]
    records = direct.record_count
    assert tools[0] == "list_files" and tools.count("read_file") == records
    assert tools[-1] == "check_inventory" and {e.seat for e in events} == {SEAT}
    assert tools.count("move_files") == direct.silhouette.leaves
    declaration = json.loads(result.agent_message)
    assert len(declaration["assignments"]) == records
    saved = json.loads((tmp_path / "runs" / "r-1" / "result.json").read_bytes())
    assert saved["score"]["S"] == result.score.S and saved["events"] == len(events)
    with Store.open(f"sqlite:///{tmp_path / 'store.db'}") as store, pytest.raises(OutputExists):
        run_packet(packet, NoopAgent(), store, out=tmp_path / "runs", run_id="r-1")


def test_noop_leaves_the_inbox_and_scores_zero(packet: Path, tmp_path: Path) -> None:
    with Store.open(f"sqlite:///{tmp_path / 'store.db'}") as store:
        result = run_packet(packet, packet_agent("noop", "thread-001"), store, out=tmp_path / "runs")
    assert result.events == 0 and result.event_log_head == "" and result.replay_matches
    assert result.score.valid and result.score.S == 0 and result.rubric["S"][0] is False
    assert result.run_id.startswith("thread-001.noop.")


def test_random_baseline_seeds_and_agent_names() -> None:
    assert packet_agent("baseline:random:3", "t").name == "baseline:random:3"
    assert packet_agent("baseline:random", "t").name == "baseline:random"
    assert isinstance(packet_agent("baseline:fixed", "t"), BaselineAgent)
    for bad in ("oracle", "baseline:best", "baseline:fixed:1", "baseline:random:5", "baseline:random:x"):
        with pytest.raises(UsageError, match="use noop, baseline:flat"):
            packet_agent(bad, "t")

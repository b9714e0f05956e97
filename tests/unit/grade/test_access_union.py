"""Access adds up: a file's evidence read in pieces is accessed when the pieces cover the anchor,
not when one is missing; a listing line carrying the anchor is reported, never counted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.fixtures.overlays.paths import GOOD, WORLD
from worldkit.agents.registry import AgentResult, register_agent
from worldkit.grade.access import evidence_access
from worldkit.overlay import load_overlay
from worldkit.overlay.models import EvidenceItem
from worldkit.overlay.toolconfig import ToolConfig
from worldkit.run.runner import run_task

PROTOCOL = "Shared/Protocols/window protocol.md"
# The fixture world's protocol text, as written in tests/fixtures/overlays/world/data/content.yaml.
TEXT = ("# Pull window protocol\n\nSamples are pulled within three days of the scheduled time point, as approved "
        "under CC-1.\n\nLate pulls are recorded as deviations and assessed by QA before results are reported.\n")  # fmt: skip
ANCHOR = TEXT.index("within three days")
SCRIPTS: dict[str, list[tuple[str, dict[str, Any]]]] = {}


class _Scripted:
    def __init__(self, calls: list[tuple[str, dict[str, Any]]]) -> None:
        self.calls = calls

    async def run(self, task, tools) -> AgentResult:
        for name, arguments in self.calls:
            await tools.call(name, arguments)
        return AgentResult(steps=len(self.calls))


register_agent("test-union-scripted")(lambda options: _Scripted(SCRIPTS[options["script"]]))


def _run(tmp_path: Path, calls: list[tuple[str, dict[str, Any]]]):
    SCRIPTS[tmp_path.name] = calls
    result = run_task(GOOD, "test-union-scripted", runs_dir=tmp_path / "runs",
                      store_url=f"sqlite:///{tmp_path / 's.db'}", agent_options={"script": tmp_path.name})  # fmt: skip
    return result.record


def _piece(start: int, end: int) -> tuple[str, dict[str, Any]]:
    return ("read_file", {"path": PROTOCOL, "offset": start, "length": end - start})


# Three consecutive pieces; the anchor `within three days` straddles both cuts.
CUTS = [(0, ANCHOR + 5), (ANCHOR + 5, ANCHOR + 12), (ANCHOR + 12, len(TEXT))]


def test_the_protocol_text_is_the_fixture_worlds() -> None:
    content = yaml.safe_load((WORLD / "data" / "content.yaml").read_text(encoding="utf-8"))
    assert [d["text"] for d in content["documents"] if d["path"] == "Protocols/window protocol.md"] == [TEXT]


def test_evidence_in_three_pieces_is_accessed(tmp_path: Path) -> None:
    record = _run(tmp_path, [_piece(*cut) for cut in CUTS])
    labels = {c.id: c.access for c in record.criteria}
    assert labels["C3"] == "accessed"  # no single piece holds the anchor; their union does


def test_a_missing_piece_is_not_accessed(tmp_path: Path) -> None:
    record = _run(tmp_path, [_piece(*CUTS[0]), _piece(*CUTS[2])])
    labels = {c.id: c.access for c in record.criteria}
    assert labels["C3"] == "not_accessed"  # the middle of the anchor never reached the agent
    assert labels["C11"] == "accessed"  # C11 needs the file, any part of it


@pytest.mark.parametrize("order", [[2, 0, 1], [1, 2, 0]])
def test_pieces_add_up_in_any_order(tmp_path: Path, order: list[int]) -> None:
    record = _run(tmp_path, [_piece(*CUTS[i]) for i in order])
    assert {c.id: c.access for c in record.criteria}["C3"] == "accessed"


def test_a_subject_in_a_listing_is_reported_not_counted(tmp_path: Path) -> None:
    record = _run(tmp_path, [("list_messages", {})])
    overlay = load_overlay(GOOD)
    evidence = {**overlay.evidence, "C8": [[EvidenceItem(surface="mail", locator="M2", anchor="Private")]]}
    overlay = overlay.model_copy(update={"evidence": evidence})
    candidate = tmp_path / "runs" / record.run_id / "package" / "candidate"
    config = ToolConfig.model_validate_json((candidate / "tool-config.json").read_bytes())
    report = evidence_access(overlay, None, [dict(e) for e in record.trajectory], candidate=candidate, config=config)
    assert report.labels["C8"] == "not_accessed"
    assert report.seen_in_listing == {"C8": ["mail:M2"]}


def test_received_stretches_join_only_where_they_touch() -> None:
    from worldkit.grade.access import Exposure, Received, _placed

    whole = "alpha beta gamma delta epsilon"
    received = Received()
    received.add(Exposure("files", "files/x", "", spans=((0, 8),), whole=whole))  # "alpha be"
    received.add(Exposure("files", "files/x", "", spans=((14, 30),), whole=whole))  # "ma delta epsilon"
    text = received.exposure("files/x").text
    assert "beta gamma" not in text  # the gap 8-14 is never bridged
    # a search snippet placed in the file fills the gap ("ta gam" at 8-14 → "…ta gam…")
    received.add(Exposure("files", "files/x", "", spans=_placed(whole, "…**ta** gam…"), whole=whole))
    assert "alpha beta gamma delta epsilon" in received.exposure("files/x").text
    assert _placed(whole, "a") == ()  # a piece that occurs more than once is not placed

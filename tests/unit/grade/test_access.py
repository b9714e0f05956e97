"""Access labels on real trajectories: own-workspace reads, re-reads after a permitted change,
ranked-search markup, and `unknown` only for the criteria an undecidable call could decide."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.overlays.paths import GOOD
from worldkit.agents.registry import AgentResult, register_agent
from worldkit.grade.access import evidence_access, plain
from worldkit.mcp.seat import SeatView
from worldkit.overlay import load_overlay
from worldkit.overlay.toolconfig import ToolConfig
from worldkit.run.runner import run_task

SCRIPTS: dict[str, list[tuple[str, dict[str, Any]]]] = {}


class ScriptedAgent:
    """Makes the given tool calls, in order, through the seat's MCP tools."""

    def __init__(self, calls: list[tuple[str, dict[str, Any]]]) -> None:
        self.calls = calls
        self.name = "scripted"

    async def run(self, task, tools) -> AgentResult:
        for name, arguments in self.calls:
            await tools.call(name, arguments)
        return AgentResult(steps=len(self.calls))


register_agent("test-scripted")(lambda options: ScriptedAgent(SCRIPTS[options["script"]]))


@pytest.fixture(scope="module")
def overlay():
    return load_overlay(GOOD)


def _run(tmp_path: Path, calls: list[tuple[str, dict[str, Any]]]):
    SCRIPTS[tmp_path.name] = calls
    result = run_task(GOOD, "test-scripted", runs_dir=tmp_path / "runs", store_url=f"sqlite:///{tmp_path / 's.db'}",
                      agent_options={"script": tmp_path.name})  # fmt: skip
    return result.record, {c.id: c.access for c in result.record.criteria}


REPORT = "# CC-1\n\nCC-1 is approved; the pull window is three days.\n"


def test_own_workspace_reads_and_rereads_after_changes_decide(tmp_path: Path) -> None:
    record, labels = _run(tmp_path, [
        ("write_file", {"path": "report.md", "content": REPORT}),
        ("read_file", {"path": "workspace/report.md"}),        # own workspace: not company evidence
        ("update_record", {"id": "CC-1", "action": "comment", "text": "Status reported."}),
        ("get_record", {"id": "CC-1"}),                          # re-read after the permitted comment
        ("search_files", {"query": "pull window", "mode": "literal"}),  # hits the workspace and the protocol
        ("read_message", {"id": "CH1"}),
        ("send_message", {"to": ["P3"], "subject": "CC-1 report", "body": "It is in report.md."}),
        ("read_message", {"id": "SENT-0001"}),                   # own sent mail: not evidence either
    ])  # fmt: skip
    assert "unknown" not in labels.values()
    assert record.stats.inspections == 2  # get_record and read_message; the workspace read is not one
    assert labels["C2"] == labels["C4"] == labels["C10"] == "accessed"  # from the re-read record
    assert labels["C8"] == "not_accessed"  # M2 was never read


def test_ranked_search_snippets_match_anchors_as_plain_text(tmp_path: Path) -> None:
    _record, labels = _run(tmp_path, [("search_files", {"query": "within three days", "mode": "ranked"})])
    assert labels["C3"] == "accessed"  # anchor `within three days` vs snippet `within **three** **days**`
    assert plain("pulled **within** **three** days of …") == "pulled within three days of"


def test_an_undecidable_call_makes_unknown_only_what_it_could_decide(tmp_path: Path, overlay) -> None:
    record, labels = _run(tmp_path, [
        ("read_file", {"path": "Shared/Protocols/window protocol.md"}),
        ("get_record", {"id": "CC-1"}),
    ])  # fmt: skip
    assert labels["C3"] == labels["C11"] == labels["C2"] == "accessed"
    events = [dict(e) for e in record.trajectory]
    events[0] = {**events[0], "result_digest": "0" * 64}  # the protocol read no longer reproduces
    run_dir = tmp_path / "runs" / record.run_id
    candidate = run_dir / "package" / "candidate"
    config = ToolConfig.model_validate_json((candidate / "tool-config.json").read_bytes())
    view = SeatView(candidate / "projection", config)
    report = evidence_access(overlay, view, events, candidate=candidate)
    assert report.undecidable_calls == 1
    # C3 also has a record-only set (CC-1 window_days), so it stays accessed; C11 needs the file.
    assert report.labels["C3"] == "accessed" and report.labels["C11"] == "unknown"
    # Criteria whose evidence that read could not have supplied keep their decided labels.
    assert report.labels["C2"] == "accessed" and report.labels["C8"] == "not_accessed" and report.labels["S1"] == "not_accessed"


def test_the_runners_log_records_server_agent_condition_and_the_frozen_check(tmp_path: Path) -> None:
    from worldkit.store import Store, get_run

    record, _ = _run(tmp_path, [("list_files", {})])
    with Store.open(f"sqlite:///{tmp_path / 's.db'}", create=False) as store:
        meta = get_run(store, record.run_id).meta
    assert meta is not None
    assert (meta["server"], meta["agent"], meta["condition"]) == ("worldkit.run", record.agent, "full")
    assert meta["trusted_staged"] is False and meta["frozen_check"]["status"] in {"pass", "skip"}


def test_a_call_logged_without_a_result_digest_is_never_access(tmp_path: Path, overlay) -> None:
    """A call logged `ok` but with no result digest (no answer is known to have reached the agent, as
    for a tools/call whose JSON-RPC id was null) grants no access, however well its arguments match."""
    record, labels = _run(tmp_path, [("read_file", {"path": "Shared/Protocols/window protocol.md"}),
                                     ("get_record", {"id": "CC-1"})])  # fmt: skip
    assert labels["C2"] == labels["C11"] == "accessed"
    events = [{**dict(e), "result_digest": None} for e in record.trajectory]
    candidate = tmp_path / "runs" / record.run_id / "package" / "candidate"
    config = ToolConfig.model_validate_json((candidate / "tool-config.json").read_bytes())
    report = evidence_access(overlay, SeatView(candidate / "projection", config), events, candidate=candidate)
    assert set(report.labels.values()) == {"not_accessed"}
    assert report.tool_calls_before_first_access is None

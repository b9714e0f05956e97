"""The searcher agent: seeded, budgeted, and never stating content whose evidence it did not read.

Tests that run it on PharmaCo are slow (a fresh cache materializes the world first)."""

from __future__ import annotations

from pathlib import Path

import pytest

from worldkit.agents.registry import make_agent
from worldkit.agents.searcher import query_terms
from worldkit.errors import UsageError
from worldkit.overlay import load_overlay, resolve_overlay
from worldkit.overlay.toolconfig import ToolConfig
from worldkit.run.answer_key import EvidenceGatedKey, KeyRefused
from worldkit.run.runner import run_task

ROOT = Path(__file__).resolve().parents[3]
SWEEP = ROOT / "overlays" / "pharmaco_demo" / "qualification-sweep"


def _run(tmp: Path, spec: str, *, seed: int = 0, condition: str = "full", run_id: str = "searcher-test") -> dict:
    result = run_task(SWEEP, spec, condition=condition, runs_dir=tmp / "runs", store_url=f"sqlite:///{tmp / 'store.db'}",
                      agent_options={"seed": seed}, run_id=run_id)  # fmt: skip
    return result.record.model_dump(mode="json") | {"run_dir": result.run_dir}


def _calls(record: dict) -> list[tuple[str, dict]]:
    return [(e["tool"], e["arguments"]) for e in record["trajectory"]]


def _stated(record: dict) -> set[str]:
    line = next(n for n in record["agent_result"]["notes"] if n.startswith("stated: "))
    return {c for c in line.removeprefix("stated: ").split(",") if c}


def test_queries_come_from_the_request() -> None:
    terms = query_terms("Check SC-03 and HPLC-07 before the ZV-23007 36-month pull on 2026-03-02; write a sweep.")
    assert terms[:4] == ["SC-03", "HPLC-07", "ZV-23007", "2026-03-02"]
    assert "pull" not in terms and "before" not in terms  # short words and stop words are not queries
    assert {"check", "month", "sweep"} <= set(terms)


def test_options_are_checked() -> None:
    with pytest.raises(UsageError, match="skill is a probability"):
        make_agent("searcher", {"skill": 1.5})
    with pytest.raises(UsageError, match="budget must be at least 1"):
        make_agent("searcher:0")
    assert make_agent("searcher:12", {"seed": 3}).describe()["id"] == "searcher:12"


@pytest.mark.slow
def test_same_seed_same_run_and_another_seed_another(tmp_path: Path) -> None:
    first = _run(tmp_path / "a", "searcher:12", seed=5)
    again = _run(tmp_path / "b", "searcher:12", seed=5)
    assert _calls(first) == _calls(again)
    assert [(c["id"], c["result"], c["access"]) for c in first["criteria"]] == [
        (c["id"], c["result"], c["access"]) for c in again["criteria"]
    ]
    other = _run(tmp_path / "c", "searcher:12", seed=6)
    assert _calls(other) != _calls(first)


@pytest.mark.slow
def test_budget_bounds_the_looking(tmp_path: Path) -> None:
    record = _run(tmp_path, "searcher:6")
    looking = [tool for tool, _ in _calls(record) if tool not in ("write_file", "send_message")]
    assert len(looking) == 6


@pytest.mark.slow
def test_states_only_what_its_logged_reads_cover(tmp_path: Path) -> None:
    """Checked against the run's event log: every criterion the searcher stated is labelled
    accessed by grading (which replays the log), and the key, replaying the same log, releases
    exactly the accessed criteria."""
    seen_stated: set[str] = set()
    for condition, budget in (("full", 8), ("curated:curator-1", 8), ("curated:curator-2", 30)):
        record = _run(tmp_path / condition.replace(":", "-"), f"searcher:{budget}", condition=condition)
        accessed = {c["id"] for c in record["criteria"] if c["access"] == "accessed"}
        assert _stated(record) <= accessed
        seen_stated |= _stated(record)
        overlay = load_overlay(resolve_overlay(SWEEP))
        candidate = record["run_dir"] / "package" / "candidate"
        config = ToolConfig.model_validate_json((candidate / "tool-config.json").read_bytes())
        key = EvidenceGatedKey(overlay, candidate, config, lambda r=record: r["trajectory"])
        assert key.released() == accessed
    assert seen_stated  # some runs did read enough to state something


@pytest.mark.slow
def test_the_key_refuses_content_whose_evidence_was_not_read(tmp_path: Path) -> None:
    record = _run(tmp_path, "noop")
    overlay = load_overlay(resolve_overlay(SWEEP))
    candidate = record["run_dir"] / "package" / "candidate"
    config = ToolConfig.model_validate_json((candidate / "tool-config.json").read_bytes())
    key = EvidenceGatedKey(overlay, candidate, config, lambda: [])
    assert key.released() == frozenset()
    with pytest.raises(KeyRefused, match="QS1"):
        key.deliverable(["QS1"], seed=0)
    written = dict(key.deliverable([], seed=0))
    assert written["write_file"]["path"] in {"qualification-sweep.csv", "qualification-sweep.md"}


def test_the_searcher_needs_the_runners_key() -> None:
    import anyio

    from worldkit.agents.registry import AgentTask

    agent = make_agent("searcher")

    class NoTools:
        async def list_tools(self) -> list:
            return []

        async def call(self, name: str, arguments: dict) -> None:
            raise AssertionError("no call expected")

    with pytest.raises(UsageError, match="answer key"):
        anyio.run(agent.run, AgentTask(request="r", seat="s"), NoTools())

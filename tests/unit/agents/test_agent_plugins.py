"""Agents are a plug-in point: a package declaring a `worldkit.agents` entry point is found by name."""

from __future__ import annotations

import importlib
import sys
import tomllib
from pathlib import Path

import pytest

from tests.fixtures.overlays.paths import TRIAGE
from worldkit._cli.main import run
from worldkit.agents import registry as agents
from worldkit.errors import UsageError
from worldkit.record.execution import read_record

REPO = Path(__file__).resolve().parents[3]

PLUGIN = '''
from worldkit.agents.registry import AgentResult, register_agent


class Filler:
    """Writes the triage note with the SOP id and its own greeting, through the seat's tools."""

    def __init__(self, greeting):
        self.name = "filler"
        self.greeting = greeting

    async def run(self, task, tools):
        text = f"# Triage\\n\\nSOP checked: SOP-001 ({self.greeting})\\nNeeds revision (yes/no): yes\\n"
        outcome = await tools.call("write_file", {"path": "triage.md", "content": text})
        return AgentResult(final_message=outcome.text, steps=1)


@register_agent("filler", arg="greeting")
def make(options):
    return Filler(options.get("greeting", "hello"))
'''


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A tiny installed distribution: a module and a dist-info declaring the entry point."""
    (tmp_path / "filler_agent.py").write_text(PLUGIN)
    info = tmp_path / "filler_agent-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: filler-agent\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[worldkit.agents]\nfiller = filler_agent:make\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    yield tmp_path
    agents._AGENTS.pop("filler", None)
    sys.modules.pop("filler_agent", None)


def test_unknown_until_installed(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="unknown agent 'filler'; available agents: baseline:fixed"):
        agents.make_agent("filler")


def test_plugin_agent_runs_a_task_through_the_cli(plugin: Path, tmp_path: Path, capsys) -> None:
    assert "filler[:GREETING]" in agents.agent_names()
    assert agents.make_agent("filler:hi").greeting == "hi"
    out = tmp_path / "runs"
    code = run(["run", "--overlay", str(TRIAGE), "--agent", "filler:bonjour", "--out", str(out),
                "--store", f"sqlite:///{tmp_path / 's.db'}", "--json"])
    assert code == 0, capsys.readouterr().err
    [record_path] = out.glob("*/execution-record.json")
    record = read_record(record_path)
    assert record.agent == "filler"  # the agent's own id (its `name`), as for any agent
    assert {c.id: c.result for c in record.criteria} == {"T1": "pass", "T2": "pass", "T3": "ungraded"}
    assert "bonjour" in (record_path.parent / "workspace" / "triage.md").read_text()


def test_spec_argument_and_options_must_agree(plugin: Path) -> None:
    with pytest.raises(UsageError, match="says greeting 'a' but the options say 'b'"):
        agents.make_agent("filler:a", {"greeting": "b"})
    with pytest.raises(UsageError, match="agent 'noop' takes no argument"):
        agents.make_agent("noop:x")


def test_two_packages_declaring_one_name_are_refused(plugin: Path, tmp_path: Path, monkeypatch) -> None:
    other = tmp_path / "other"
    info = other / "other_agent-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: other-agent\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[worldkit.agents]\nfiller = other_agent:make\n")
    monkeypatch.syspath_prepend(str(other))
    importlib.invalidate_caches()
    with pytest.raises(UsageError, match="declared by several packages"):
        agents.make_agent("filler")


def test_builtin_agents_are_the_entry_points_pyproject_declares() -> None:
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["entry-points"]["worldkit.agents"]
    assert declared == agents.BUILTIN_AGENTS
    for name in declared:
        assert name in {n.split("[")[0] for n in agents.agent_names()}
    assert agents.make_agent("oracle").name == "oracle"
    assert agents.make_agent("baseline:random:3", {"task": "t"}).name == "baseline:random:3"
    assert agents.make_agent("openai:m", {"base_url": "http://127.0.0.1:9"}).endpoint.model == "m"
    with pytest.raises(UsageError, match="organizes InfoOrgBench packets"):
        agents.make_agent("baseline:flat")

"""Agents behind one Protocol, and the registry that names them.

An agent gets the task (request text) and a `ToolSession`; whatever it leaves behind is captured
from the servers' state afterwards, never from its last message. `oracle` is the pipeline's
end-to-end check: it replays the overlay's verifier-side reference actions through the same tools
an agent would use.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from worldkit.errors import UsageError
from worldkit.run.session import ToolSession


@dataclass(frozen=True)
class AgentTask:
    """What an agent is given: the request, and (oracle only) the reference actions."""

    request: str
    seat: str
    reference_actions: tuple[dict[str, Any], ...] = ()


@dataclass
class AgentResult:
    final_message: str = ""
    steps: int = 0
    tokens: int = 0
    stopped_by: str = "done"
    notes: list[str] = field(default_factory=list)


class Agent(Protocol):
    name: str

    async def run(self, task: AgentTask, tools: ToolSession) -> AgentResult: ...


AgentFactory = Callable[[dict[str, Any]], Agent]
_AGENTS: dict[str, AgentFactory] = {}


def register_agent(name: str) -> Callable[[AgentFactory], AgentFactory]:
    def decorate(factory: AgentFactory) -> AgentFactory:
        _AGENTS[name] = factory
        return factory

    return decorate


_BUILTIN_MODULES = ("worldkit.run.openai_agent",)


def _load_builtins() -> None:
    import importlib

    for module in _BUILTIN_MODULES:
        importlib.import_module(module)


def make_agent(name: str, options: dict[str, Any] | None = None) -> Agent:
    _load_builtins()
    if name not in _AGENTS:
        raise UsageError(f"unknown agent {name!r}; available agents: {', '.join(sorted(_AGENTS))}")
    return _AGENTS[name](options or {})


def agent_names() -> list[str]:
    _load_builtins()
    return sorted(_AGENTS)


class NoopAgent:
    """Does nothing: the rubric sanity baseline (it must pass no criterion unless marked)."""

    name = "noop"

    async def run(self, task: AgentTask, tools: ToolSession) -> AgentResult:
        return AgentResult(final_message="", steps=0)


class OracleAgent:
    """Performs the overlay's reference actions, in order, through the tools."""

    name = "oracle"

    async def run(self, task: AgentTask, tools: ToolSession) -> AgentResult:
        result = AgentResult()
        for action in task.reference_actions:
            outcome = await tools.call(action["tool"], dict(action.get("args", {})))
            result.steps += 1
            if outcome.is_error:
                result.notes.append(f"step {result.steps} {action['tool']}: {outcome.text}")
        result.final_message = "reference actions performed"
        return result


register_agent("noop")(lambda options: NoopAgent())
register_agent("oracle")(lambda options: OracleAgent())

"""Agents behind one Protocol, and the registry that names them.

An agent gets the task (request text) and a `ToolSession`; whatever it leaves behind is captured
from the servers' state afterwards, never from its last message. `oracle` is the pipeline's
end-to-end check: it replays the overlay's verifier-side reference actions through the same tools
an agent would use.

Agents are a plug-in point: a factory registered with `@register_agent(name)` — in worldkit, or
in any installed package that declares it under the `worldkit.agents` entry-point group
(`name = "package.module:factory"`) — is found by name, without editing worldkit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from worldkit.agents.session import ToolSession
from worldkit.errors import UsageError


@dataclass(frozen=True)
class AgentTask:
    """What an agent is given: the request, and (oracle only) the reference actions; (searcher
    only) the runner's answer key gated by evidence (`worldkit.run.answer_key`)."""

    request: str
    seat: str
    reference_actions: tuple[dict[str, Any], ...] = ()
    answer_key: Any = None
    """Runner-side object releasing reference content only for criteria whose evidence the run's
    logged calls cover; given only to agents that declare `uses_answer_key = True`."""
    run_id: str = ""
    """The run's id (a seeded agent mixes it into its seed, so a campaign's repeats differ)."""


@dataclass
class AgentResult:
    """What an agent reports about its episode (the workspace is captured separately).

    `tokens_in`/`tokens_out` are the endpoint's reported prompt and completion tokens summed over
    the episode; `transcript` is the full conversation as sent and received (one JSON-ready dict
    per entry), which a run writes to its folder.
    """

    final_message: str = ""
    steps: int = 0
    tokens: int = 0
    stopped_by: str = "done"
    notes: list[str] = field(default_factory=list)
    tokens_in: int = 0
    tokens_out: int = 0
    transcript: list[dict[str, Any]] = field(default_factory=list)


class Agent(Protocol):
    name: str

    async def run(self, task: AgentTask, tools: ToolSession) -> AgentResult: ...


AgentFactory = Callable[[dict[str, Any]], Agent]
"""Builds an agent from its options (the spec's argument, if any, is one of them)."""

ENTRY_POINT_GROUP = "worldkit.agents"
"""Entry-point group through which installed packages contribute agents (name = agent name)."""

BUILTIN_AGENTS: dict[str, str] = {
    "noop": "worldkit.agents.registry:make_noop",
    "oracle": "worldkit.agents.registry:make_oracle",
    "openai": "worldkit.agents.openai_agent:make_openai",
    "baseline:flat": "worldkit.agents.infoorg:make_flat",
    "baseline:fixed": "worldkit.agents.infoorg:make_fixed",
    "baseline:silhouette": "worldkit.agents.infoorg:make_silhouette",
    "baseline:random": "worldkit.agents.infoorg:make_random",
    "deepagents": "worldkit.agents.harness.deepagents:make_deepagents",
    "codex": "worldkit.agents.harness.codex:make_codex",
    "pi": "worldkit.agents.harness.pi:make_pi",
    "searcher": "worldkit.agents.searcher:make_searcher",
}
"""worldkit's own agents: the same table pyproject.toml declares under
`[project.entry-points."worldkit.agents"]` (a test keeps the two equal), so they are found the
same way as a plug-in's, also when worldkit runs from a source tree that is not installed."""


@dataclass(frozen=True)
class _Registered:
    factory: AgentFactory
    arg: str | None


_AGENTS: dict[str, _Registered] = {}


def register_agent(name: str, *, arg: str | None = None) -> Callable[[AgentFactory], AgentFactory]:
    """Register `factory` as agent `name`; with `arg`, the spec `name:VALUE` passes VALUE as
    option `arg` (e.g. `openai:gpt-x` → model="gpt-x")."""

    def decorate(factory: AgentFactory) -> AgentFactory:
        factory.agent_name = name  # type: ignore[attr-defined]
        factory.spec_arg = arg  # type: ignore[attr-defined]
        _AGENTS[name] = _Registered(factory, arg)
        return factory

    return decorate


def _declared() -> dict[str, list[str]]:
    """Agent name → the `module:attr` values that declare it (built-ins, then entry points)."""
    from importlib.metadata import entry_points

    declared: dict[str, list[str]] = {name: [value] for name, value in BUILTIN_AGENTS.items()}
    for point in entry_points(group=ENTRY_POINT_GROUP):
        values = declared.setdefault(point.name, [])
        if point.value not in values:
            values.append(point.value)
    return declared


def _load(name: str, values: list[str]) -> _Registered:
    from importlib.metadata import EntryPoint

    if name in _AGENTS:
        return _AGENTS[name]
    if len(values) > 1:
        raise UsageError(
            f"agent {name!r} is declared by several packages ({', '.join(values)}); uninstall one of "
            f"them or rename its `{ENTRY_POINT_GROUP}` entry point"
        )
    try:
        factory = EntryPoint(name, values[0], ENTRY_POINT_GROUP).load()
    except (ImportError, AttributeError) as error:
        raise UsageError(f"agent {name!r} cannot be loaded from {values[0]} ({error}); reinstall the package that declares it") from None
    if not callable(factory):
        raise UsageError(f"agent {name!r}: {values[0]} is not a factory (a callable taking options)")
    entry = _Registered(factory, getattr(factory, "spec_arg", None))
    _AGENTS.setdefault(name, entry)
    return _AGENTS[name]


def resolve_spec(spec: str) -> tuple[str, str | None]:
    """Split an agent spec into a known agent name and its argument (`openai:gpt-x` → openai, gpt-x)."""
    known = set(_declared()) | set(_AGENTS)
    if spec in known:
        return spec, None
    for name in sorted(known, key=len, reverse=True):
        if spec.startswith(name + ":") and len(spec) > len(name) + 1:
            return name, spec[len(name) + 1 :]
    raise UsageError(f"unknown agent {spec!r}; available agents: {', '.join(agent_names())}")


def check_spec(spec: str) -> None:
    """Refuse a spec that names no registered agent, or passes an argument it does not take."""
    name, argument = resolve_spec(spec)
    entry = _AGENTS.get(name) or _load(name, _declared()[name])
    if argument is not None and entry.arg is None:
        raise UsageError(f"agent {name!r} takes no argument (got {spec!r}); use `{name}`")


def make_agent(spec: str, options: dict[str, Any] | None = None) -> Agent:
    """The agent named by `spec` (a registered name, or `name:ARG`), built with `options`."""
    name, argument = resolve_spec(spec)
    entry = _AGENTS.get(name) or _load(name, _declared()[name])
    options = {k: v for k, v in (options or {}).items() if v is not None}
    if argument is not None:
        if entry.arg is None:
            raise UsageError(f"agent {name!r} takes no argument (got {spec!r}); use `{name}`")
        given = options.get(entry.arg)
        if given is not None and str(given) != argument:
            raise UsageError(f"agent {spec!r} says {entry.arg} {argument!r} but the options say {given!r}; give it once")
        options[entry.arg] = argument
    return entry.factory(options)


def agent_names() -> list[str]:
    """Every agent that can be named, as `name` or `name[:ARG]`."""
    names = set(_declared()) | set(_AGENTS)
    shown = []
    for name in sorted(names):
        entry = _AGENTS.get(name)
        arg = entry.arg if entry else None
        if entry is None:
            try:
                arg = _load(name, _declared()[name]).arg
            except UsageError:  # a broken or ambiguous plug-in is still listed; naming it explains
                arg = None
        shown.append(f"{name}[:{arg.upper()}]" if arg else name)
    return shown


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


@register_agent("noop")
def make_noop(options: dict[str, Any]) -> NoopAgent:
    return NoopAgent()


@register_agent("oracle")
def make_oracle(options: dict[str, Any]) -> OracleAgent:
    return OracleAgent()

"""Judges for semantic criteria: a Protocol, what a judge is shown, and the registry that names them.

A judge is a separate, frozen instrument. It is shown a `JudgeItem` — the criterion, its guidance,
the verifier truth, every deliverable file as it stands in the workspace, and the mail and record
changes the run made — and nothing that names the run, the agent, the condition or the packet
(blinding). It answers a `Verdict`: `pass`, `fail`, or `grader_error` when it could not decide
(an endpoint that kept failing, a reply that could not be read); never a guess. Its `describe()`
is frozen into the execution record (kind, model, endpoint, prompt digest, temperature, retries).
Without a judge a semantic criterion is `ungraded`.

Judges register with `@register_judge("name")`; `make_judge(name, options)` builds one.
Deliverable files are read only inside the workspace (no absolute paths, no `..`, no symlinks).
"""

from __future__ import annotations

import fnmatch
import importlib
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import Field

from worldkit._model import Model
from worldkit.canon import sha256_json
from worldkit.errors import CheckFailed, PathRefused, UsageError
from worldkit.overlay.context import CheckResult, GradingContext
from worldkit.overlay.models import Criterion, Overlay
from worldkit.overlay.toolconfig import WriteFiles

__all__ = [
    "MAX_FILE_CHARS",
    "Judge",
    "JudgeFailed",
    "JudgeItem",
    "Verdict",
    "deliverable_paths",
    "judge_item",
    "judge_names",
    "make_judge",
    "read_deliverables",
    "register_judge",
]

MAX_FILE_CHARS = 60_000


class JudgeItem(Model):
    """Everything a judge sees about one criterion of one run — and nothing naming the run."""


    criterion_id: str
    """The rubric criterion's id (e.g. `QS5`)."""
    criterion: str
    """What the work must achieve."""
    guidance: str = ""
    """Source-grounded notes for the judge."""
    facts: list[str] = Field(default_factory=list)
    """Verifier truth: facts that must remain stable."""
    unsafe_claims: list[str] = Field(default_factory=list)
    """Verifier truth: unsupported claims that would be unsafe to make."""
    request: str = ""
    """The assignment the deliverable answers."""
    files: dict[str, str | None] = Field(default_factory=dict)
    """Deliverable path → its text (cut to `MAX_FILE_CHARS`), None when it was not produced."""
    sent: list[dict[str, Any]] = Field(default_factory=list)
    """Mail the seat sent: `{to, subject, body}`."""
    record_changes: list[dict[str, Any]] = Field(default_factory=list)
    """Record changes the seat made: `{record, kind, text}`."""

    def digest(self) -> str:
        """An opaque, content-only id for the item (batches are keyed by it)."""
        return sha256_json(self.model_dump(mode="json"))


class Verdict(Model):
    """A judge's answer on one item."""


    result: Literal["pass", "fail", "grader_error", "ungraded"]
    """`pass` / `fail`; `grader_error` when the judge could not decide (its endpoint kept failing,
    its reply was unreadable); `ungraded` when it does not grade this criterion (e.g. the `facts`
    judge on a criterion the truth declares no facts for). Never a guess."""
    reason: str = ""
    """One line of reason (or what went wrong)."""
    attempts: int = Field(default=1, ge=0)
    """Requests it took."""
    endpoint_failed: bool = False
    """The `grader_error` came from the judge's endpoint (unreachable, or it kept answering with an
    error) rather than from the judge itself; a calibration stops on it (exit 5)."""


@runtime_checkable
class Judge(Protocol):
    """A judge: frozen configuration, and a verdict per item."""

    def describe(self) -> dict[str, Any]:
        """The full frozen configuration (kind, id, model, prompt digest, …), never secrets."""
        ...

    def judge(self, item: JudgeItem) -> Verdict: ...


class JudgeFailed(CheckFailed):
    """The judge could not decide some criteria (endpoint down, failing, unreadable replies): they
    are recorded `grader_error` and the command exits 1 with one line naming the endpoint and them."""


JudgeFactory = Callable[[dict[str, Any]], Judge]
_JUDGES: dict[str, JudgeFactory] = {}
_BUILTIN_MODULES = ("worldkit.grade.llm_judge",)


def register_judge(name: str) -> Callable[[JudgeFactory], JudgeFactory]:
    """Register a judge factory under `name` (used as `--judge name`)."""

    def decorate(factory: JudgeFactory) -> JudgeFactory:
        _JUDGES[name] = factory
        return factory

    return decorate


ENTRY_POINT_GROUP = "worldkit.judges"
"""A package adds a judge with an entry point in this group naming its factory (options → Judge)."""


def _load_builtins() -> None:
    for module in _BUILTIN_MODULES:
        importlib.import_module(module)
    from importlib.metadata import entry_points

    for point in entry_points(group=ENTRY_POINT_GROUP):
        if point.name in _JUDGES:
            continue
        try:
            _JUDGES[point.name] = point.load()
        except Exception as error:  # noqa: BLE001 - a broken plug-in is named, not a traceback
            raise UsageError(
                f"judge plug-in {point.name!r} ({point.value}) cannot be loaded ({type(error).__name__}: {error}); "
                "fix or uninstall the package that declares it"
            ) from None


@register_judge("facts")
def _facts_judge(options: dict[str, Any]) -> Any:
    """Offline and deterministic: the verifier truth's declared facts (`worldkit.overlay.facts`)."""
    from worldkit.overlay.facts import FactsJudge

    return FactsJudge(options)


def judge_names() -> list[str]:
    _load_builtins()
    return sorted(_JUDGES)


class _LegacyJudge:
    """Adapts a judge written as `grade(overlay, criterion, ctx) -> CheckResult | None`."""

    def __init__(self, inner: Any, name: str) -> None:
        self.inner = inner
        self.name = name

    def describe(self) -> dict[str, Any]:
        described = getattr(self.inner, "describe", None)
        return dict(described()) if callable(described) else {"kind": self.name, "id": self.name}

    def judge(self, item: JudgeItem) -> Verdict:  # pragma: no cover - only through grade_criterion
        raise UsageError(f"judge {self.name!r} grades from the run's state, not from a judge item")


def make_judge(name: str | None, options: dict[str, Any] | None = None) -> Judge | None:
    """The judge registered as `name` (None for `none`/empty); unknown names list the choices."""
    if name in (None, "", "none"):
        return None
    _load_builtins()
    if name not in _JUDGES:
        raise UsageError(f"unknown judge {name!r}; use one of: {', '.join(['none', *sorted(_JUDGES)])}")
    judge = _JUDGES[name](dict(options or {}))
    if not hasattr(judge, "judge") and hasattr(judge, "grade"):
        return _LegacyJudge(judge, name)
    return judge


def judge_id(judge: Judge | None) -> str:
    """How a verdict's grader is labelled in records and reports (`openai:MODEL`, `facts`, …)."""
    if judge is None:
        return ""
    described = judge.describe()
    return str(described.get("id") or described.get("kind") or type(judge).__name__)


def grade_criterion(judge: Judge, overlay: Overlay, criterion: Criterion, ctx: GradingContext, request: str) -> Verdict:
    """One semantic criterion through a judge (legacy judges read the context themselves)."""
    if isinstance(judge, _LegacyJudge):
        found: CheckResult | Any = judge.inner.grade(overlay, criterion, ctx)
        if found is None:
            return Verdict(result="ungraded", reason=f"judge {judge.name} does not grade this criterion", attempts=0)
        # A judge that can say it cannot decide answers a `result` (`pass`/`fail`/`ungraded`).
        result = getattr(found, "result", None) or ("pass" if found.passed else "fail")
        return Verdict(result=result, reason=found.detail, attempts=1)
    return judge.judge(judge_item(overlay, criterion, ctx, request))


# --- what the judge is shown -------------------------------------------------------------------


def deliverable_paths(overlay: Overlay, present: Iterable[str] = ()) -> list[str]:
    """Every workspace file the task's deliverable consists of: the deliverable's `path`, every
    file the request lets the seat write by name, and every present file a permitted glob covers."""
    literal: set[str] = set()
    globs: list[str] = []
    for change in overlay.permitted:
        if isinstance(change, WriteFiles):
            for pattern in change.paths:
                if any(ch in pattern for ch in "*?["):
                    globs.append(pattern)
                else:
                    literal.add(pattern)
    if overlay.deliverable.path:
        literal.add(overlay.deliverable.path)
    matched = {p for p in present if any(fnmatch.fnmatchcase(p, g) for g in globs)}
    return sorted(literal | matched)


def read_deliverables(workspace: Path, paths: Iterable[str], limit: int = MAX_FILE_CHARS) -> dict[str, str | None]:
    """path → text of each deliverable inside `workspace` (None if absent); a path that would
    leave the workspace (absolute, `..`, a symlink) is never opened."""
    from worldkit.mcp.confine import open_confined

    out: dict[str, str | None] = {}
    for path in paths:
        try:
            data = open_confined(Path(workspace), path)
        except (OSError, PathRefused):
            out[path] = None
            continue
        out[path] = data.decode("utf-8", errors="replace")[:limit]
    return out


def _record_changes(ctx: GradingContext) -> list[dict[str, Any]]:
    from worldkit.overlay.changes import BaselineRecords

    baseline = BaselineRecords(ctx.projection)  # read only
    changes = []
    for record_id, record in sorted(ctx.records.items()):
        before = len((baseline.get(record_id) or {}).get("history") or [])
        for entry in (record.get("history") or [])[before:]:
            text = entry.get("status") if entry.get("kind") == "status" else entry.get("note", "")
            changes.append({"record": record_id, "kind": entry.get("kind"), "text": text})
    return changes


def judge_item(overlay: Overlay, criterion: Criterion, ctx: GradingContext, request: str = "") -> JudgeItem:
    """The blinded item for one criterion: criterion, guidance, truth, deliverables, sent mail."""
    present = _present_files(ctx.workspace)
    return JudgeItem(
        criterion_id=criterion.id,
        criterion=criterion.text,
        guidance=criterion.guidance,
        facts=list(overlay.truth.facts),
        unsafe_claims=list(overlay.truth.unsafe_claims),
        request=request,
        files=read_deliverables(ctx.workspace, deliverable_paths(overlay, present)),
        sent=[{k: m.get(k) for k in ("to", "subject", "body")} for m in ctx.sent],
        record_changes=_record_changes(ctx),
    )


def _present_files(workspace: Path) -> list[str]:
    from worldkit.mcp.state import scan_workspace

    root = Path(workspace)
    return sorted(p for p, d in scan_workspace(root).items() if d != "symlink") if root.is_dir() else []

"""Judges for semantic criteria, behind one Protocol. Without a judge a semantic criterion is
`ungraded` — never guessed."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from worldkit.errors import UsageError
from worldkit.overlay.context import CheckResult, GradingContext
from worldkit.overlay.models import Criterion, Overlay
from worldkit.run.openai_agent import Endpoint

MAX_DELIVERABLE_CHARS = 60_000


class Judge(Protocol):
    def grade(self, overlay: Overlay, criterion: Criterion, ctx: GradingContext) -> CheckResult | None: ...


def _deliverable_text(overlay: Overlay, ctx: GradingContext) -> str:
    path = overlay.deliverable.path
    if not path:
        return ""
    target = Path(ctx.workspace) / path
    return target.read_text(encoding="utf-8", errors="replace")[:MAX_DELIVERABLE_CHARS] if target.is_file() else ""


class OpenAIJudge:
    """Asks an OpenAI-compatible endpoint for PASS/FAIL with a one-line reason."""

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint

    def grade(self, overlay: Overlay, criterion: Criterion, ctx: GradingContext) -> CheckResult | None:
        deliverable = _deliverable_text(overlay, ctx)
        prompt = (
            f"Criterion: {criterion.text}\nGuidance: {criterion.guidance}\n"
            f"Reference facts: {'; '.join(overlay.truth.facts)}\n\nDeliverable:\n{deliverable or '(none)'}\n\n"
            "Answer with PASS or FAIL on the first line, then one line of reason."
        )
        reply = self.endpoint.complete(
            {"model": self.endpoint.model, "messages": [{"role": "user", "content": prompt}], "temperature": 0}
        )
        text = (reply["choices"][0]["message"].get("content") or "").strip()
        verdict, _, reason = text.partition("\n")
        verdict = verdict.strip().upper()
        if verdict not in ("PASS", "FAIL"):
            return None
        return CheckResult(passed=verdict == "PASS", detail=reason.strip()[:300] or verdict)


def make_judge(name: str | None, options: dict[str, Any] | None = None) -> Judge | None:
    if name in (None, "", "none"):
        return None
    if name == "openai":
        return OpenAIJudge(Endpoint.from_options(options or {}))
    if name == "facts":  # offline, deterministic: the verifier truth's facts (worldkit.overlay.facts)
        from worldkit.overlay.facts import FactsJudge

        return FactsJudge(options)
    raise UsageError(f"unknown judge {name!r}; use `openai`, `facts` or `none`")

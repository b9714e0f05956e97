"""The offline `facts` judge: grades a semantic criterion from the verifier truth section.

Pure: criterion + truth + deliverable texts → verdict. A criterion passes when the deliverable
exists, every required fact of `truth.criteria[<id>]` is stated in some deliverable text (any
one of the fact's alternative claims, matched by `worldkit.overlay.claims` rules) and no unsafe
claim is. A criterion without declared facts is not graded (None), never guessed. Verdicts
carry `grader="facts"` and a detail starting `facts:`, so they are never mistaken for an LLM
judge's.

The deliverable texts are every workspace file the task lets the seat write by exact path (the
deliverable file and its companions, e.g. a memo beside a CSV) and the body of every mail sent.
"""

from __future__ import annotations

from typing import Any

from worldkit.overlay._paths import confined
from worldkit.overlay.claims import Claim, discount_request
from worldkit.overlay.documents import DocumentError, read_document
from worldkit.overlay.context import CheckResult, GradingContext
from worldkit.overlay.grading import deliverable_missing
from worldkit.overlay.models import Criterion, CriterionFacts, Fact, Overlay

GRADER = "facts"


def deliverable_paths(overlay: Overlay) -> list[str]:
    """The deliverable file first, then every exact (non-glob) path a write_file change permits."""
    paths = [overlay.deliverable.path] if overlay.deliverable.path else []
    for change in overlay.permitted:
        for path in getattr(change, "paths", []) or []:
            if not any(ch in path for ch in "*?[") and path not in paths:
                paths.append(path)
    return paths


def deliverable_texts(overlay: Overlay, ctx: GradingContext) -> dict[str, str]:
    """Label → text: `workspace/<path>` for each deliverable file present (read as
    `documents.read_document` reads it), `mail <n>` for sent mail; sentences copying the
    request are dropped (`claims.discount_request`)."""
    texts: dict[str, str] = {}
    for path in deliverable_paths(overlay):
        file = confined(ctx.workspace, path)
        if file.is_file():
            try:
                text = read_document(file).text
            except DocumentError:
                continue
            texts[f"workspace/{path}"] = discount_request(text, ctx.request)
    for index, message in enumerate(ctx.sent, 1):
        texts[f"mail {index}"] = discount_request(f"{message.get('subject', '')}\n{message.get('body', '')}", ctx.request)
    return texts


def _stated(fact: Fact, texts: dict[str, str]) -> str | None:
    """Where the fact is stated (`label: window`), or None."""
    for claim in fact.any:
        for label, text in texts.items():
            window = Claim.match(claim, text)
            if window is not None:
                return f"{label}: {window.strip()[:80]!r}"
    return None


def judge_facts(facts: CriterionFacts, texts: dict[str, str]) -> CheckResult:
    """The verdict on one criterion's facts over the deliverable texts."""
    missing = [f.says for f in facts.required if _stated(f, texts) is None]
    unsafe = [f"{f.says} ({where})" for f in facts.unsafe if (where := _stated(f, texts)) is not None]
    if missing or unsafe:
        parts = [f"does not state: {'; '.join(missing)}"] if missing else []
        parts += [f"states unsafe claim: {'; '.join(unsafe)}"] if unsafe else []
        return CheckResult(False, "facts: " + " | ".join(parts), grader=GRADER)
    found = f"states all {len(facts.required)} required fact(s)" if facts.required else "states no unsafe claim"
    extra = f", none of {len(facts.unsafe)} unsafe claim(s)" if facts.required and facts.unsafe else ""
    return CheckResult(True, f"facts: {found}{extra}", grader=GRADER)


def grade_facts(overlay: Overlay, criterion: Criterion, ctx: GradingContext) -> CheckResult | None:
    """The `facts` verdict on a semantic criterion; None when the truth declares no facts for it."""
    facts = overlay.truth.criteria.get(criterion.id)
    if criterion.route != "semantic" or facts is None:
        return None
    missing = deliverable_missing(overlay, ctx)
    if missing:
        return CheckResult(False, f"facts: {missing}", grader=GRADER)
    return judge_facts(facts, deliverable_texts(overlay, ctx))


class FactsJudge:
    """The `facts` judge behind the run's `Judge` protocol (`make_judge("facts")`)."""

    kind = GRADER

    def __init__(self, options: dict[str, Any] | None = None) -> None:
        self.options = dict(options or {})

    def describe(self) -> dict[str, Any]:
        """The frozen configuration: offline, deterministic, graded from `truth.criteria`."""
        return {"kind": GRADER, "id": GRADER, "deterministic": True}

    def grade(self, overlay: Overlay, criterion: Criterion, ctx: GradingContext) -> CheckResult | None:
        return grade_facts(overlay, criterion, ctx)

"""`claims`: a text deliverable states each claim (terms together in one sentence or other
window, matched by `claims` rules) and none of the forbidden ones.

    check:
      type: claims
      path: OBS-04-response.md
      claims:
      - says: batch Cpk 1.50 on all data
        all: [Cpk, {number: 1.50, tolerance: 0.005}, {any: [all data, all IPC data, all results]}]
      forbid:
      - says: the v0.9 draft value quoted as pump 3 capability
        all: [pump 3, {number: 1.41}]

Negations, questions and sentences copied from the request say nothing (see
`worldkit.overlay.claims`). A missing file fails. A bare identifier is never a claim unless the criterion asks for nothing
more than the mention: write the claim's other terms (what is said about the identifier).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from worldkit.overlay.check_base import _PathCheck, _read_text, register_check
from worldkit.overlay.claims import Claim, discount_request, find_claims
from worldkit.overlay.context import CheckResult, GradingContext


@register_check
class Claims(_PathCheck):
    """The file states every claim in `claims` and none in `forbid`."""

    type: Literal["claims"] = "claims"
    """`claims`."""
    claims: list[Claim] = Field(default_factory=list)
    """Claims that must all be found."""
    forbid: list[Claim] = Field(default_factory=list)
    """Claims none of which may be found."""

    @model_validator(mode="after")
    def _something(self) -> Claims:
        if not self.claims and not self.forbid:
            raise ValueError("a claims check needs `claims` and/or `forbid`")
        return self

    def evaluate(self, ctx: GradingContext) -> CheckResult:
        content, why = _read_text(ctx, self.path)
        if content is None:
            return CheckResult(False, why)
        content = discount_request(content, ctx.request)
        _, missing = find_claims(self.claims, [content])
        made, _ = find_claims(self.forbid, [content])
        problems = [f"does not state: {m}" for m in missing] + [f"states what it must not: {m}" for m in made]
        if problems:
            return CheckResult(False, f"workspace/{self.path} " + "; ".join(problems))
        return CheckResult(True, f"workspace/{self.path} states {len(self.claims)} claim(s)"
                                 + (f" and none of {len(self.forbid)} forbidden" if self.forbid else ""))  # fmt: skip

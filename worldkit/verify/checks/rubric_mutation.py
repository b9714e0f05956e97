"""Rubric mutation: every overlay's rubric passes its mutation campaign.

Generated right variants of the reference deliverable (other encodings, formats, dialects, date,
number and identifier forms, wordings) pass every criterion; each criterion fails at least 95% of
the generated wrong variants touching it; the do-nothing family passes no criterion
(`worldkit.mutate`). The campaign grades the staged candidate projection verify already holds (no
materialization of its own) and its reports are cached by overlay, seed, projection and code
(`worldkit.mutate.cache`): after `overlay freeze` or `overlay check`, which ran it, verify reads
the report instead of grading again.
"""

from __future__ import annotations

from worldkit.check_result import CheckResult, Item
from worldkit.mutate.gate import campaign, problems
from worldkit.verify.checks import BaseCheck, register
from worldkit.verify.context import VerifyContext

_KIND = {"mutation-right-fails": "right-variant-fails", "mutation-undercaught": "wrong-variants-escape",
         "do-nothing-passes": "do-nothing-passes"}  # fmt: skip


@register
class RubricMutation(BaseCheck):
    id = "rubric-mutation"
    purpose = (
        "Every criterion passes the generated right variants of the reference deliverable, fails at least 95% of "
        "the generated wrong variants touching it, and no do-nothing variant passes any criterion."
    )
    fix = (
        "Fix the named criterion's check so it reads every form a person saves and compares what it declares; "
        "run `worldkit overlay mutate` on the overlay for the table."
    )
    cost = 2

    def run(self, ctx: VerifyContext) -> CheckResult:
        items: list[Item] = []
        checked = criteria = wrong = right = 0
        for task in ctx.tasks:
            if task.condition != "full" or task.out is None or not task.overlay.reference.actions:
                continue
            overlay = task.overlay
            checked += 1
            report = campaign(overlay, task.out / "candidate" / "projection")
            criteria += len(report.tallies)
            wrong += sum(t.touching for t in report.tallies)
            right += sum(t.right_graded for t in report.tallies)
            for problem in problems(report):
                items.append(Item(kind=_KIND[problem.code], where=f"{overlay.id} {problem.locator}",
                                  detail=problem.message))  # fmt: skip
        return self.outcome(items, overlays=checked, criteria=criteria, wrong_graded=wrong, right_graded=right)

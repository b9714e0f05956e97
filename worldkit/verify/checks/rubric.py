"""Rubric sanity: doing nothing passes nothing; the reference solution passes all.

A rule from practice (WorkWorlds): a criterion that a do-nothing agent passes measures nothing,
and a deterministic criterion the reference solution fails is a broken check. An absence (no
prohibited change, nothing sent) is credited only when the deliverable exists and a criterion
asking for content passes (`worldkit.overlay.grading.credit_absences`), so no criterion may pass
on nothing done. Both are decided on the staged candidate projection, with the same
check code the grader runs.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from worldkit.check_result import CheckResult, Item
from worldkit.overlay.grading import evaluate_rubric, replay_actions, seed_workspace
from worldkit.verify.checks import BaseCheck, register
from worldkit.verify.context import VerifyContext


@register
class RubricSanity(BaseCheck):
    id = "rubric-sanity"
    purpose = "Doing nothing passes no criterion; the reference solution passes every deterministic criterion."
    fix = (
        "Tighten the check so it states what the deliverable must contain (an absence is credited only beside "
        "content); make the reference actions produce what the check reads."
    )
    cost = 2

    def run(self, ctx: VerifyContext) -> CheckResult:
        items: list[Item] = []
        checked = 0
        for task in ctx.tasks:
            if task.condition != "full" or task.out is None:
                continue
            overlay = task.overlay
            projection = task.out / "candidate" / "projection"
            checked += 1
            with tempfile.TemporaryDirectory(prefix="worldkit-rubric-", dir=ctx.work) as scratch:
                for label, actions in (("nothing-done", []), ("reference", list(overlay.reference.actions))):
                    workspace = Path(scratch) / label
                    seed_workspace(overlay, workspace)
                    grading, _refusals = replay_actions(overlay, projection, workspace, actions)
                    verdicts = evaluate_rubric(overlay, grading)
                    for criterion in overlay.rubric:
                        verdict = verdicts[criterion.id]
                        if verdict is None:
                            continue
                        if label == "nothing-done" and verdict.passed:
                            items.append(Item(kind="passes-when-nothing-done", where=f"{overlay.id} {criterion.id}",
                                              detail=verdict.detail))  # fmt: skip
                        if label == "reference" and not verdict.passed:
                            items.append(Item(kind="reference-fails", where=f"{overlay.id} {criterion.id}",
                                              detail=verdict.detail))  # fmt: skip
        return self.outcome(items, overlays=checked)


@register
class ReferenceAccess(BaseCheck):
    id = "reference-access"
    purpose = ("The reference solution's reads access every criterion's evidence under the full projection (labelled "
               "as a run is: a listing is not an access).")
    fix = ("Add to the overlay's reference.actions the call each item names (get_record for a record, read_file for a "
           "file, read_message for mail or chat), or correct the evidence locator, anchor or fields it cannot meet.")
    cost = 2

    def run(self, ctx: VerifyContext) -> CheckResult:
        from worldkit.grade.reference_access import reference_access_problems

        items: list[Item] = []
        checked = 0
        for task in ctx.tasks:
            if task.condition != "full" or task.out is None:
                continue
            checked += 1
            for problem in reference_access_problems(task.overlay, task.out / "candidate" / "projection"):
                items.append(Item(kind="evidence-not-accessed", where=f"{task.overlay.id} {problem.locator}",
                                  detail=f"{problem.message}; {problem.fix}"))  # fmt: skip
        return self.outcome(items, overlays=checked)

"""Rubric sanity: doing nothing passes only what is marked so; the reference solution passes all.

A rule from practice (WorkWorlds): a criterion that a do-nothing agent passes measures nothing
unless the task says so (`passes_when_nothing_done`), and a deterministic criterion the
reference solution fails is a broken check. Both are decided on the staged candidate projection,
with the same check code the grader runs.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from worldkit.overlay.grading import replay_actions, seed_workspace
from worldkit.verify.checks import BaseCheck, register
from worldkit.verify.context import VerifyContext
from worldkit.verify.result import CheckResult, Item


@register
class RubricSanity(BaseCheck):
    id = "rubric-sanity"
    purpose = (
        "Doing nothing passes no criterion unless it is marked passes_when_nothing_done; "
        "the reference solution passes every deterministic criterion."
    )
    fix = (
        "Tighten the check (or mark `passes_when_nothing_done: true` if passing on nothing is intended); "
        "make the reference actions produce what the check reads."
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
                    for criterion in overlay.rubric:
                        if criterion.check is None:
                            continue
                        verdict = criterion.check.evaluate(grading)
                        if label == "nothing-done" and verdict.passed and not criterion.passes_when_nothing_done:
                            items.append(Item(kind="passes-when-nothing-done", where=f"{overlay.id} {criterion.id}",
                                              detail=verdict.detail))  # fmt: skip
                        if label == "reference" and not verdict.passed:
                            items.append(Item(kind="reference-fails", where=f"{overlay.id} {criterion.id}",
                                              detail=verdict.detail))  # fmt: skip
        return self.outcome(items, overlays=checked)

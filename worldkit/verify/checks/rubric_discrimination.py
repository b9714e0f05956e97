"""Rubric discrimination: every overlay's counterfactual deliverables grade as declared.

Correct variants (another format, other wording) must pass every criterion, wrong variants (the
mistakes an employee would make) must fail the criteria they name; the reference passes and
nothing done fails everything. Deterministic criteria by their checks, semantic ones by the
offline `facts` judge (`worldkit.overlay.discrimination`). Each misgrade is an item naming the
task, the criterion and the variant.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from worldkit.check_result import CheckResult, Item
from worldkit.overlay.discrimination import discriminate
from worldkit.verify.checks import BaseCheck, register
from worldkit.verify.context import VerifyContext


@register
class RubricDiscrimination(BaseCheck):
    id = "rubric-discrimination"
    purpose = (
        "Counterfactual deliverables grade as declared: correct variants pass every criterion, wrong variants "
        "fail the criteria they name, and every deterministic criterion has a wrong variant."
    )
    fix = (
        "Fix the named criterion's check (or its truth facts) so it grades what it states; run "
        "`worldkit overlay check` on the overlay for the full list."
    )
    cost = 2

    def run(self, ctx: VerifyContext) -> CheckResult:
        items: list[Item] = []
        checked = variants = without = 0
        for task in ctx.tasks:
            if task.condition != "full" or task.out is None:
                continue
            overlay = task.overlay
            checked += 1
            variants += len(overlay.counterfactuals)
            if not overlay.counterfactuals:
                without += 1
                continue
            with tempfile.TemporaryDirectory(prefix="worldkit-discrimination-", dir=ctx.work) as scratch:
                found = discriminate(overlay, task.out / "candidate" / "projection", Path(scratch))
            for miss in found.declared_misgrades(overlay):  # reference/nothing-done: rubric-sanity
                items.append(Item(kind="misgraded", where=f"{overlay.id} {miss.criterion} {miss.variant}",
                                  detail=miss.line()))  # fmt: skip
            for variant, why in found.invalid:
                items.append(Item(kind="invalid-variant", where=f"{overlay.id} {variant}", detail=why))
            for why in found.coverage:
                items.append(Item(kind="coverage", where=overlay.id, detail=why))
        return self.outcome(items, overlays=checked, counterfactuals=variants, overlays_without_counterfactuals=without)

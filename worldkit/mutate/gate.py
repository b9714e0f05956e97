"""The campaign as a gate: problems for `overlay check`, a refusal for `overlay freeze`.

`campaign_problems` runs the campaign on a projection at hand and words its failures as errors
(`mutation-right-fails`, `mutation-undercaught`, `do-nothing-passes`); `overlay check`
(`worldkit.grade.reference_access.check_overlay_fully`) and `verify`'s `rubric-mutation` add
them once the overlay has no other error (the campaign varies a sound reference). `check_overlay`
here is `worldkit.overlay.check_overlay` plus the campaign on the same fresh projection.
`freeze_overlay_gated` (`overlay freeze`, `freeze --world W --overlays`) refuses (exit 1, every
failing criterion named) a rubric where a right variant fails, fewer than 95% of the wrong
variants touching a criterion are caught, or a do-nothing variant passes a criterion. There is
no flag to freeze anyway: fix the rubric's checks (or the reference) instead.
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Callable
from pathlib import Path

from worldkit.mutate.campaign import THRESHOLD, MutationReport, Progress, run_campaign
from worldkit.overlay.author import FreezeResult, freeze_overlay
from worldkit.overlay.errors import OverlayProblems
from worldkit.overlay.load import load_overlay, overlay_world
from worldkit.overlay.models import Overlay
from worldkit.overlay.problems import CheckReport, Problem, check_materialized

FIX_RIGHT = ("make the criterion's check accept the right answer in that form (encoding, file format, dialect, "
             "date or number form, identifier spelling, wording) — or fix the reference if the variant is not right")  # fmt: skip
FIX_CAUGHT = ("make the criterion's check compare what it declares (each column's value and unit, the claim's "
              "negation, the row's identity) so that the mistake fails it")  # fmt: skip
FIX_NOTHING = ("make the criterion ask for the answer's content, not for words the request or a restated question "
               "already holds; an absence is credited only beside content")  # fmt: skip


MUTATION_CODES = frozenset({"mutation-right-fails", "mutation-undercaught", "do-nothing-passes"})


def problems(report: MutationReport) -> list[Problem]:
    """`overlay check` problems for a campaign report (errors: they block freezing)."""
    found: list[Problem] = []
    for tally in report.tallies:
        if tally.right_passed < tally.right_graded:
            found.append(Problem(
                "mutation-right-fails", "error", f"rubric[{tally.criterion}]",
                f"fails {tally.right_graded - tally.right_passed} of {tally.right_graded} generated right variant(s), "
                f"e.g. {tally.misfailed[0]}", FIX_RIGHT,
            ))  # fmt: skip
        if tally.touching and tally.caught < THRESHOLD * tally.touching:
            found.append(Problem(
                "mutation-undercaught", "error", f"rubric[{tally.criterion}]",
                f"catches {tally.caught} of {tally.touching} generated wrong variant(s) touching it "
                f"(< {THRESHOLD:.0%}), e.g. {tally.escaped[0]}", FIX_CAUGHT,
            ))  # fmt: skip
    for passed in report.nothing_passes:
        family, _, rest = passed.partition(" ")
        criterion, _, detail = rest.partition(": ")
        found.append(Problem("do-nothing-passes", "error", f"rubric[{criterion}]",
                             f"the do-nothing variant `{family}` passes it ({detail})", FIX_NOTHING))  # fmt: skip
    return found


def campaign(model: Overlay, projection: Path, *, seed: int = 0, progress: Progress | None = None) -> MutationReport:
    """The campaign on an existing projection (graded in a temporary folder)."""
    with tempfile.TemporaryDirectory(prefix="worldkit-mutate-") as scratch:
        return run_campaign(model, projection, Path(scratch), seed=seed, progress=progress)


def mutate_overlay(overlay: Overlay | str | Path, *, seed: int = 0, progress: Progress | None = None) -> MutationReport:
    """Materialize the overlay's projection and run the campaign on it (`worldkit overlay mutate`)."""
    from worldkit.materialize import materialize

    model = overlay if isinstance(overlay, Overlay) else load_overlay(overlay)
    with tempfile.TemporaryDirectory(prefix="worldkit-mutate-") as scratch:
        root = Path(scratch)
        result = materialize(overlay_world(model), model.rev, model.date, model.seat, root / "projection")
        return run_campaign(model, result.out, root / "states", seed=seed, progress=progress)


def campaign_problems(model: Overlay, projection: Path, *, seed: int = 0) -> list[Problem]:
    """The campaign's problems for an overlay whose projection is at hand (none for an overlay
    without reference actions: `reference-missing` says so). Reports are cached (`cache`), so a
    later `verify` on the same overlay and projection does not grade again."""
    if not model.reference.actions:
        return []
    return problems(campaign(model, projection, seed=seed))


def check_overlay(overlay: Overlay | str | Path, *, seed: int = 0) -> CheckReport:
    """`worldkit.overlay.check_overlay` with the campaign's problems added (one materialization)."""
    from worldkit.materialize import materialize

    model = overlay if isinstance(overlay, Overlay) else load_overlay(overlay)
    with tempfile.TemporaryDirectory(prefix="worldkit-overlay-check-") as scratch:
        root = Path(scratch)
        result = materialize(overlay_world(model), model.rev, model.date, model.seat, root / "projection")
        report = check_materialized(model, result, root)
        if report.errors:
            return report  # the campaign grades a sound overlay's reference: its own errors come first
        found = campaign_problems(model, result.out, seed=seed)
        return dataclasses.replace(report, problems=[*report.problems, *found])


def freeze_overlay_gated(
    overlay: Overlay | str | Path,
    manifests: str | Path = "manifests",
    *,
    check: Callable[[Overlay], CheckReport] = check_overlay,
) -> FreezeResult:
    """Check the overlay with `check` (one that runs the campaign: `check_overlay` here, or the CLI's
    `check_overlay_fully`); its other errors refuse first, as `freeze_overlay` words them, then a
    campaign the rubric fails (module docstring); otherwise freeze (without checking again)."""
    model = overlay if isinstance(overlay, Overlay) else load_overlay(overlay)
    report = check(model)
    errors = [p for p in report.errors if p.code not in MUTATION_CODES]
    if errors:
        lines = "\n".join("  " + p.line() for p in errors)
        raise OverlayProblems(f"overlay {model.id} has {len(errors)} problem(s); fix them before freezing:\n{lines}")
    failed = [p for p in report.errors if p.code in MUTATION_CODES]
    if failed:
        lines = "\n".join(f"  {p.locator}: {p.message}" for p in failed)
        raise OverlayProblems(
            f"overlay {model.id}: the mutation campaign fails, so its rubric is not frozen:\n{lines}\n"
            f"See `worldkit overlay mutate {model.source or model.id}` for the table; fix the named criteria's checks."
        )
    return freeze_overlay(model, manifests, check=lambda _model: report)

"""The `structure_score` check type: InfoOrgBench's one deterministic criterion as an overlay check.

A packet overlay (`worldkit.infoorg.overlays`) has a single rubric criterion whose check scores
the final workspace tree against the packet's reference hierarchy with
`worldkit.infoorg.scoring.score_workspace` (validity first, then S = F1_bal · E). The check reads
the reference from the packet folder, found as the parent of the pre-task state
(`GradingContext.projection` is `<packet>/candidate` for a packet), and refuses a reference whose
bytes differ from the digest pinned in the overlay.

Registration is explicit: `register()` adds the type to `worldkit.overlay.checks.CHECKS` (it is
idempotent, and is called by everything that loads a packet overlay from disk). Importing this
module registers nothing, so building packets leaves the overlay registry as it was.
This module never writes to a workspace.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from worldkit.canon import sha256_file
from worldkit.infoorg.scoring import score_workspace
from worldkit.overlay.checks import CHECKS, BaseCheck, register_check
from worldkit.overlay.context import CheckResult, GradingContext

__all__ = ["CHECK_TYPE", "REFERENCE_PATH", "StructureScoreCheck", "register"]

CHECK_TYPE = "structure_score"
REFERENCE_PATH = "verifier/reference.json"

Sha256 = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]


class StructureScoreCheck(BaseCheck):
    """The output's Structure Score against the packet's reference hierarchy (paper §4.1, App. D).

    Passes when the output is valid (every record once, bytes unchanged, no stray file, allowed
    folder names) and S ≥ `min_score`; an output that resolves no reference triple (S = 0: the
    untouched inbox, one flat folder) never passes. The detail carries S and its parts (0–100).
    """

    type: Literal["structure_score"] = "structure_score"
    """`structure_score`."""
    reference_sha256: Sha256
    """SHA-256 of the packet's `verifier/reference.json`; grading refuses a reference that changed."""
    min_score: float = Field(0.0, ge=0.0, le=1.0)
    """S (0–1) at or above which the criterion passes (with 0: any valid output with S > 0)."""

    def packet_dir(self, ctx: GradingContext) -> Path:
        """The packet folder: the parent of the pre-task state `<packet>/candidate`."""
        return Path(ctx.projection).parent

    def evaluate(self, ctx: GradingContext) -> CheckResult:
        packet = self.packet_dir(ctx)
        reference = packet / REFERENCE_PATH
        if not reference.is_file():
            return CheckResult(False, f"reference {reference} does not exist; grade against the built packet")
        if sha256_file(reference) != self.reference_sha256:
            return CheckResult(
                False,
                f"reference {reference} differs from the digest pinned in the overlay; rebuild the packet",
            )
        score = score_workspace(packet, ctx.workspace)
        if not score.valid:
            more = len(score.problems) - 1
            extra = f" (and {more} more)" if more > 0 else ""
            return CheckResult(False, f"invalid output, S = 0: {score.problems[0]}{extra}")
        value = score.S or 0.0
        detail = (
            f"S = {100 * value:.2f} (F1_bal {100 * (score.f1_bal or 0):.2f}, E {100 * (score.E or 0):.2f}, "
            f"category {score.category})"
        )
        if value <= 0:
            return CheckResult(False, f"{detail}: no reference triple is resolved the same way")
        if value < self.min_score:
            return CheckResult(False, f"{detail} is below the pass mark {100 * self.min_score:.2f}")
        return CheckResult(True, detail)


def register() -> type[StructureScoreCheck]:
    """Make `structure_score` available to overlay rubrics (idempotent)."""
    if CHECKS.get(CHECK_TYPE) is not StructureScoreCheck:
        register_check(StructureScoreCheck)
    return StructureScoreCheck

"""Errors of the overlay subsystem (all rooted in `worldkit.errors`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from worldkit.errors import CheckFailed

if TYPE_CHECKING:
    from worldkit.overlay.models import Overlay


class StaleFingerprint(CheckFailed):
    """The projection no longer has the fingerprint the overlay was written against (exit 1)."""

    def __init__(self, overlay: Overlay, actual: str) -> None:
        where = f" ({overlay.source})" if overlay.source else ""
        super().__init__(
            f"overlay {overlay.id}{where}: pinned_fingerprint {overlay.pinned_fingerprint} no longer matches the "
            f"projection of {overlay.world} {overlay.rev} {overlay.date.isoformat()} {overlay.seat} ({actual}). "
            "Review the overlay against the new projection (`worldkit overlay check`), then re-pin it with "
            "`worldkit overlay pin`."
        )
        self.expected = overlay.pinned_fingerprint
        self.actual = actual


class OverlayProblems(CheckFailed):
    """`overlay check` found problems; the message lists them (exit 1)."""

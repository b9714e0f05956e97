"""The answer key gated by evidence: how an agent without a language model can know an answer honestly.

The `searcher` agent cannot read documents the way a person does, so the *runner* hands it an
`EvidenceGatedKey`: an object that holds the overlay's reference deliverable and releases a
criterion's correct content only when the run's own logged calls so far cover one of that
criterion's sufficient evidence sets — decided by `worldkit.grade.access.evidence_access`, the
rules that label access when the run is graded, replayed over the run's event log as stored.
The gate, not the agent, checks the reads: the agent never sees the evidence map, the rubric's
checks, the verifier package or the reference text, only

- `released()`: the ids of the criteria whose evidence its logged calls have covered;
- `deliverable(correct, seed)`: the tool calls that write the task's deliverable with the correct
  content for `correct` (each must be released, or the key refuses) and, for every other
  criterion, a wrong or missing answer from a `WrongAnswers` plug-in
  (`worldkit.run.wrong_answers`).

So what an agent states correctly is bounded by what it found through the seat's tools; whether
it then gets it right (its `skill`) is the agent's business.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from worldkit.errors import UsageError
from worldkit.grade.access import evidence_access
from worldkit.overlay.models import Overlay
from worldkit.run.wrong_answers import ReferencePerturbation, WrongAnswers, reference_deliverable

__all__ = ["EvidenceGatedKey", "KeyRefused"]


class KeyRefused(UsageError):
    """An agent asked the answer key for content whose evidence its logged calls did not cover."""


class EvidenceGatedKey:
    """Releases a criterion's reference content only after the run's logged calls cover its evidence."""

    def __init__(
        self,
        overlay: Overlay,
        candidate: Path,
        config: Any,
        events: Callable[[], list[Mapping[str, Any]]],
        *,
        wrong: WrongAnswers | None = None,
    ) -> None:
        self._overlay = overlay
        self._candidate = Path(candidate)
        self._config = config
        self._events = events
        self._wrong = wrong or ReferencePerturbation()
        self._released: set[str] = set()

    @property
    def criteria(self) -> tuple[str, ...]:
        """The rubric's criterion ids, in rubric order (ids only: no text, no check)."""
        return tuple(c.id for c in self._overlay.rubric)

    @property
    def wrong_answers(self) -> str:
        """Which `WrongAnswers` plug-in makes the wrong answers (for the agent's record)."""
        return str(getattr(self._wrong, "name", type(self._wrong).__name__))

    def released(self) -> frozenset[str]:
        """Criteria whose evidence the run's logged calls (as stored now) cover; never shrinks."""
        report = evidence_access(self._overlay, None, list(self._events()), candidate=self._candidate, config=self._config)
        self._released |= {c for c, label in report.labels.items() if label == "accessed"}
        return frozenset(self._released)

    def deliverable(self, correct: Iterable[str], seed: int) -> list[tuple[str, dict[str, Any]]]:
        """Tool calls writing the deliverable: `correct` criteria right, every other one spoiled."""
        wanted = set(correct)
        refused = sorted(wanted - self._released)
        if refused:
            raise KeyRefused(
                f"the answer key releases no content for {', '.join(refused)}: the run's logged calls do not "
                "cover a sufficient evidence set for them; call released() after reading"
            )
        rng = random.Random(seed)
        result = reference_deliverable(self._overlay)
        for criterion in self.criteria:
            if criterion not in wanted:
                result = self._wrong.spoil(self._overlay, criterion, result, rng)
        # A spoiled criterion may share text with a correct one; spoiling errs toward failing.
        return result.actions()

"""What a check sees after a run (`GradingContext`) and what it answers (`CheckResult`).

The run captures the final state independently of the agent's last message and hands it to the
checks in this shape; `overlay check` builds the same shape from the reference solution and
from an untouched workspace. Nothing here reads the verifier package.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class CheckResult:
    """A check's verdict and a one-line reason a reviewer can act on."""

    passed: bool | None
    """True or False; None when the check cannot decide from what was captured (`unknown`:
    e.g. a criterion on mail or record changes graded without the run's event log). An unknown
    result counts in no pass rate."""
    detail: str
    grader: str = ""
    """Who decided: empty for a deterministic check, else the judge kind (`facts`, `openai`, …),
    so verdicts of different judges are never mixed without saying so."""


@dataclass(frozen=True)
class GradingContext:
    """The final state of one run, as the checks read it.

    - `workspace`: the candidate's `workspace/` after the run (deliverable paths are relative to it).
    - `records`: record id → final record JSON, the same shape as the projection's
      `records/<system>/<id>.json`, with the run's changes applied: a status change sets
      `status` (and appends a `{kind: "status", status}` history entry), a comment appends a
      `{kind: "comment", note}` history entry, an attachment a `{kind: "attach", note: path}` one.
    - `sent`: messages the seat sent, each `{to: [...], subject, body}` (`cc`, `reply_to` optional).
    - `events`: the run's event-log entries (`tool`, `arguments`, `outcome` at least), or None
      when no log is available; checks then derive the changes from the final state.
    - `projection`: the pre-task projection the run started from (its records are the baseline).
    - `state_known`: False when mail and record changes are unknown (a workspace graded without
      the run's event log: `records` and `sent` are then empty, not the final state); checks on
      them answer `unknown` (`CheckResult.passed is None`).
    - `request`: the task's request text, so a claim cannot be satisfied by the request's own
      wording copied into a deliverable (`claims.discount_request`).
    """

    workspace: Path
    records: dict[str, dict[str, Any]]
    sent: list[dict[str, Any]]
    events: list[dict[str, Any]] | None
    projection: Path
    state_known: bool = True
    request: str = ""

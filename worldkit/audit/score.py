"""The paper's human audit, step 2: the filled coding sheets scored (WorkWorlds Appendix D).

For criterion verdicts and for access labels separately: inter-coder agreement, Cohen's κ and
Gwet's AC1 for every pair of coders, Fleiss' κ over all coders (statsmodels), and each coder's
agreement with the automated verdicts and labels — overall and by condition (the paper's "92.5%
under the full projection and 95.0% under curation"). Intervals are 95% task-cluster bootstrap
ones (`worldkit.grade.agreement`). The key's seal (its sha256) is checked before anything is read;
a sheet whose shown columns were changed is refused (`worldkit.audit.sheets`). Only reads.
"""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from worldkit.audit.sample import AUDIT_SCHEMA_VERSION, KEY_FILE
from worldkit.audit.sheets import ANSWER_CHOICES, read_sheet
from worldkit.canon import sha256_json
from worldkit.errors import UsageError
from worldkit.grade.agreement import agreement, percent_agreement

__all__ = ["AuditScore", "read_key", "score_audit"]

AUTOMATED = "automated"


def read_key(folder: Path) -> dict[str, Any]:
    """The audit's key, its seal checked."""
    path = Path(folder) / KEY_FILE
    try:
        key = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise UsageError(f"cannot read {path} ({error}); pass the folder `worldkit audit sample --out` wrote") from None
    if not isinstance(key, dict) or key.get("kind") != "worldkit-audit-key":
        raise UsageError(f"{path} is not an audit key; pass the folder `worldkit audit sample --out` wrote")
    if key.get("schema_version") != AUDIT_SCHEMA_VERSION:
        raise UsageError(f"{path}: schema_version {key.get('schema_version')!r} is not supported; sample again")
    if key.get("sha256") != sha256_json({k: v for k, v in key.items() if k != "sha256"}):
        raise UsageError(f"{path} was changed after sampling (its seal does not match); restore it — the key must "
                         "not be edited")  # fmt: skip
    return key


@dataclass(frozen=True)
class AuditScore:
    """The audit's figures, as JSON-ready dicts (see the module docstring)."""

    folder: Path
    coders: list[str]
    kinds: dict[str, dict[str, Any]]

    def as_json(self) -> dict[str, Any]:
        return {"folder": str(self.folder), "coders": self.coders, **self.kinds}


def _fleiss(labels: list[list[str]], categories: tuple[str, ...]) -> float | None:
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    index = {c: i for i, c in enumerate(categories)}
    table, _ = aggregate_raters([[index[x] for x in row] for row in labels], n_cat=len(categories))
    value = float(fleiss_kappa(table))
    return None if math.isnan(value) else round(value, 6)


def score_audit(folder: Path, *, resamples: int = 2000, seed: int = 0) -> AuditScore:
    """Score the filled sheets in `folder` against each other and against the automated verdicts."""
    folder = Path(folder)
    key = read_key(folder)
    items: dict[str, dict[str, str]] = key["items"]
    expected = {item: {**row, "kind": items[item]["kind"]} for item, row in key["rows"].items()}
    coders: list[str] = list(key["coders"])
    answers = {coder: read_sheet(folder, coder, expected) for coder in coders}
    kinds: dict[str, dict[str, Any]] = {}
    for kind, categories in ANSWER_CHOICES.items():
        ids = sorted(i for i, entry in items.items() if entry["kind"] == kind)
        if not ids:
            continue
        clusters = [items[i]["task"] for i in ids]
        raters = {coder: [answers[coder][i] for i in ids] for coder in coders}
        raters[AUTOMATED] = [items[i]["automated"] for i in ids]
        pairs = {}
        for first, second in [*itertools.combinations(coders, 2), *((c, AUTOMATED) for c in coders)]:
            found = agreement(raters[first], raters[second], clusters, categories, resamples=resamples, seed=seed)
            pairs[f"{first} vs {second}"] = found.as_json()
        by_condition: dict[str, dict[str, float]] = {}
        for condition in sorted({items[i]["condition"].split(":", 1)[0] for i in ids}):
            rows = [n for n, i in enumerate(ids) if items[i]["condition"].split(":", 1)[0] == condition]
            by_condition[condition] = {
                coder: round(percent_agreement([raters[coder][n] for n in rows], [raters[AUTOMATED][n] for n in rows]), 6)
                for coder in coders
            } | {"n": len(rows)}  # fmt: skip
        kinds["criteria" if kind == "criterion" else "access"] = {
            "n": len(ids), "tasks": len(set(clusters)), "pairs": pairs,
            "fleiss_kappa_coders": _fleiss([[raters[c][n] for c in coders] for n in range(len(ids))], categories),
            "coder_vs_automated_by_condition": by_condition,
        }  # fmt: skip
    return AuditScore(folder=folder, coders=coders, kinds=kinds)

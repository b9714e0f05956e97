"""Judge calibration: a judge run over every semantic criterion's labelled counterfactuals.

The labels come from the overlays, never from the judge: the reference solution and every
`correct` counterfactual must pass every semantic criterion; nothing done must fail them all; a
`wrong` counterfactual must fail the semantic criteria in its `fails` and pass those in its
`passes` (criteria it names in neither are not labelled by it). Generated counterfactuals join
when a generator is given (`generated`: overlay → more `Counterfactual`s), labelled the same way.

Each labelled variant is replayed into its final state (`overlay.discrimination.variant_state`)
and shown to the judge through the same call a run uses (`judge.grade_criterion`), so the judge
sees exactly what it would see in a run. The figures are agreement, Cohen's κ and Gwet's AC1 of
the judge's verdicts against the labels — overall with a task-cluster bootstrap interval, per task
with a variant-cluster one — and every disagreement. A verdict other than pass/fail (`ungraded`,
`grader_error`) is its own category `undecided`, so it always counts against the judge — except a
judge endpoint that cannot be reached or keeps failing: that stops the calibration
(`JudgeEndpointFailed`, exit 5), since its figures would measure the network, not the judge.

The calibration is a canonical JSON document whose `sha256` covers everything in it, including
the judge's frozen configuration (`judge_sha256`); `attach_calibration` refuses one made with a
different judge configuration. Never writes into an overlay or a run.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from worldkit.canon import sha256_json
from worldkit.errors import EnvironmentProblem, UsageError
from worldkit.grade.agreement import Agreement, agreement
from worldkit.grade.judge import Judge, grade_criterion, judge_id
from worldkit.overlay.discrimination import NOTHING_DONE, REFERENCE, CounterfactualInvalid, variant_state
from worldkit.overlay.models import Counterfactual, Overlay

__all__ = [
    "CALIBRATION_SCHEMA_VERSION",
    "CATEGORIES",
    "Calibration",
    "CalibrationItem",
    "JudgeEndpointFailed",
    "attach_calibration",
    "attach_summary",
    "calibrate",
    "labelled_variants",
    "read_calibration",
]

CALIBRATION_SCHEMA_VERSION = 1
CATEGORIES = ("pass", "fail", "undecided")
Generator = Callable[[Overlay], Iterable[Counterfactual]]
Progress = Callable[[str, int, int], None]


class JudgeEndpointFailed(EnvironmentProblem):
    """The judge's endpoint could not be reached or kept failing during a calibration (exit 5)."""


@dataclass(frozen=True)
class CalibrationItem:
    """One labelled (variant, criterion) and the judge's verdict on it."""

    task: str
    variant: str
    kind: str
    criterion: str
    expected: str
    got: str
    reason: str

    @property
    def label(self) -> str:
        return self.got if self.got in ("pass", "fail") else "undecided"

    def as_json(self) -> dict[str, str]:
        return {"task": self.task, "variant": self.variant, "kind": self.kind, "criterion": self.criterion,
                "expected": self.expected, "got": self.got, "reason": self.reason}  # fmt: skip


@dataclass(frozen=True)
class Calibration:
    """A judge's calibration: figures, items and its digest (see the module docstring)."""

    document: dict[str, Any]

    @property
    def sha256(self) -> str:
        return str(self.document["sha256"])

    def summary(self) -> dict[str, Any]:
        """What an execution record and the report carry: digest, judge, overall and per-task figures."""
        doc = self.document
        return {"sha256": doc["sha256"], "judge": doc["judge"].get("id"), "judge_sha256": doc["judge_sha256"],
                "overall": doc["overall"], "per_task": doc["per_task"], "bootstrap": doc["bootstrap"],
                "undecided": doc["undecided"], "disagreements": len(doc["disagreements"])}  # fmt: skip


def labelled_variants(overlay: Overlay, generated: Generator | None = None) -> list[tuple[Counterfactual, dict[str, str]]]:
    """Each variant with its labels on the overlay's semantic criteria (variants labelling none left out)."""
    semantic = [c.id for c in overlay.rubric if c.route == "semantic"]
    if not semantic:
        return []
    implicit = [
        Counterfactual(id=REFERENCE, kind="correct", description="the reference solution"),
        Counterfactual(id=NOTHING_DONE, kind="wrong", base="nothing", description="nothing done", fails=semantic),
    ]
    variants = [*implicit, *overlay.counterfactuals, *(generated(overlay) if generated else [])]
    out = []
    for variant in variants:
        if variant.kind == "correct":
            labels = dict.fromkeys(semantic, "pass")
        else:
            labels = {c: "pass" for c in variant.passes if c in semantic}
            labels.update({c: "fail" for c in variant.fails if c in semantic})
        if labels:
            out.append((variant, dict(sorted(labels.items()))))
    return out


def calibrate(
    overlays: Iterable[Overlay],
    judge: Judge,
    *,
    generated: Generator | None = None,
    resamples: int = 2000,
    seed: int = 0,
    progress: Progress | None = None,
) -> Calibration:
    """Run `judge` over every labelled semantic counterfactual of `overlays` (see module doc)."""
    from worldkit.materialize import materialize
    from worldkit.overlay import overlay_digest
    from worldkit.overlay.load import overlay_world

    chosen = sorted(overlays, key=lambda o: o.id)
    work = [(o, labelled_variants(o, generated)) for o in chosen]
    work = [(o, v) for o, v in work if v]
    if not work:
        raise UsageError("no semantic criterion with labelled counterfactuals in the tasks given; "
                         "pass tasks whose rubric has semantic criteria (--tasks)")  # fmt: skip
    total = sum(len(labels) for _o, variants in work for _v, labels in variants)
    items: list[CalibrationItem] = []
    done = 0
    with tempfile.TemporaryDirectory(prefix="worldkit-calibrate-") as scratch:
        root = Path(scratch)
        projections: dict[tuple[str, str, str, str], Path] = {}
        for number, (overlay, variants) in enumerate(work):
            key = (str(overlay.world), overlay.rev, overlay.date.isoformat(), overlay.seat)
            if key not in projections:
                out = root / f"projection-{len(projections)}"
                materialize(overlay_world(overlay), overlay.rev, overlay.date, overlay.seat, out)
                projections[key] = out
            criteria = {c.id: c for c in overlay.rubric}
            for index, (variant, labels) in enumerate(variants):
                try:
                    ctx = variant_state(overlay, projections[key], root / f"{number:03d}-{index:03d}", variant)
                except CounterfactualInvalid as error:
                    raise UsageError(f"{overlay.id}: counterfactual {variant.id} cannot be built ({error}); "
                                     f"fix it (`worldkit overlay check {overlay.id}` names the problem)") from None
                for criterion_id, expected in labels.items():
                    verdict = grade_criterion(judge, overlay, criteria[criterion_id], ctx, overlay.request)
                    if verdict.endpoint_failed:
                        raise JudgeEndpointFailed(
                            f"judge {judge_id(judge)}: {verdict.reason} — calibration stopped at {overlay.id} "
                            f"{variant.id} {criterion_id} (a calibration needs every verdict); start the judge's "
                            "endpoint or fix --judge-base-url / --judge-model, then calibrate again"
                        )
                    items.append(CalibrationItem(overlay.id, variant.id, variant.kind, criterion_id, expected,
                                                 verdict.result, " ".join(verdict.reason.split())[:300]))  # fmt: skip
                    done += 1
                    if progress is not None:
                        progress(overlay.id, done, total)
    config = judge.describe()
    tasks = {o.id: overlay_digest(o) for o, _v in work}
    return Calibration(_document(items, config, tasks, resamples=resamples, seed=seed))


def _figures(items: list[CalibrationItem], cluster: Callable[[CalibrationItem], str], resamples: int,
             seed: int) -> dict[str, Any]:  # fmt: skip
    found: Agreement = agreement([i.expected for i in items], [i.label for i in items], [cluster(i) for i in items],
                                 CATEGORIES, resamples=resamples, seed=seed)  # fmt: skip
    return found.as_json()


def _document(items: list[CalibrationItem], config: dict[str, Any], tasks: Mapping[str, str], *, resamples: int,
              seed: int) -> dict[str, Any]:  # fmt: skip
    items = sorted(items, key=lambda i: (i.task, i.variant, i.criterion))
    per_task = {
        task: _figures([i for i in items if i.task == task], lambda i: i.variant, resamples, seed)
        for task in sorted({i.task for i in items})
    }
    document: dict[str, Any] = {
        "schema_version": CALIBRATION_SCHEMA_VERSION,
        "kind": "worldkit-judge-calibration",
        "judge": config,
        "judge_sha256": sha256_json(config),
        "tasks": dict(sorted(tasks.items())),
        "labels": "committed counterfactuals, the reference (pass) and nothing done (fail)",
        "bootstrap": {"resamples": resamples, "seed": seed, "level": 0.95,
                      "overall_cluster": "task", "per_task_cluster": "variant"},  # fmt: skip
        "overall": _figures(items, lambda i: i.task, resamples, seed),
        "per_task": per_task,
        "undecided": sum(i.label == "undecided" for i in items),
        "disagreements": [i.as_json() for i in items if i.label != i.expected],
        "items": [i.as_json() for i in items],
    }
    document["sha256"] = sha256_json(document)
    return document


def read_calibration(path: Path) -> Calibration:
    """A calibration file, its digest checked (a file edited after the fact is refused)."""
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise UsageError(f"cannot read the calibration {path} ({error}); pass the file `worldkit judge calibrate "
                         "--out` wrote") from None  # fmt: skip
    if not isinstance(document, dict) or document.get("kind") != "worldkit-judge-calibration":
        raise UsageError(f"{path} is not a judge calibration; pass the file `worldkit judge calibrate --out` wrote")
    if document.get("schema_version") != CALIBRATION_SCHEMA_VERSION:
        raise UsageError(f"{path}: calibration schema_version {document.get('schema_version')!r} is not supported "
                         f"(this worldkit reads {CALIBRATION_SCHEMA_VERSION}); calibrate again")  # fmt: skip
    claimed = document.get("sha256")
    body = {k: v for k, v in document.items() if k != "sha256"}
    if claimed != sha256_json(body):
        raise UsageError(f"{path}: its contents do not match its sha256 (edited after calibration); calibrate again "
                         "with `worldkit judge calibrate --out`")  # fmt: skip
    return Calibration(document)


def attach_calibration(judge: Judge, calibration: Calibration, source: str = "") -> Judge:
    """Give the judge its calibration (recorded with every verdict it gives); refuse another judge's."""
    return attach_summary(judge, calibration.summary(), source)


def attach_summary(judge: Judge, summary: Mapping[str, Any], source: str = "") -> Judge:
    """`attach_calibration` from a calibration's `summary()` (what a campaign plan pins)."""
    if sha256_json(judge.describe()) != summary.get("judge_sha256"):
        raise UsageError(
            f"calibration {source or str(summary.get('sha256', ''))[:12]} was made with judge "
            f"{summary.get('judge')!r} configured differently from {judge_id(judge)!r} "
            "(model, endpoint, prompt, retries or version differ); calibrate this judge with `worldkit judge calibrate`"
        )
    judge.calibration = dict(summary)  # type: ignore[attr-defined]
    return judge

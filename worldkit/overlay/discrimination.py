"""Does the rubric discriminate? Grade the overlay's counterfactual deliverables as declared.

Each `Counterfactual` becomes a final state: the reference solution's (or nothing done), with
its files replaced, edited or deleted, written in the declared form (BOM, line ends), some
reference actions dropped and further actions added — all replayed the way the servers would.
A wrong variant may attempt what the servers refuse (the attempt is
logged as denied, as in a run). It is then graded exactly as a run is: every deterministic check
(`grading.check_rubric`) and every semantic criterion that has truth facts by the offline
`facts` judge, then the absence rule over all those verdicts (`grading.credit_absences`). Two
implicit variants are always graded too: the reference itself (correct) and nothing done (wrong
on every criterion).

A **misgrade** is a correct variant failing a criterion, or a wrong variant passing a criterion
in its `fails` (or failing one in its `passes`). Coverage rules: at least two correct variants,
each differing from the reference; for every deterministic criterion at least one wrong variant
that names it in `fails`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from worldkit.overlay.context import CheckResult, GradingContext
from worldkit.overlay.facts import grade_facts
from worldkit.overlay.grading import check_rubric, credit_absences, replay_actions, seed_workspace
from worldkit.overlay.models import Counterfactual, OracleAction, Overlay

Verdict = Literal["pass", "fail", "ungraded"]

REFERENCE = "reference"
NO_FACTS = "no facts"
NOTHING_DONE = "nothing-done"


class CounterfactualInvalid(ValueError):
    """A counterfactual cannot be built (an edit's text is not in its base file, say)."""


@dataclass(frozen=True)
class Misgrade:
    variant: str
    kind: str
    criterion: str
    expected: Verdict
    got: Verdict
    detail: str

    def line(self) -> str:
        return (f"{self.criterion} misgrades {self.kind} variant {self.variant}: expected {self.expected}, "
                f"got {self.got} ({self.detail})")  # fmt: skip


@dataclass
class VariantGrade:
    variant: str
    kind: str
    verdicts: dict[str, tuple[Verdict, str]] = field(default_factory=dict)

    def passed(self) -> list[str]:
        return [c for c, (v, _) in self.verdicts.items() if v == "pass"]


@dataclass
class Discrimination:
    overlay: str
    grades: list[VariantGrade]
    misgrades: list[Misgrade]
    invalid: list[tuple[str, str]]
    coverage: list[str]

    def declared_misgrades(self, overlay: Overlay) -> list[Misgrade]:
        """Misgrades not already reported by the rubric-sanity rules: every one of a declared
        variant, and those of the reference and of nothing done on semantic criteria (the
        deterministic ones are `reference-fails` / `trivial-pass`)."""
        routes = {c.id: c.route for c in overlay.rubric}
        return [
            m for m in self.misgrades
            if m.variant not in (REFERENCE, NOTHING_DONE) or routes.get(m.criterion) == "semantic"
        ]  # fmt: skip

    @property
    def ok(self) -> bool:
        return not (self.misgrades or self.invalid or self.coverage)

    def summary(self) -> dict[str, object]:
        declared = [g for g in self.grades if g.variant not in (REFERENCE, NOTHING_DONE)]
        return {
            "overlay": self.overlay,
            "correct": sum(g.kind == "correct" for g in declared),
            "wrong": sum(g.kind == "wrong" for g in declared),
            "misgrades": [m.line() for m in self.misgrades],
            "invalid": [f"{v}: {why}" for v, why in self.invalid],
            "coverage": list(self.coverage),
        }


def _reference_texts(overlay: Overlay) -> dict[str, str]:
    texts: dict[str, str] = {}
    for action in overlay.reference.actions:
        if action.tool == "write_file":
            texts[action.args["path"]] = action.args["content"]
    return texts


def variant_actions(overlay: Overlay, variant: Counterfactual) -> list[OracleAction]:
    """The tool calls that produce the variant's final state (raises `CounterfactualInvalid`)."""
    base = list(overlay.reference.actions) if variant.base == "reference" else []
    texts = _reference_texts(overlay) if variant.base == "reference" else {}
    texts.update(variant.files)
    for index, edit in enumerate(variant.edits):
        if edit.path not in texts:
            raise CounterfactualInvalid(f"edits[{index}]: no file {edit.path} in the base to edit")
        if edit.old not in texts[edit.path]:
            raise CounterfactualInvalid(f"edits[{index}]: {edit.old[:60]!r} does not occur in {edit.path}")
        texts[edit.path] = texts[edit.path].replace(edit.old, edit.new, edit.count or -1)
    for path in variant.delete:
        if path not in texts:
            raise CounterfactualInvalid(f"delete: no file {path} in the base")
        del texts[path]
    for path, form in variant.forms.items():
        if path not in texts:
            raise CounterfactualInvalid(f"forms: no file {path} in the variant")
        text = texts[path].replace("\r\n", "\n")
        text = text.replace("\n", {"lf": "\n", "crlf": "\r\n", "cr": "\r"}[form.newline])
        texts[path] = ("\ufeff" if form.bom else "") + text
    actions: list[OracleAction] = []
    written: set[str] = set()
    for action in base:
        if action.tool in variant.drop_tools:
            continue
        if action.tool == "write_file":
            path = action.args["path"]
            if path in texts and path not in written:
                actions.append(OracleAction(tool="write_file", args={"path": path, "content": texts[path]}))
                written.add(path)
            continue
        actions.append(action)
    for path in sorted(set(texts) - written):
        if "write_file" in variant.drop_tools and path not in variant.files:
            continue
        actions.append(OracleAction(tool="write_file", args={"path": path, "content": texts[path]}))
    return actions + list(variant.actions)


def variant_state(overlay: Overlay, projection: Path, workspace: Path, variant: Counterfactual) -> GradingContext:
    """The variant's final state, replayed onto a fresh seeded `workspace`."""
    actions = variant_actions(overlay, variant)
    seed_workspace(overlay, workspace)
    ctx, refusals = replay_actions(overlay, projection, workspace, actions)
    if refusals and variant.kind == "correct":
        raise CounterfactualInvalid("the servers would refuse: " + "; ".join(refusals))
    return ctx  # a wrong variant's refused attempts stay in its event log, denied


def grade_state(overlay: Overlay, ctx: GradingContext) -> dict[str, tuple[Verdict, str]]:
    """Criterion id → (verdict, detail): checks for deterministic criteria, `facts` for semantic."""
    checked = check_rubric(overlay, ctx)
    verdicts: dict[str, tuple[str, str]] = {}
    for criterion in overlay.rubric:
        result: CheckResult | None = checked.get(criterion.id)
        if result is not None:
            verdicts[criterion.id] = (_RESULT[result.passed], result.detail)
            continue
        judged = grade_facts(overlay, criterion, ctx)
        verdicts[criterion.id] = ("ungraded", NO_FACTS) if judged is None else (judged.result, judged.detail)
    # the absence rule over checks and `facts` verdicts alike; an `unknown` (an absence beside
    # undecided content) is not decided here either
    return {cid: (_VERDICT.get(verdict, "ungraded"), detail)
            for cid, (verdict, detail) in credit_absences(overlay, verdicts).items()}  # fmt: skip


_RESULT = {True: "pass", False: "fail", None: "unknown"}
_VERDICT: dict[str, Verdict] = {"pass": "pass", "fail": "fail"}


def _expected(overlay: Overlay, variant: Counterfactual) -> dict[str, Verdict]:
    if variant.kind == "correct":
        return {c.id: "pass" for c in overlay.rubric}
    return {**{c: "pass" for c in variant.passes}, **{c: "fail" for c in variant.fails}}


def discriminate(overlay: Overlay, projection: Path, scratch: Path) -> Discrimination:
    """Grade the reference, nothing done and every counterfactual (see the module docstring)."""
    everyone = [c.id for c in overlay.rubric]
    implicit = [
        Counterfactual(id=REFERENCE, kind="correct", description="the reference solution"),
        Counterfactual(id=NOTHING_DONE, kind="wrong", base="nothing", description="nothing done", fails=everyone),
    ]
    grades: list[VariantGrade] = []
    misgrades: list[Misgrade] = []
    invalid: list[tuple[str, str]] = []
    for number, variant in enumerate([*implicit, *overlay.counterfactuals]):
        try:
            ctx = variant_state(overlay, projection, scratch / f"{number:03d}-{variant.id}", variant)
        except CounterfactualInvalid as error:
            invalid.append((variant.id, str(error)))
            continue
        grade = VariantGrade(variant.id, variant.kind, grade_state(overlay, ctx))
        grades.append(grade)
        for criterion_id, expected in _expected(overlay, variant).items():
            got, detail = grade.verdicts[criterion_id]
            no_facts = got == "ungraded" and detail == NO_FACTS
            if no_facts and (expected == "pass" or variant.id in (REFERENCE, NOTHING_DONE)):
                continue  # a semantic criterion without facts: not this instrument's to decide
            # (a `facts` verdict of `ungraded` on a declared criterion is a misgrade: it cannot read a labelled variant)
            if got != expected:
                misgrades.append(Misgrade(variant.id, variant.kind, criterion_id, expected, got, detail))
    return Discrimination(overlay.id, grades, misgrades, invalid, _coverage(overlay))


def _coverage(overlay: Overlay) -> list[str]:
    if not overlay.counterfactuals:
        return ["no counterfactual deliverables: nothing shows that the rubric passes right answers in other formats "
                "and fails plausible wrong ones"]
    problems = []
    correct = [v for v in overlay.counterfactuals if v.kind == "correct"]
    if len(correct) < 2:
        problems.append(f"{len(correct)} correct variant(s); give at least two that differ in format and wording")
    for variant in correct:
        if not (variant.files or variant.edits or variant.forms):
            problems.append(f"correct variant {variant.id} changes no file of the reference; vary format and wording")
    failing = {c for v in overlay.counterfactuals if v.kind == "wrong" for c in v.fails}
    for criterion in overlay.rubric:
        if criterion.route == "deterministic" and criterion.id not in failing:
            problems.append(f"deterministic criterion {criterion.id} has no wrong variant that must fail it")
    return problems

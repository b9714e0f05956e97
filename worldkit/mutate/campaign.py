"""The mutation campaign: generate a task's variants, grade each in-process, tally per criterion.

For every workspace file the reference solution writes, the table or memo generators make right
and wrong variants, and so for the body of every mail it sends to a recipient a mail check
declares claims about (its wordings and wrong statements); the do-nothing family is added. A rendering in another file format (a
workbook for a table, a word-processor or plain-text file for a memo) is a right variant only
where the request allows it: when the request does not name the file it asks for. Each variant becomes a final state — the
reference's record updates and mails replayed the way the servers would (`replay_actions`), the
reference's files written, then the variant's files (any bytes) — and is graded exactly as a run
is (`discrimination.grade_state`: the rubric's checks, semantic criteria by the offline `facts`
judge where the truth declares facts).

Per deterministic criterion the report gives: wrong variants caught / touching it, right variants
passed / graded. The campaign passes when every right variant passes every deterministic
criterion, at least `THRESHOLD` of the wrong variants touching each criterion fail it, and no
do-nothing variant passes any graded criterion. Reports are cached in-process per (overlay digest,
seed, projection manifest), so `overlay check`, `verify` and `freeze` in one process grade once.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from worldkit.mutate import cache
from worldkit.mutate.declared import declared, mail_target
from worldkit.mutate.nothing import nothing_variants
from worldkit.mutate.prose import right_memos, wrong_memos
from worldkit.mutate.tables import read_reference, right_tables, wrong_tables
from worldkit.mutate.variant import Variant, rng
from worldkit.overlay._paths import confined
from worldkit.overlay.discrimination import grade_state
from worldkit.overlay.grading import evaluate_rubric, replay_actions, seed_workspace
from worldkit.overlay.load import overlay_digest
from worldkit.overlay.models import OracleAction, Overlay

SCHEMA_VERSION = 1
MAX_PER_FAMILY = 6
"""Wrong variants kept per (file, family): one for each distinct set of criteria touched first, then
a seeded sample, so a 24-row table does not grade 24 dropped rows when a few prove the same thing."""
THRESHOLD = 0.95
"""Share of the wrong variants touching a criterion that must fail it."""

Progress = Callable[[str, int, int], None]


@dataclass
class Tally:
    """One deterministic criterion's figures."""

    criterion: str
    caught: int = 0
    touching: int = 0
    right_passed: int = 0
    right_graded: int = 0
    escaped: list[str] = field(default_factory=list)
    """Wrong variants that touch the criterion and pass it (id: detail)."""
    misfailed: list[str] = field(default_factory=list)
    """Right variants that fail it (id: why)."""

    @property
    def ok(self) -> bool:
        caught = self.touching == 0 or self.caught >= THRESHOLD * self.touching
        return caught and self.right_passed == self.right_graded

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Tally:
        return cls(data["criterion"], data["wrong_caught"], data["wrong_touching"], data["right_passed"],
                   data["right_graded"], list(data["escaped"]), list(data["right_failed"]))  # fmt: skip

    def as_json(self) -> dict[str, Any]:
        return {"criterion": self.criterion, "wrong_caught": self.caught, "wrong_touching": self.touching,
                "right_passed": self.right_passed, "right_graded": self.right_graded, "ok": self.ok,
                "escaped": self.escaped, "right_failed": self.misfailed}  # fmt: skip


@dataclass
class MutationReport:
    """What the campaign found for one task."""

    overlay: str
    seed: int
    tallies: list[Tally]
    families: dict[str, int]
    """`kind:family` → variants generated."""
    nothing_passes: list[str]
    """`variant criterion: detail` for every criterion a do-nothing variant passes."""
    unwatched: list[str]
    """Wrong variants that touch no criterion (`id: detail`): mistakes the rubric does not declare."""
    semantic: list[str]
    """Semantic criteria (outside the gate; the judge is calibrated on its own)."""

    @property
    def ok(self) -> bool:
        return all(t.ok for t in self.tallies) and not self.nothing_passes

    def failures(self) -> list[str]:
        lines = []
        for t in self.tallies:
            if t.right_passed < t.right_graded:
                lines.append(f"{t.criterion} fails {t.right_graded - t.right_passed} of {t.right_graded} right "
                             f"variant(s), e.g. {t.misfailed[0]}")  # fmt: skip
            if t.touching and t.caught < THRESHOLD * t.touching:
                lines.append(f"{t.criterion} catches {t.caught} of {t.touching} wrong variant(s) touching it "
                             f"(< {THRESHOLD:.0%}), e.g. {t.escaped[0]}")  # fmt: skip
        lines += [f"do-nothing variant passes {p}" for p in self.nothing_passes]
        return lines

    def as_json(self) -> dict[str, Any]:
        return {"schema_version": SCHEMA_VERSION, "overlay": self.overlay, "seed": self.seed, "ok": self.ok,
                "threshold": THRESHOLD, "criteria": [t.as_json() for t in self.tallies],
                "families": dict(sorted(self.families.items())), "nothing_passes": self.nothing_passes,
                "unwatched": self.unwatched, "semantic_outside_gate": self.semantic,
                "failures": self.failures()}  # fmt: skip


def report_from_json(data: dict[str, Any]) -> MutationReport:
    """A report back from `MutationReport.as_json` (the cache's payload)."""
    return MutationReport(
        overlay=data["overlay"], seed=data["seed"], tallies=[Tally.from_json(t) for t in data["criteria"]],
        families=dict(data["families"]), nothing_passes=list(data["nothing_passes"]),
        unwatched=list(data["unwatched"]), semantic=list(data["semantic_outside_gate"]),
    )  # fmt: skip


def reference_files(overlay: Overlay) -> dict[str, str]:
    """Workspace path → text the reference solution writes (the last write of each path)."""
    return {a.args["path"]: a.args["content"] for a in overlay.reference.actions if a.tool == "write_file"}


def generate(overlay: Overlay, projection: Path, seed: int = 0) -> list[Variant]:
    """Every variant of the task, in a fixed order (a pure function of the overlay, projection and seed)."""
    facts = declared(overlay)
    references = reference_files(overlay)
    variants: list[Variant] = []
    for path, text in sorted(references.items()):
        suffix = PurePosixPath(path).suffix.lower()
        table = read_reference(text) if suffix in (".csv", ".tsv") else None
        formats = PurePosixPath(path).name.casefold() not in overlay.request.casefold()
        if table is not None:
            variants += right_tables(path, table, facts.rows_of(path), seed, formats=formats)
            variants += wrong_tables(path, table, facts.rows_of(path), seed)
        elif suffix in (".md", ".txt"):
            readers = {c.id for c in overlay.rubric if c.check is not None and path in c.check.workspace_paths()}
            terse = readers <= {c.criterion for c in facts.claims_of(path)}  # what other checks read is unknown
            variants += right_memos(path, text, facts.claims_of(path), facts.rows, seed, formats=formats, terse=terse)
            variants += wrong_memos(path, text, facts.claims_of(path), seed)
    variants += _mail_variants(overlay, facts, seed)
    variants += nothing_variants(overlay, references, projection)
    return _capped(variants, seed)


MAIL_RIGHT = ("dates-", "ids-", "numbers-", "commentary", "hedged", "verbose", "table-as-prose")
"""Right wordings that apply to a mail body (file encodings and formats do not)."""


def _mail_variants(overlay: Overlay, facts: Any, seed: int) -> list[Variant]:
    """Right wordings and wrong statements of each mail the reference sends, where a mail check
    declares claims about mail to one of its recipients."""
    variants: list[Variant] = []
    for index, action in enumerate(overlay.reference.actions):
        if action.tool != "send_message" or not isinstance(action.args.get("body"), str):
            continue
        claims = [c for to in action.args.get("to") or [] for c in facts.claims_of(mail_target(str(to)))]
        if not claims:
            continue
        body, target = action.args["body"], f"mail {index}"
        made = [*right_memos(target, body, claims, [], seed, formats=False, terse=False),
                *wrong_memos(target, body, claims, seed)]  # fmt: skip
        for v in made:
            if v.kind == "right" and not v.family.startswith(MAIL_RIGHT):
                continue
            new_body = dict(v.files)[target]
            assert new_body is not None
            variants.append(Variant(family=v.family, kind=v.kind, target=target, files=(), touches=v.touches,
                                    detail=v.detail, mails=((index, new_body.decode("utf-8")),)))  # fmt: skip
    return variants


def _capped(variants: list[Variant], seed: int) -> list[Variant]:
    groups: dict[tuple[str, str], list[Variant]] = {}
    for variant in variants:
        if variant.kind == "wrong":
            groups.setdefault((variant.target, variant.family), []).append(variant)
    kept: set[int] = set()
    for (target, family), members in sorted(groups.items()):
        chosen: dict[tuple[str, ...], Variant] = {}
        for variant in members:
            chosen.setdefault(variant.touches, variant)
        picked = list(chosen.values())[:MAX_PER_FAMILY]
        rest = [v for v in members if all(v is not p for p in picked)]
        picked += rng(seed, "cap", target, family).sample(rest, min(len(rest), MAX_PER_FAMILY - len(picked)))
        kept |= {id(v) for v in picked}
    return [v for v in variants if v.kind != "wrong" or id(v) in kept]


def _state(overlay: Overlay, projection: Path, workspace: Path, variant: Variant) -> Any:
    bodies = dict(variant.mails)
    keep = [
        OracleAction(tool=a.tool, args={**a.args, "body": bodies[i]} if i in bodies else a.args)
        for i, a in enumerate(overlay.reference.actions) if a.tool != "write_file"
    ] if variant.keep_state_changes else []  # fmt: skip
    seed_workspace(overlay, workspace)
    ctx, _ = replay_actions(overlay, projection, workspace, keep)
    files: dict[str, bytes | None] = {} if variant.start_empty else {
        p: t.encode("utf-8") for p, t in reference_files(overlay).items()}  # fmt: skip
    files.update(dict(variant.files))
    for path, data in sorted(files.items()):
        target = confined(workspace, path)
        if data is None:
            target.unlink(missing_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return ctx


_CACHE: dict[tuple[str, int, str], MutationReport] = {}


def _projection_key(projection: Path) -> str:
    manifest = projection / "manifest.json"
    return hashlib.sha256(manifest.read_bytes()).hexdigest() if manifest.is_file() else str(projection.resolve())


def run_campaign(
    overlay: Overlay, projection: Path, scratch: Path, *, seed: int = 0, progress: Progress | None = None
) -> MutationReport:
    """Generate, grade and tally (module docstring); `scratch` is a folder the states are built in."""
    key = (overlay_digest(overlay), seed, _projection_key(projection))
    if key in _CACHE:
        return _CACHE[key]
    stored_key = cache.entry_key(key[0], str(seed), key[2])
    stored = cache.load(stored_key)
    if stored is not None:
        _CACHE[key] = report_from_json(stored)
        return _CACHE[key]
    variants = generate(overlay, projection, seed)
    checked = [c.id for c in overlay.rubric if c.check is not None]
    tallies = {cid: Tally(cid) for cid in checked}
    families: dict[str, int] = {}
    nothing_passes: list[str] = []
    unwatched: list[str] = []
    for number, variant in enumerate(variants):
        if progress is not None:
            progress(f"{overlay.id} {variant.family}", number, len(variants))
        families[f"{variant.kind}:{variant.family}"] = families.get(f"{variant.kind}:{variant.family}", 0) + 1
        workspace = scratch / f"v{number:04d}"
        ctx = _state(overlay, projection, workspace, variant)
        if variant.kind == "nothing":  # every graded criterion, semantic ones by the `facts` judge
            verdicts = grade_state(overlay, ctx)
        else:
            only = variant.touches if variant.kind == "wrong" else None  # a wrong variant is tallied on what it touches
            verdicts = {cid: ("pass" if r.passed else "fail", r.detail)
                        for cid, r in evaluate_rubric(overlay, ctx, only).items() if r is not None}  # fmt: skip
        shutil.rmtree(workspace, ignore_errors=True)
        label = f"{variant.id} ({variant.detail})"
        if variant.kind == "right":
            for cid in checked:
                tallies[cid].right_graded += 1
                verdict, detail = verdicts[cid]
                if verdict == "pass":
                    tallies[cid].right_passed += 1
                else:
                    tallies[cid].misfailed.append(f"{label}: {detail}")
        elif variant.kind == "wrong":
            if not variant.touches:
                unwatched.append(label)
            for cid in variant.touches:
                if cid not in tallies:
                    continue
                tallies[cid].touching += 1
                if verdicts[cid][0] == "fail":
                    tallies[cid].caught += 1
                else:
                    tallies[cid].escaped.append(label)
        else:
            nothing_passes += [f"{variant.family} {cid}: {detail}" for cid, (verdict, detail) in verdicts.items()
                               if verdict == "pass"]  # fmt: skip
    if progress is not None:
        progress(overlay.id, len(variants), len(variants))
    semantic = [c.id for c in overlay.rubric if c.check is None]
    report = MutationReport(overlay.id, seed, [tallies[c] for c in checked], families, nothing_passes, unwatched, semantic)
    _CACHE[key] = report
    cache.store(stored_key, report.as_json())
    return report

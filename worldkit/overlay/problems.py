"""`overlay check`: every problem of an overlay against its projection, with locator and fix.

The overlay must already be valid YAML for its model (otherwise loading raises InvalidOverlay,
exit 3). Then the projection is materialized in a scratch folder and every rule below is
checked; all problems are reported, not just the first. Errors fail the check; warnings do not.

    code                          severity  what
    fingerprint-stale             error     the projection's fingerprint differs from the pin
    surface-unavailable           error     a listed surface is not in the seat's tool bundle
    permitted-surface-missing     error     a permitted change needs a surface not listed
    evidence-missing              error     an evidence locator is not in the candidate view
    evidence-anchor-missing       error     an evidence anchor does not occur in its item
    evidence-field-missing        error     a record evidence field is not in the record
    evidence-unknown-criterion    error     evidence is mapped to a criterion id not in the rubric
    criterion-without-evidence    error     a criterion has no sufficient evidence set
    curated-missing               error     a curated path is not in the projection
    curated-bytes-differ          error     a curated file's pinned sha256 differs from the projection
    curated-duplicate             warning   a curated packet lists a path twice
    packet-incomplete             warning   a packet holds no complete evidence set for a criterion
    curation-misstated            error     a packet's recorded first submission lacks other criteria than it says
    deliverable-outside-workspace error     the deliverable path is absolute or leaves the workspace
    deliverable-not-writable      error     no permitted change lets the seat produce the deliverable
    check-path-not-writable       error     a check reads a workspace path the seat cannot write
    reference-file-missing        error     a reference file's path does not exist beside the overlay
    verifier-leak                 error     verifier bytes on the candidate side (see `leaks.py`)
    overlap-unused                warning   a reviewed overlap matches no verifier item on the candidate side
    reference-missing             error     the reference solution has no state-changing actions
    reference-action-refused      error     an oracle action is not permitted to the seat
    reference-action-target-missing error   an oracle read targets an item not in the projection
    reference-prohibited          error     an oracle action makes a prohibited change
    reference-fails               error     a deterministic criterion fails on the reference solution
    trivial-pass                  error     a deterministic criterion passes with nothing done
    counterfactual-misgraded      error     a counterfactual deliverable does not grade as declared
    counterfactual-invalid        error     a counterfactual cannot be built (edit text not found, …)
    counterfactual-missing        error     too few counterfactuals (warning when the overlay has none)
    truth-source-missing          warning   a truth/reference source pointer is not in the view
    placeholder-left              error     a text field still holds the scaffold marker `TODO`
"""

from __future__ import annotations

import json
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from worldkit.errors import InvalidOverlay, PathRefused
from worldkit.materialize import materialize
from worldkit.overlay._paths import (
    PATH_CONVENTIONS,
    projection_hint,
    relative_problem,
    tool_hint,
    workspace_hint,
)
from worldkit.overlay.candidate_files import request_bytes, tool_config_bytes
from worldkit.overlay.discrimination import REFERENCE, discriminate
from worldkit.overlay.grading import (
    evaluate_rubric,
    replay_actions,
    seed_workspace,
    tool_config_for,
)
from worldkit.overlay.leaks import find_leaks, verifier_items
from worldkit.overlay.load import load_overlay, overlay_fields, overlay_world, reference_bytes
from worldkit.overlay.models import EvidenceItem, Overlay, SourcePointer
from worldkit.overlay.view import ProjectionView

Severity = Literal["error", "warning"]

PLACEHOLDER = "TODO"
"""The marker `worldkit overlay new` leaves where the author must write something: an overlay whose
text fields still hold it (as a word, upper case) does not check."""

_PLACEHOLDER_WORD = re.compile(rf"(?<![A-Za-z0-9_]){PLACEHOLDER}(?![A-Za-z0-9_])")


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an overlay: what, where (a locator into the overlay), how to fix it."""

    code: str
    severity: Severity
    locator: str
    message: str
    fix: str

    def as_json(self) -> dict[str, str]:
        return {"code": self.code, "severity": self.severity, "locator": self.locator,
                "message": self.message, "fix": self.fix}  # fmt: skip

    def line(self) -> str:
        return f"{self.severity:<7} {self.code:<30} {self.locator}: {self.message}. Fix: {self.fix}"


@dataclass(frozen=True)
class CheckReport:
    """The outcome of `check_overlay`."""

    overlay: str
    source: str | None
    pinned_fingerprint: str
    fingerprint: str
    problems: list[Problem]

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def ok(self) -> bool:
        return not self.errors

    def as_json(self) -> dict[str, Any]:
        return {
            "overlay": self.overlay,
            "source": self.source,
            "ok": self.ok,
            "pinned_fingerprint": self.pinned_fingerprint,
            "fingerprint": self.fingerprint,
            "errors": len(self.errors),
            "warnings": len(self.problems) - len(self.errors),
            "problems": [p.as_json() for p in self.problems],
        }


def check_overlay(overlay: Overlay | str | Path) -> CheckReport:
    """Check an overlay against a fresh materialization of its projection (see module docstring)."""
    model = overlay if isinstance(overlay, Overlay) else load_overlay(overlay)
    world = overlay_world(model)
    with tempfile.TemporaryDirectory(prefix="worldkit-overlay-check-") as scratch:
        root = Path(scratch)
        with overlay_fields(model):
            result = materialize(world, model.rev, model.date, model.seat, root / "projection")
        return check_materialized(model, result, root)


def check_materialized(model: Overlay, result: Any, scratch: Path) -> CheckReport:
    """Every problem of `model` against an existing materialization of its projection (`result`,
    a `ProjectionResult`); `scratch` is an empty folder the reference solution is replayed in.
    `overlay apply` and `run` call this on the projection they stage, so they refuse exactly what
    `overlay check` rejects."""
    root = Path(scratch)
    view = ProjectionView(result.out, result.manifest)
    problems: list[Problem] = []
    if result.fingerprint != model.pinned_fingerprint:
        problems.append(Problem(
            "fingerprint-stale", "error", "pinned_fingerprint",
            f"pinned {model.pinned_fingerprint} but the projection of {model.rev} {model.date} {model.seat} "
            f"is {result.fingerprint}",
            "review the overlay against the new projection, then run `worldkit overlay pin` on it",
        ))  # fmt: skip
    problems += _surfaces(model, view)
    problems += _evidence(model, view)
    problems += _curated(model, view)
    problems += _deliverable(model)
    references, ref_problems = _references(model)
    problems += ref_problems
    problems += _leaks(model, references, view)
    problems += _reference_solution(model, view, root)
    problems += _counterfactuals(model, view, root / "counterfactuals")
    problems += _sources(model, view)
    problems += placeholder_problems(model)
    return CheckReport(
        overlay=model.id,
        source=str(model.source) if model.source else None,
        pinned_fingerprint=model.pinned_fingerprint,
        fingerprint=result.fingerprint,
        problems=problems,
    )


def placeholder_problems(model: Overlay) -> list[Problem]:
    """A `placeholder-left` error for every text field of the overlay that holds the marker."""
    found: list[Problem] = []

    def walk(value: Any, where: str) -> None:
        if isinstance(value, str):
            if _PLACEHOLDER_WORD.search(value):
                line = next(x for x in value.splitlines() if _PLACEHOLDER_WORD.search(x)).strip()
                found.append(Problem(
                    "placeholder-left", "error", where,
                    f"still holds the placeholder {PLACEHOLDER} ({line[:80]!r})",
                    f"replace the {PLACEHOLDER} with the real text (the scaffold's markers must all go)",
                ))  # fmt: skip
        elif isinstance(value, dict):
            for key, item in value.items():
                if key == "rules" and where.endswith(".check"):
                    continue  # the prohibited rules a `no_prohibited_change` check carries: reported at `prohibited`
                walk(item, f"{where}.{key}" if where else str(key))
        elif isinstance(value, list):
            for index, item in enumerate(value):
                walk(item, f"{where}[{index}]")

    walk(model.model_dump(mode="json", exclude={"pinned_fingerprint"}), "")
    return found


def _surfaces(model: Overlay, view: ProjectionView) -> list[Problem]:
    bundle = json.loads(view.read("tools.json"))
    served = {server["surface"] for server in bundle.get("servers", [])}
    problems = [
        Problem("surface-unavailable", "error", f"surfaces[{i}]",
                f"surface {s!r} is not in the seat's tool bundle (it has {', '.join(sorted(served)) or 'none'})",
                f"remove {s!r} from `surfaces` or choose a seat that has it")  # fmt: skip
        for i, s in enumerate(model.surfaces)
        if s not in served
    ]
    needs = {"write_file": "files", "update_record": "records", "send_message": "communication"}
    for index, change in enumerate(model.permitted):
        if needs[change.kind] not in model.surfaces:
            problems.append(Problem(
                "permitted-surface-missing", "error", f"permitted[{index}]",
                f"{change.kind} needs the {needs[change.kind]!r} surface, which `surfaces` does not list",
                f"add {needs[change.kind]!r} to `surfaces` or drop the permitted change",
            ))  # fmt: skip
    return problems


def _evidence(model: Overlay, view: ProjectionView) -> list[Problem]:
    problems: list[Problem] = []
    rubric_ids = {c.id for c in model.rubric}
    for criterion_id in sorted(set(model.evidence) - rubric_ids):
        problems.append(Problem(
            "evidence-unknown-criterion", "error", f"evidence.{criterion_id}",
            f"evidence is mapped to {criterion_id!r}, which is not a rubric criterion",
            f"rename the key to one of {', '.join(sorted(rubric_ids))} or remove it",
        ))  # fmt: skip
    for criterion in model.rubric:
        if not model.evidence.get(criterion.id):
            problems.append(Problem(
                "criterion-without-evidence", "error", f"rubric[{criterion.id}]",
                f"criterion {criterion.id} has no sufficient evidence set",
                f"add `evidence: {{{criterion.id}: [[{{surface: …, locator: …}}]]}}` naming the candidate-visible "
                "items that suffice to meet it",
            ))  # fmt: skip
    for criterion_id, sets in sorted(model.evidence.items()):
        for s_index, members in enumerate(sets):
            for m_index, item in enumerate(members):
                locator = f"evidence.{criterion_id}[{s_index}][{m_index}]"
                _, found = view.resolve(item)
                for code, message in found:
                    fix = {
                        "evidence-missing": "point the locator at an item the seat can see on that date "
                        "(see `worldkit materialize … --json` / the projection's manifest.json)"
                        + (f"; {projection_hint(item.locator, view.entries)}" if item.surface == "files" else ""),
                        "evidence-anchor-missing": "copy the anchor verbatim from the item, or drop it",
                        "evidence-field-missing": "name fields the record has, or drop `fields`",
                    }[code]
                    problems.append(Problem(code, "error", locator, message, fix))
    return problems


def _covered(members: list[EvidenceItem], view: ProjectionView, paths: set[str]) -> bool:
    for item in members:
        path, _ = view.path_of(item)
        if path is None or path not in paths:
            return False
    return True


def _curated(model: Overlay, view: ProjectionView) -> list[Problem]:
    problems: list[Problem] = []
    for name in sorted(model.curated):
        items = model.packet(name)
        seen: set[str] = set()
        for index, item in enumerate(items):
            locator = f"curated.{name}[{index}]"
            if item.path in seen:
                problems.append(Problem("curated-duplicate", "warning", locator, f"{item.path} is listed twice",
                                        "remove the repeated entry"))  # fmt: skip
            seen.add(item.path)
            entry = view.entries.get(item.path)
            if entry is None:
                problems.append(Problem(
                    "curated-missing", "error", locator, f"{item.path} is not in the projection",
                    "a packet only selects existing projection files (no additions or renames); fix the path or "
                    f"remove it; {projection_hint(item.path, view.entries)}",
                ))  # fmt: skip
            elif item.sha256 is not None and item.sha256 != entry.sha256:
                problems.append(Problem(
                    "curated-bytes-differ", "error", locator,
                    f"{item.path} has sha256 {entry.sha256} in the projection, not the pinned {item.sha256}",
                    "have the curator review the current file, then update or drop the pinned sha256",
                ))  # fmt: skip
        for criterion in model.rubric:
            sets = model.evidence.get(criterion.id, [])
            if sets and not any(_covered(members, view, seen) for members in sets):
                problems.append(Problem(
                    "packet-incomplete", "warning", f"curated.{name}",
                    f"packet {name!r} holds no complete evidence set for criterion {criterion.id}",
                    "return the packet to its curator, or record that the criterion is unsupported under it",
                ))  # fmt: skip
        if name in model.curation:
            problems.extend(_first_submission(model, view, name))
    return problems


def _first_submission(model: Overlay, view: ProjectionView, name: str) -> list[Problem]:
    """The recorded first submission: its paths exist, and its missing criteria are the ones it lacks."""
    record = model.curation[name]
    first = model.first_submission(name)
    problems = [
        Problem("curated-missing", "error", f"curation.{name}.first_submitted[{index}]", f"{path} is not in the projection",
                f"a packet only selects existing projection files; {projection_hint(path, view.entries)}")
        for index, path in enumerate(first) if path not in view.entries
    ]  # fmt: skip
    paths = set(first)
    missing = [c.id for c in model.rubric
               if model.evidence.get(c.id) and not any(_covered(members, view, paths) for members in model.evidence[c.id])]
    if sorted(missing) != sorted(record.missing_criteria):
        problems.append(Problem(
            "curation-misstated", "error", f"curation.{name}.missing_criteria",
            f"the first submission of packet {name!r} lacks a complete evidence set for "
            f"{', '.join(missing) or 'no criterion'}, but the record says {', '.join(sorted(record.missing_criteria)) or 'none'}",
            f"set missing_criteria to [{', '.join(missing)}] (what the completeness review found)",
        ))  # fmt: skip
    return problems


def _deliverable(model: Overlay) -> list[Problem]:
    problems: list[Problem] = []
    config = tool_config_for(model, "")
    seeded = {seed.path for seed in model.workspace_seed}
    path = model.deliverable.path
    if path is not None:
        why = relative_problem(path)
        if why:
            problems.append(Problem(
                "deliverable-outside-workspace", "error", "deliverable.path",
                f"{path!r} {why}, so it is outside the writable workspace",
                f"use a path relative to the workspace, e.g. `report.md` or `out/report.md`; {PATH_CONVENTIONS}",
            ))  # fmt: skip
        elif "files" not in model.surfaces or not config.may_write(path):
            problems.append(Problem(
                "deliverable-not-writable", "error", "deliverable.path",
                f"no permitted write_file change covers {path!r}" + ("" if "files" in model.surfaces else
                                                                     " and the files surface is not listed"),
                f"add `{{kind: write_file, paths: [{path}]}}` to `permitted` (and `files` to `surfaces`); "
                + workspace_hint(path),
            ))  # fmt: skip
    change = model.deliverable.state_change
    if change is not None and not any(p.kind == change.kind for p in model.permitted):
        problems.append(Problem(
            "deliverable-not-writable", "error", "deliverable.state_change",
            f"the deliverable is a {change.kind} change but no {change.kind} change is permitted",
            f"add a `{{kind: {change.kind}, …}}` entry to `permitted` that allows it",
        ))  # fmt: skip
    for criterion in model.rubric:
        for workspace_path in criterion.check.workspace_paths() if criterion.check else []:
            if relative_problem(workspace_path) or workspace_path in seeded:
                continue
            if "files" not in model.surfaces or not config.may_write(workspace_path):
                problems.append(Problem(
                    "check-path-not-writable", "error", f"rubric[{criterion.id}].check.path",
                    f"the check reads workspace/{workspace_path}, which no permitted change lets the seat write",
                    f"point the check at the deliverable path or permit writing that path; {workspace_hint(workspace_path)}",
                ))  # fmt: skip
    return problems


def _references(model: Overlay) -> tuple[dict[str, bytes], list[Problem]]:
    found: dict[str, bytes] = {}
    problems: list[Problem] = []
    for ref in model.reference_files:
        single = model.model_copy(update={"reference_files": [ref]})
        single._source = model.source
        try:
            found.update(reference_bytes(single))
        except (InvalidOverlay, PathRefused) as error:
            if ref.document is not None:
                message, fix = error.message, "name one of the world's verifier_only documents in `document`"
            elif model.source:
                message, fix = f"{ref.path} does not exist beside the overlay", "add the file (relative to the overlay YAML's folder) or fix `path`"
            else:
                message = f"{ref.path} cannot be read: the overlay was not loaded from a file"
                fix = "add the file (relative to the overlay YAML's folder) or fix `path`"
            problems.append(Problem("reference-file-missing", "error", f"reference_files[{ref.name}]", message, fix))
    return found, problems


def _candidate_extras(model: Overlay, view: ProjectionView) -> list[tuple[str, bytes]]:
    extras = [("request.md", request_bytes(model)), ("tool-config.json", tool_config_bytes(model, view.manifest))]
    extras += [(f"workspace/{s.path}", s.text.encode("utf-8")) for s in model.workspace_seed]
    return extras


def _leaks(model: Overlay, references: dict[str, bytes], view: ProjectionView) -> list[Problem]:
    candidate = [(f"projection/{p}", view.read(p)) for p in sorted(view.entries)]
    candidate += _candidate_extras(model, view)
    reviewed = [o.sha256 for o in model.reviewed_overlaps]
    items = verifier_items(model, references)
    leaks = find_leaks(items, candidate, reviewed)
    problems = [
        Problem(
            "verifier-leak", "error", leak.item,
            f"{'identical bytes' if leak.rule == 'bytes' else 'the text ' + repr(leak.excerpt + '…')} found on the "
            f"candidate side in {leak.candidate_path} (item sha256 {leak.item_sha256}"
            + (f", paragraph sha256 {leak.unit_sha256}" if leak.rule == "text" else "") + ")",
            "remove the verifier text from the candidate side (request, seeds or world), or, if the overlap is "
            "intended, add `{sha256: …, rationale: …}` to `reviewed_overlaps`",
        )  # fmt: skip
        for leak in leaks
    ]
    all_leaks = find_leaks(items, candidate, ())
    used = {leak.item_sha256 for leak in all_leaks} | {leak.unit_sha256 for leak in all_leaks}
    for index, overlap in enumerate(model.reviewed_overlaps):
        if overlap.sha256 not in used:
            problems.append(Problem(
                "overlap-unused", "warning", f"reviewed_overlaps[{index}]",
                f"no verifier item with sha256 {overlap.sha256} appears on the candidate side",
                "remove the stale entry",
            ))  # fmt: skip
    return problems


def _action_target_missing(tool: str, args: dict[str, Any], view: ProjectionView) -> str | None:
    if tool == "read_file" and f"files/{args['path']}" not in view.entries:
        return f"read_file {args['path']!r}: files/{args['path']} is not in the projection; {tool_hint(args['path'], view.entries)}"
    if tool == "write_file" and (args["path"].startswith("workspace/") or args["path"].startswith("files/")):
        return f"write_file {args['path']!r}: {workspace_hint(args['path'])}"
    if tool == "get_record" and view.path_of(EvidenceItem(surface="records", locator=args["id"]))[0] is None:
        return f"get_record {args['id']!r}: not in the projection"
    if tool == "read_message":
        as_mail = view.path_of(EvidenceItem(surface="mail", locator=args["id"]))[0]
        in_chat = any(
            any(m.get("id") == args["id"] for m in view.chat_messages(p)) for p in view.entries if p.startswith("chat/")
        )
        if as_mail is None and not in_chat:
            return f"read_message {args['id']!r}: not in the projection"
    return None


def _reference_solution(model: Overlay, view: ProjectionView, scratch: Path) -> list[Problem]:
    problems: list[Problem] = []
    actions = model.reference.actions
    for index, action in enumerate(actions):
        why = _action_target_missing(action.tool, action.args, view)
        if why:
            problems.append(Problem("reference-action-target-missing", "error", f"reference.actions[{index}]", why,
                                    "point the oracle's read at an item the seat can see"))  # fmt: skip
    empty = scratch / "nothing-done"
    seed_workspace(model, empty)
    untouched, _ = replay_actions(model, view.root, empty, [])
    deterministic = [c for c in model.rubric if c.check is not None]
    nothing = evaluate_rubric(model, untouched)
    for criterion in deterministic:
        result = nothing[criterion.id]
        if result is not None and result.passed:
            problems.append(Problem(
                "trivial-pass", "error", f"rubric[{criterion.id}]",
                f"passes when nothing is done ({result.detail})",
                "tighten the check so that it states what the deliverable must contain; an absence "
                "(no prohibited change, nothing sent) is credited only beside content",
            ))  # fmt: skip
    if not any(a.tool in ("write_file", "update_record", "send_message") for a in actions):
        if deterministic:
            problems.append(Problem(
                "reference-missing", "error", "reference.actions",
                "the reference solution makes no change, so the rubric cannot be proven against it",
                "add the oracle's tool calls, e.g. `{tool: write_file, args: {path: …, content: …}}`",
            ))  # fmt: skip
        return problems
    workspace = scratch / "reference"
    seed_workspace(model, workspace)
    ctx, refusals = replay_actions(model, view.root, workspace, actions)
    for refusal in refusals:
        locator, _, why = refusal.partition(" ")
        problems.append(Problem("reference-action-refused", "error", f"reference.{locator}", why,
                                "permit the change in `permitted`, or change the oracle's action"))  # fmt: skip
    for index, event in enumerate(ctx.events or []):
        if event["outcome"] != "ok":
            continue
        for rule in model.prohibited:
            if rule.matches(event["tool"], event["arguments"]):
                problems.append(Problem(
                    "reference-prohibited", "error", f"reference.actions[{index}]",
                    f"the oracle's {event['tool']} is prohibited: {rule.label()}",
                    "change the oracle's action or the prohibited rule",
                ))  # fmt: skip
    graded = evaluate_rubric(model, ctx)
    for criterion in deterministic:
        result = graded[criterion.id]
        if result is None or not result.passed:
            problems.append(Problem(
                "reference-fails", "error", f"rubric[{criterion.id}]",
                f"fails on the reference solution: {result.detail if result else 'no check'}",
                "fix the check or the reference actions so that a correct submission passes",
            ))  # fmt: skip
    return problems


def _counterfactuals(model: Overlay, view: ProjectionView, scratch: Path) -> list[Problem]:
    if not model.reference.actions:
        return []
    scratch.mkdir(parents=True, exist_ok=True)
    found = discriminate(model, view.root, scratch)
    problems = [
        Problem("counterfactual-misgraded", "error", f"counterfactuals[{m.variant}]", m.line(),
                "fix the criterion's check (or the truth facts of a semantic criterion) so that it grades what it "
                "states, or fix the variant if it is not what its kind says")  # fmt: skip
        for m in found.declared_misgrades(model)
    ]
    problems += [
        Problem("counterfactual-invalid", "error", f"counterfactuals[{variant}]", why,
                "make the edit's `old` text occur in the base file, or permit the action")  # fmt: skip
        for variant, why in found.invalid
        if variant != REFERENCE  # the reference's own refusals are `reference-action-refused`
    ]
    severity: Severity = "error" if model.counterfactuals else "warning"
    problems += [
        Problem("counterfactual-missing", severity, "counterfactuals", why,
                "add correct variants (another format and wording) and wrong variants (the mistakes an employee "
                "would make) under `counterfactuals`")  # fmt: skip
        for why in found.coverage
    ]
    return problems


def _sources(model: Overlay, view: ProjectionView) -> list[Problem]:
    problems: list[Problem] = []
    pointers: list[tuple[str, SourcePointer]] = [(f"truth.sources[{i}]", p) for i, p in enumerate(model.truth.sources)]
    pointers += [(f"reference.sources[{i}]", p) for i, p in enumerate(model.reference.sources)]
    for locator, pointer in pointers:
        if pointer.surface == "world":
            continue
        if pointer.surface == "reference":
            missing = pointer.locator not in {r.name for r in model.reference_files}
        elif pointer.surface == "files":
            missing = pointer.locator not in view.entries
        else:
            item = EvidenceItem(surface=pointer.surface, locator=pointer.locator)
            missing = view.path_of(item)[0] is None
        if missing:
            problems.append(Problem(
                "truth-source-missing", "warning", locator,
                f"{pointer.surface} {pointer.locator!r} is not in the seat's view or the reference files",
                "use surface `world` for verifier-only sources, or fix the locator"
                + (f"; {projection_hint(pointer.locator, view.entries)}" if pointer.surface == "files" else ""),
            ))  # fmt: skip
    return problems

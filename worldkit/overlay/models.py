"""The task overlay: the fields of WorkWorlds Table A1 laid on one fixed projection.

An overlay is a YAML file under `overlays/<world>/` (either `<id>.yaml`, or `<id>/overlay.yaml`
for an overlay that carries reference files beside it). It never changes the projection; it
names one (world, rev, date, seat), pins that projection's fingerprint, and adds the request,
what the seat may and may not change, the deliverable, and everything the grader needs.

Candidate side (what the agent gets): `request`, `surfaces`, `permitted`, `workspace_seed`, and
the projection (or one `curated` packet of it). Everything else is verifier side: `rubric`,
`evidence`, `prohibited`, `reference`, `reference_files`, `truth`, `reviewed_overlaps`.

Models only: this module validates what can be decided from the YAML alone (types, unique ids,
a check on every deterministic criterion, tool arguments of reference actions). What needs the
projection (locators exist, bytes match, no verifier byte leaks) is `overlay check`'s job.
This module never touches the filesystem.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, Literal

from pydantic import (
    Field,
    PrivateAttr,
    StringConstraints,
    field_validator,
    model_validator,
)

from worldkit._model import Model
from worldkit.overlay._paths import PATH_CONVENTIONS, check_relative
from worldkit.overlay.changes import ChangeSpec, ProhibitedChange
from worldkit.overlay.checks import CheckField
from worldkit.overlay.claims import Claim
from worldkit.overlay.toolconfig import PermittedChange
from worldkit.tools.specs import TOOLS_BY_NAME
from worldkit.world.models import Id

OVERLAY_SCHEMA_VERSION = 1

Sha256 = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
"""A lowercase hex SHA-256 digest."""

PacketName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", max_length=80)]
"""A curated packet's name, used as `--condition curated:NAME`."""

Surface = Literal["files", "records", "communication"]
"""A tool surface a seat can be served (see `worldkit.tools.specs.SURFACES`)."""

EvidenceSurface = Literal["files", "records", "mail", "chat"]
"""Where an evidence item lives in the projection."""


# --- evidence ---------------------------------------------------------------------------------


class EvidenceItem(Model):
    """One member of a sufficient evidence set: an item of the candidate view."""

    surface: EvidenceSurface
    """`files`, `records`, `mail` or `chat`."""
    locator: str = Field(min_length=1)
    """files: the projection path (`files/SiteShare/SOPs/…`); records: the record id; mail: the
    message id; chat: `<channel>` (the whole channel log) or `<channel>#<message id>`."""
    anchor: str | None = None
    """Optional frozen content anchor: text that occurs in the item's bytes and that a read or
    search must return for the access to count (checked by `overlay check`)."""
    fields: list[str] = Field(default_factory=list)
    """records only: names in the record's `fields` (e.g. `assay_pct`) or top-level keys (e.g.
    `status`) that a `get_record` must return for the access to count."""

    @model_validator(mode="after")
    def _fields_only_for_records(self) -> EvidenceItem:
        if self.fields and self.surface != "records":
            raise ValueError("`fields` is only meaningful for the records surface; remove it")
        if self.surface == "files" and not self.locator.startswith("files/"):
            guess = self.locator.lstrip("/")
            raise ValueError(
                f"a files locator is a projection path starting with `files/` (got {self.locator!r}; did you mean "
                f"'files/{guess}'?); {PATH_CONVENTIONS}"
            )
        return self


EvidenceSet = Annotated[list[EvidenceItem], Field(min_length=1)]
"""A sufficient evidence set: access to every member is enough to meet the criterion."""


class SourcePointer(Model):
    """Where a truth fact or a reference answer comes from (may point outside the seat's view)."""

    surface: Literal["files", "records", "mail", "chat", "world", "reference"]
    """Projection surfaces as in `EvidenceItem`; `world`: a world entity id (e.g. a verifier-only
    document); `reference`: the name of one of the overlay's `reference_files`."""
    locator: str = Field(min_length=1)
    """Locator in that surface's convention."""
    note: str = ""
    """What the source establishes."""


# --- deliverable, rubric ----------------------------------------------------------------------


class Deliverable(Model):
    """What constitutes the submission: a file in the workspace and/or a state change."""

    path: str | None = None
    """Path of the deliverable file, relative to the candidate's `workspace/` (`overlay check`
    reports a path outside it, or one no permitted change lets the seat write)."""
    state_change: ChangeSpec | None = None
    """A state change that is (part of) the submission, e.g. a mail sent or a record comment."""
    description: str = ""
    """What the deliverable is, in words."""

    @model_validator(mode="after")
    def _something_delivered(self) -> Deliverable:
        if self.path is None and self.state_change is None:
            raise ValueError("a deliverable needs a `path`, a `state_change`, or both")
        return self


class Criterion(Model):
    """One rubric criterion, graded after the run on the captured final state."""

    id: Id
    """Criterion id, unique in the overlay (e.g. `C1`)."""
    text: str = Field(min_length=1)
    """What the work must achieve, as a grader reads it."""
    route: Literal["deterministic", "semantic"]
    """`deterministic`: the `check` decides; `semantic`: a judge decides from `text` and `guidance`."""
    check: CheckField | None = None
    """For deterministic criteria: the declarative check (see `worldkit.overlay.checks`)."""
    guidance: str = ""
    """For semantic criteria: source-grounded notes for the judge."""

    @model_validator(mode="after")
    def _route_and_check_agree(self) -> Criterion:
        if self.route == "deterministic" and self.check is None:
            raise ValueError("a deterministic criterion needs a `check`")
        if self.route == "semantic" and self.check is not None:
            raise ValueError("a semantic criterion has no `check`; use `guidance` for the judge")
        return self


# --- verifier-side material --------------------------------------------------------------------


class OracleAction(Model):
    """One tool call of the reference (oracle) solution."""

    tool: str
    """Tool name as served (`read_file`, `write_file`, `update_record`, `send_message`, …)."""
    args: dict[str, Any] = Field(default_factory=dict)
    """The call's arguments, validated against the tool's schema."""

    @model_validator(mode="after")
    def _valid_call(self) -> OracleAction:
        spec = TOOLS_BY_NAME.get(self.tool)
        if spec is None:
            raise ValueError(f"unknown tool {self.tool!r}; use one of {', '.join(sorted(TOOLS_BY_NAME))}")
        spec.args.model_validate(self.args)
        return self


class ReferenceSolution(Model):
    """Verifier side: what a correct submission looks like and how an oracle agent produces it."""

    answer: str | None = None
    """The reference deliverable text (markdown), for graders and judges."""
    answers: dict[str, Any] = Field(default_factory=dict)
    """Structured expected answers (e.g. criterion id → expected value)."""
    sources: list[SourcePointer] = Field(default_factory=list)
    """What the reference answer rests on."""
    actions: list[OracleAction] = Field(default_factory=list)
    """The tool calls an oracle agent performs, in order. `overlay check` replays the
    state-changing ones and requires every deterministic criterion to pass on the result."""


class ReferenceFile(Model):
    """A verifier-only file: inline `text`, `path` to a file inside the overlay's folder, or
    `document`, the id of one of the world's `verifier_only` documents."""

    name: str
    """Relative path under `verifier/reference/files/` in the package."""
    text: str | None = None
    """Inline content (exclusive with `path` and `document`)."""
    path: str | None = None
    """A file relative to the overlay YAML's folder (exclusive with `text` and `document`)."""
    document: Id | None = None
    """The id of a `verifier_only: true` document of the overlay's world (exclusive with `text`
    and `path`): its bytes as the world renders it at the overlay's revision, as of the later of
    the task date and the document's own `visible_from` (so a later label or review can be
    graded against while the seat never sees it)."""
    description: str = ""
    """What the file is for."""

    @model_validator(mode="after")
    def _one_source(self) -> ReferenceFile:
        if sum(x is not None for x in (self.text, self.path, self.document)) != 1:
            raise ValueError("a reference file needs exactly one of `text`, `path` or `document`")
        check_relative(self.name, "name")
        if self.path is not None:
            check_relative(self.path, "path")
        return self


class Fact(Model):
    """A fact (or an unsafe claim) as the `facts` judge finds it: any one of its alternatives."""

    says: str = Field(min_length=1)
    """The fact in words (reported with the verdict)."""
    any: list[Claim] = Field(min_length=1)
    """Alternative ways of stating it; one found in any deliverable text is enough (each is a
    claim: terms within one sentence by default, see `worldkit.overlay.claims`)."""


class CriterionFacts(Model):
    """What the `facts` judge requires of a semantic criterion."""

    required: list[Fact] = Field(default_factory=list)
    """Facts the deliverable must state (all of them)."""
    unsafe: list[Fact] = Field(default_factory=list)
    """Unsafe or wrong claims; stating any of them fails the criterion."""

    @model_validator(mode="after")
    def _something(self) -> CriterionFacts:
        if not self.required and not self.unsafe:
            raise ValueError("give `required` facts and/or `unsafe` claims")
        return self


class Truth(Model):
    """The truth specification (WorkWorlds §C.2): no points, no required prose, no hints."""

    sources: list[SourcePointer] = Field(default_factory=list)
    """Source pointers."""
    facts: list[str] = Field(default_factory=list)
    """Facts that must remain stable."""
    unsafe_claims: list[str] = Field(default_factory=list)
    """Unsupported claims that would be unsafe to make."""
    adjudication: list[str] = Field(default_factory=list)
    """Questions that require professional adjudication."""
    criteria: dict[str, CriterionFacts] = Field(default_factory=dict)
    """Semantic criterion id → the required facts and unsafe claims the offline `facts` judge
    grades it by (`worldkit.overlay.facts`)."""


class ReviewedOverlap(Model):
    """A verifier item deliberately also present on the candidate side, reviewed by a person."""

    sha256: Sha256
    """Digest of the overlapping verifier item (its bytes, or a normalized paragraph of it, as
    reported by `overlay check`)."""
    rationale: str = Field(min_length=1)
    """Why the overlap is intended and harmless."""
    path: str | None = None
    """Where the item shows on the candidate side (informative)."""


class PacketItem(Model):
    """A projection path in a curated packet, optionally pinned to its bytes."""

    path: str
    """Projection path (`files/…`, `records/<system>/<id>.json`, `mail/<id>.json`, `chat/<c>.jsonl`)."""
    sha256: Sha256 | None = None
    """If given, the file's bytes in the projection must have this digest."""


class Curation(Model):
    """How one curated packet came about: as its curator first submitted it, and whether the
    completeness review sent it back (the packet under `curated` is then the revised one)."""

    revised: bool = False
    """The completeness review returned the packet to its curator, who revised it."""
    first_submitted: list[str] | None = None
    """Projection paths of the packet as first submitted; required when `revised`, omitted (the same
    as the packet) when not."""
    missing_criteria: list[str] = Field(default_factory=list)
    """Criteria the first submission held no complete evidence set for, as the review found;
    `overlay check` recomputes them from the evidence map (`curation-misstated`)."""


class SeedFile(Model):
    """A file placed in the writable workspace before the run (candidate-visible)."""

    path: str
    """Path relative to `workspace/`."""
    text: str
    """Content."""

    @field_validator("path")
    @classmethod
    def _confined(cls, value: str) -> str:
        check_relative(value, "path")
        return value


class TextEdit(Model):
    """Replace text in a file of the counterfactual's base workspace."""

    path: str
    """Workspace path."""
    old: str = Field(min_length=1)
    """Text that must occur in the base file (otherwise the counterfactual is invalid)."""
    new: str
    """Replacement."""
    count: int = Field(0, ge=0)
    """Occurrences to replace (0: all)."""


class FileForm(Model):
    """How a counterfactual file is written to disk (a spreadsheet export, say)."""

    bom: bool = False
    """Start with a UTF-8 byte-order mark."""
    newline: Literal["lf", "crlf", "cr"] = "lf"
    """Line ends."""


class Counterfactual(Model):
    """A counterfactual deliverable (verifier side): a final state that must grade as declared.

    It starts from the reference solution's final state (`base: reference`) or from nothing done
    (`base: nothing`), replaces or edits workspace files, and may drop or add state-changing
    actions. A `correct` variant must pass every criterion (semantic ones by the `facts` judge);
    a `wrong` one must fail each criterion in `fails` (and pass those in `passes`)."""

    id: Id
    """Variant id, unique in the overlay."""
    kind: Literal["correct", "wrong"]
    """`correct` (a right answer in another format or wording) or `wrong` (a plausible mistake)."""
    description: str = Field(min_length=1)
    """What the variant is, as a reviewer reads it (for a wrong one: the mistake)."""
    base: Literal["reference", "nothing"] = "reference"
    """The final state it starts from."""
    files: dict[str, str] = Field(default_factory=dict)
    """Workspace path → full new text (replaces the base's file; the base's write of it is dropped)."""
    edits: list[TextEdit] = Field(default_factory=list)
    """Text replacements applied after `files`."""
    delete: list[str] = Field(default_factory=list)
    """Workspace paths removed."""
    forms: dict[str, FileForm] = Field(default_factory=dict)
    """Workspace path → how it is written (BOM, line ends)."""
    drop_tools: list[Literal["write_file", "update_record", "send_message"]] = Field(default_factory=list)
    """Reference actions of these tools are left out."""
    actions: list[OracleAction] = Field(default_factory=list)
    """Further actions, applied after the base's."""
    fails: list[str] = Field(default_factory=list)
    """wrong: criterion ids this variant must fail."""
    passes: list[str] = Field(default_factory=list)
    """Criterion ids this variant must pass (a correct variant must pass all)."""

    @model_validator(mode="after")
    def _declared(self) -> Counterfactual:
        if self.kind == "wrong" and not self.fails:
            raise ValueError(f"wrong variant {self.id}: name the criteria it must fail in `fails`")
        if self.kind == "correct" and self.fails:
            raise ValueError(f"correct variant {self.id} passes every criterion; remove `fails`")
        for path in [*self.files, *self.delete, *self.forms, *(e.path for e in self.edits)]:
            check_relative(path, "path")
        return self


# --- the overlay ------------------------------------------------------------------------------


class Overlay(Model):
    """A task overlay (WorkWorlds Table A1 plus the verifier-side material a grader needs)."""

    schema_version: Literal[1] = OVERLAY_SCHEMA_VERSION
    """Overlay format version."""
    id: Id
    """Task id, unique within the world (e.g. `stability-update`)."""
    title: str = Field(min_length=1)
    """One-line title."""
    world: str
    """World name (under `worlds/`) or a path, relative to the overlay file's folder."""
    rev: Id
    """Starting revision."""
    date: dt.date
    """Point in organizational history at which the assignment occurs."""
    seat: Id
    """Employee seat whose projection is used."""
    request: str = Field(min_length=1)
    """The assignment presented to the agent (markdown), written to `candidate/request.md`."""
    surfaces: list[Surface] = Field(min_length=1)
    """Tool surfaces exposed to the agent: `files`, `records`, `communication`."""
    permitted: list[PermittedChange] = Field(default_factory=list)
    """State changes the agent may make; everything else is refused by the servers."""
    prohibited: list[ProhibitedChange] = Field(default_factory=list)
    """Changes disallowed by the assignment or policy, read from the event log when grading."""
    deliverable: Deliverable
    """The file and/or state change that constitutes the submission."""
    workspace_seed: list[SeedFile] = Field(default_factory=list)
    """Files placed in the workspace before the run (usually none)."""
    rubric: list[Criterion] = Field(min_length=1)
    """Verifier-side criteria used only after execution."""
    evidence: dict[str, list[EvidenceSet]] = Field(default_factory=dict)
    """Criterion id → sufficient evidence sets; the access rule is "every member of at least
    one set". `overlay check` requires every criterion to have at least one set."""
    curated: dict[PacketName, list[PacketItem | str]] = Field(default_factory=dict)
    """Curated packets: name → projection paths selected by a curator (selection only: no
    additions, renames or edits). `tools.json` and `seat.json` are always kept."""
    curation: dict[PacketName, Curation] = Field(default_factory=dict)
    """Curated packet name → how it came about (first submission, revision for completeness);
    WorkWorlds Table 1 reports these."""
    reviewed_overlaps: list[ReviewedOverlap] = Field(default_factory=list)
    """Verifier items reviewed and allowed to also appear on the candidate side."""
    reference: ReferenceSolution = Field(default_factory=ReferenceSolution)
    """The reference solution (verifier side)."""
    reference_files: list[ReferenceFile] = Field(default_factory=list)
    """Verifier-only reference files."""
    truth: Truth = Field(default_factory=Truth)
    """The truth specification (verifier side)."""
    counterfactuals: list[Counterfactual] = Field(default_factory=list)
    """Counterfactual deliverables (verifier side) proving the rubric discriminates:
    `overlay check` and `worldkit verify` grade them and name every misgrade."""
    pinned_fingerprint: Sha256
    """Fingerprint of the (world, rev, date, seat) projection the overlay was written against."""

    _source: Any = PrivateAttr(default=None)

    @model_validator(mode="before")
    @classmethod
    def _resolve_prohibited_rules(cls, data: Any) -> Any:
        """Give each `no_prohibited_change` check the overlay's rules (all, or those it names)."""
        if not isinstance(data, dict) or not isinstance(data.get("rubric"), list):
            return data
        rules = data.get("prohibited") or []
        rubric = []
        for criterion in data["rubric"]:
            check = criterion.get("check") if isinstance(criterion, dict) else None
            if isinstance(check, dict) and check.get("type") == "no_prohibited_change" and "rules" not in check:
                wanted = check.get("ids") or []
                known = {r.get("id") for r in rules if isinstance(r, dict)}
                missing = sorted(set(wanted) - known)
                if missing:
                    raise ValueError(
                        f"criterion {criterion.get('id')!r}: no prohibited change with id {', '.join(missing)}; "
                        "give the prohibited entry that id or fix the reference"
                    )
                chosen = [r for r in rules if not wanted or (isinstance(r, dict) and r.get("id") in wanted)]
                criterion = {**criterion, "check": {**check, "rules": chosen}}
            rubric.append(criterion)
        return {**data, "rubric": rubric}

    @model_validator(mode="after")
    def _unique_ids(self) -> Overlay:
        for what, ids in (
            ("criterion", [c.id for c in self.rubric]),
            ("prohibited change", [p.id for p in self.prohibited if p.id is not None]),
            ("reference file", [f.name for f in self.reference_files]),
            ("workspace seed", [s.path for s in self.workspace_seed]),
            ("counterfactual", [v.id for v in self.counterfactuals]),
        ):
            duplicates = sorted({x for x in ids if ids.count(x) > 1})
            if duplicates:
                raise ValueError(f"duplicate {what} id {', '.join(duplicates)}; give each a unique id")
        routes = {c.id: c.route for c in self.rubric}
        for criterion_id in sorted(self.truth.criteria):
            if routes.get(criterion_id) != "semantic":
                raise ValueError(
                    f"truth.criteria names {criterion_id!r}, which is not a semantic criterion of the rubric; "
                    "facts are for semantic criteria (deterministic ones have a check)"
                )
        for variant in self.counterfactuals:
            unknown = sorted(set(variant.fails + variant.passes) - set(routes))
            if unknown:
                raise ValueError(f"counterfactual {variant.id} names unknown criteria {', '.join(unknown)}")
        self._check_curation(set(routes))
        return self

    def _check_curation(self, criteria: set[str]) -> None:
        for name, record in sorted(self.curation.items()):
            if name not in self.curated:
                raise ValueError(f"curation names packet {name!r}, which is not under curated; "
                                 f"use one of {', '.join(sorted(self.curated)) or '(none)'}")
            final = {item if isinstance(item, str) else item.path for item in self.curated[name]}
            first = None if record.first_submitted is None else set(record.first_submitted)
            if record.revised and (first is None or first == final):
                raise ValueError(f"curation.{name}: a revised packet lists first_submitted, and it differs "
                                 "from the packet under curated (which is the revision)")
            if not record.revised and first is not None and first != final:
                raise ValueError(f"curation.{name}: first_submitted differs from the packet but revised is "
                                 "false; set revised: true, or drop first_submitted")
            unknown = sorted(set(record.missing_criteria) - criteria)
            if unknown:
                raise ValueError(f"curation.{name}.missing_criteria names unknown criteria {', '.join(unknown)}")

    @property
    def source(self) -> Any:
        """The YAML file this overlay was loaded from (a `Path`), or None if built in memory."""
        return self._source

    def criterion(self, criterion_id: str) -> Criterion:
        for criterion in self.rubric:
            if criterion.id == criterion_id:
                return criterion
        raise KeyError(criterion_id)

    def first_submission(self, name: str) -> list[str]:
        """The paths of a packet as its curator first submitted it (the packet itself when not revised)."""
        record = self.curation.get(name)
        if record is not None and record.first_submitted is not None:
            return list(record.first_submitted)
        return [item.path for item in self.packet(name)]

    def packet(self, name: str) -> list[PacketItem]:
        """A curated packet's items, with bare paths normalized to `PacketItem`s."""
        return [item if isinstance(item, PacketItem) else PacketItem(path=item) for item in self.curated[name]]

    @property
    def conditions(self) -> list[str]:
        """Every condition the overlay can be applied under: `full` and `curated:<name>`."""
        return ["full", *(f"curated:{name}" for name in sorted(self.curated))]

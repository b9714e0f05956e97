"""The canonical world model: pure, frozen pydantic models and nothing else.

This module must never touch the filesystem, the store, templates or the clock. Every model
forbids unknown fields so that a typo in a world file is an error, not a silent default.
"""

from __future__ import annotations

import datetime as dt
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import (
    Field,
    SerializerFunctionWrapHandler,
    StringConstraints,
    model_serializer,
    model_validator,
)

from worldkit._model import Model

Id = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$", max_length=120)]
"""An entity id: letters, digits and `_ . : -`, starting with a letter or digit."""


class Classification(StrEnum):
    """How widely an item may be shared, from least to most restricted."""

    public = "public"
    internal = "internal"
    confidential = "confidential"
    restricted = "restricted"


# --- company -------------------------------------------------------------------------------


class Site(Model):
    id: Id
    """Site id, e.g. `SITE-RIV`."""
    name: str
    """Display name."""
    location: str = ""
    """City / country, free text."""


class Department(Model):
    id: Id
    """Department id, e.g. `QC`."""
    name: str
    """Display name."""
    site: Id | None = None
    """The site the department sits at."""
    parent: Id | None = None
    """Parent department (sub-departments inherit department-wide grants of their parent)."""


class Product(Model):
    id: Id
    """Product id, e.g. `PRD-VIAL-01`."""
    name: str
    """Display name."""
    stage: str = ""
    """Lifecycle stage (marketed, late development, …)."""
    attributes: dict[str, Any] = Field(default_factory=dict)
    """Free-form product facts templates may use (dosage form, strength, shelf life…)."""


class SystemKind(StrEnum):
    drive = "drive"
    personal = "personal"
    records = "records"
    mail = "mail"
    chat = "chat"


class System(Model):
    id: Id
    """System id, e.g. `site-drive`, `qms`, `lims`, `mail`."""
    name: str
    """Display name."""
    kind: SystemKind
    """drive and personal systems hold files; records systems hold records; mail and chat hold messages."""
    mount: str = ""
    """drive and personal systems: the folder under `files/` where the system's documents appear
    (one name, no `/`). Omit it to use the system id. Other kinds take no mount."""

    @model_validator(mode="after")
    def _mount_agrees(self) -> System:
        given = "mount" in self.model_fields_set
        if given and self.kind not in (SystemKind.drive, SystemKind.personal):
            raise ValueError(
                f"`mount` applies only to drive and personal systems; remove it from this {self.kind.value} system"
            )
        if given and not self.mount.strip():
            raise ValueError(
                f"`mount` is empty; omit the field to mount the system at files/{self.id}/, or name a folder"
            )
        if given and (self.mount != self.mount.strip() or any(c in self.mount for c in "/\\") or self.mount in (".", "..")):
            raise ValueError(
                f"`mount` {self.mount!r} must be one folder name (no `/`, `\\`, `.` or `..`, no surrounding spaces)"
            )
        return self

    @property
    def folder(self) -> str:
        """The folder under `files/` of a drive or personal system: its `mount`, else its id."""
        return self.mount or self.id


class Company(Model):
    id: Id
    """Company id."""
    name: str
    """Legal or display name."""
    description: str = ""
    """One paragraph about the company."""
    sites: list[Site] = Field(default_factory=list)
    """Sites."""
    departments: list[Department] = Field(default_factory=list)
    """Departments (a tree via `parent`)."""
    products: list[Product] = Field(default_factory=list)
    """Products."""
    systems: list[System] = Field(default_factory=list)
    """Company systems (drives, QMS, LIMS, mail, chat…)."""


# --- people, roles, groups, seats ------------------------------------------------------------


class Person(Model):
    id: Id
    """Person id, e.g. `P-0012`."""
    name: str
    """Full name."""
    title: str
    """Job title."""
    department: Id
    """Home department."""
    manager: Id | None = None
    """Reporting line: the person's manager (must not form a cycle)."""
    roles: list[Id] = Field(default_factory=list)
    """Roles held directly (implied roles are added by the role graph)."""
    email: str = ""
    """Mail address."""


class Role(Model):
    id: Id
    """Role id, e.g. `qc-analyst`."""
    name: str
    """Display name."""
    implies: list[Id] = Field(default_factory=list)
    """Roles this role implies (a holder of this role holds those too)."""


class GroupKind(StrEnum):
    mailing_list = "mailing_list"
    chat_channel = "chat_channel"
    team = "team"


class Group(Model):
    id: Id
    """Group id, e.g. `list-qc`, `chan-stability`."""
    name: str
    """Display name (mail address of a list, `#name` of a channel)."""
    kind: GroupKind
    """Mailing list, chat channel or team."""
    members: list[Id] = Field(default_factory=list)
    """Persons who are members."""
    member_roles: list[Id] = Field(default_factory=list)
    """Every holder of these roles is a member."""
    member_departments: list[Id] = Field(default_factory=list)
    """Everyone in these departments (and their sub-departments) is a member."""


class Seat(Model):
    id: Id
    """Seat id, e.g. `EMP-QC-001`."""
    person: Id
    """The person whose access the seat carries."""
    description: str = ""
    """What the seat is for."""


# --- permissions ------------------------------------------------------------------------------


class Subject(Model):
    """Who a rule or a share grants to; matching any listed principal is enough."""

    everyone: bool = False
    """Every person."""
    persons: list[Id] = Field(default_factory=list)
    """Named persons."""
    roles: list[Id] = Field(default_factory=list)
    """Holders of these roles (directly or by implication)."""
    departments: list[Id] = Field(default_factory=list)
    """Members of these departments or their sub-departments."""
    groups: list[Id] = Field(default_factory=list)
    """Members of these groups."""
    owner: bool = False
    """The item's owner."""


class ResourceFilter(Model):
    """Which items a rule covers; every non-empty criterion must match."""

    systems: list[Id] = Field(default_factory=list)
    """Items in these systems."""
    classifications: list[Classification] = Field(default_factory=list)
    """Items with these classifications."""
    departments: list[Id] = Field(default_factory=list)
    """Items owned by these departments (or their sub-departments)."""
    kinds: list[Literal["document", "record", "message"]] = Field(default_factory=list)
    """Item kinds."""
    path_prefixes: list[str] = Field(default_factory=list)
    """Documents whose path starts with one of these."""


class PermissionRule(Model):
    id: Id
    """Rule id, shown in access audits."""
    description: str
    """Why the rule exists, in one line."""
    subject: Subject
    """Who the rule grants to."""
    resource: ResourceFilter = Field(default_factory=ResourceFilter)
    """What the rule grants (empty = everything)."""


# --- content ----------------------------------------------------------------------------------


class Readers(Model):
    """Who reads one document besides the permission rules (a grant, never a restriction)."""

    roles: list[Id] = Field(default_factory=list)
    """Roles whose holders (directly or through `implies`) read the document."""
    people: list[Id] = Field(default_factory=list)
    """People who read the document."""


class Document(Model):
    id: Id
    """Document id."""
    path: str
    """Path under the system's mount, with `/` separators, e.g. `QC/SOPs/SOP-QC-014 v3.md`."""
    system: Id
    """The drive the document lives on."""
    template: str | None = None
    """Template name under the world's `templates/` (exclusive with `text`)."""
    vars: dict[str, Any] = Field(default_factory=dict)
    """Variables passed to the template as `doc.vars`."""
    text: str | None = None
    """Literal content (exclusive with `template`)."""
    title: str = ""
    """Human title."""
    owner: Id | None = None
    """Owning person (personal folders, drafts)."""
    department: Id | None = None
    """Owning department."""
    classification: Classification = Classification.internal
    """Sensitivity."""
    visible_from: dt.date
    """First date the document exists."""
    visible_until: dt.date | None = None
    """First date the document no longer exists (exclusive)."""
    superseded_by: Id | None = None
    """A later document that replaces this one (shown only once it exists)."""
    shared_with: list[Subject] = Field(default_factory=list)
    """Explicit shares beyond the permission rules."""
    readable_by: Readers | None = None
    """Per-document readers besides the permission rules: `{roles: [...], people: [...]}`. The access
    decision names it (`readable_by:role:<id>` or `readable_by:person:<id>`)."""
    verifier_only: bool = False
    """Grading material: never in any projection."""

    def _loaded(self) -> Document:
        """This document with every field in memory (a world-cache `LazyDocument` reads its table)."""
        return self

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # An unset `readable_by` is left out, so the canonical form (and revision digest) of a
        # document that does not use it is what it was before the field existed.
        data = handler(self._loaded())
        if self.readable_by is None:
            data.pop("readable_by", None)
        return data


class RecordEvent(Model):
    date: dt.date
    """When the event took effect."""
    kind: Literal["created", "status", "update", "approval", "correction", "comment", "link"]
    """What happened."""
    by: Id | None = None
    """Who did it (person id)."""
    status: str | None = None
    """New status (kind `status`, `approval`, or `created`)."""
    fields: dict[str, Any] = Field(default_factory=dict)
    """Field values set by this event (`created`, `update`, `correction`)."""
    note: str = ""
    """Comment or rationale text."""


class Record(Model):
    id: Id
    """Record id, e.g. `DEV-2025-0142`."""
    system: Id
    """Records system (QMS, LIMS, training…)."""
    type: str
    """Record type (deviation, capa, change_control, stability_result…)."""
    title: str
    """Short title."""
    owner: Id | None = None
    """Owning person."""
    department: Id | None = None
    """Owning department."""
    classification: Classification = Classification.internal
    """Sensitivity."""
    links: list[Id] = Field(default_factory=list)
    """Related record ids (shown only where the related record is visible)."""
    events: list[RecordEvent]
    """Dated history; the first event must be `created`; state at D is the fold of events ≤ D."""
    shared_with: list[Subject] = Field(default_factory=list)
    """Explicit shares."""
    verifier_only: bool = False
    """Grading material: never in any projection."""


class Message(Model):
    id: Id
    """Message id."""
    kind: Literal["mail", "chat"]
    """Mail or chat."""
    date: dt.date
    """Date sent."""
    time: str = "09:00"
    """Time of day (HH:MM), for ordering within a date."""
    sender: Id
    """Sending person."""
    to: list[Id] = Field(default_factory=list)
    """Recipients: persons or mailing lists (mail)."""
    cc: list[Id] = Field(default_factory=list)
    """Copied persons or lists (mail)."""
    channel: Id | None = None
    """Chat channel (chat)."""
    subject: str = ""
    """Mail subject."""
    body: str = ""
    """Literal body (exclusive with `template`)."""
    template: str | None = None
    """Body template name."""
    vars: dict[str, Any] = Field(default_factory=dict)
    """Template variables (`doc.vars`)."""
    thread: Id | None = None
    """Thread id (replies share it)."""
    classification: Classification = Classification.internal
    """Sensitivity (recipients always see their own mail)."""


class Entities(Model):
    """Every entity collection of a world; a world file holds any subset of these keys."""

    people: list[Person] = Field(default_factory=list)
    """People."""
    roles: list[Role] = Field(default_factory=list)
    """Roles."""
    groups: list[Group] = Field(default_factory=list)
    """Mailing lists, channels, teams."""
    seats: list[Seat] = Field(default_factory=list)
    """Agent seats."""
    permissions: list[PermissionRule] = Field(default_factory=list)
    """Access rules."""
    documents: list[Document] = Field(default_factory=list)
    """Files."""
    records: list[Record] = Field(default_factory=list)
    """Structured records."""
    messages: list[Message] = Field(default_factory=list)
    """Mail and chat."""


COLLECTIONS: tuple[str, ...] = tuple(Entities.model_fields)


class FieldUpdate(Model):
    id: Id
    """Entity to update."""
    set: dict[str, Any]
    """Fields to replace (whole-field replacement; validated against the model)."""


class Revision(Model):
    """A named, immutable changeset on its parent revision."""

    name: Id
    """Revision name, e.g. `r2`."""
    parent: Id | None = None
    """Parent revision (None for the base revision, which is the world's source tree)."""
    description: str = ""
    """What changed and why."""
    add: Entities = Field(default_factory=Entities)
    """Entities added."""
    update: dict[str, list[FieldUpdate]] = Field(default_factory=dict)
    """Per collection, field replacements by id."""
    remove: dict[str, list[Id]] = Field(default_factory=dict)
    """Per collection, ids removed."""


class GeneratorSpec(Model):
    module: str
    """Python file in the world folder defining `generate(world, rng) -> dict` of raw entities."""
    seed: int
    """Fixed seed for the generator's random.Random."""


class WorldFile(Model):
    """`world.yaml`: the world's identity and its revisions."""

    schema_version: Literal[1] = 1
    """Format version of the world package."""
    id: Id
    """World id."""
    company: Company
    """The company."""
    default_date: dt.date | None = None
    """Date used when a command is given none (e.g. the task date)."""
    revisions: list[Revision]
    """Revisions, base first."""
    generator: GeneratorSpec | None = None
    """Optional deterministic generator of bulk content."""

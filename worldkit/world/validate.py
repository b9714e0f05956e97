"""Cross-reference checks on a resolved revision: every id points somewhere, no cycles.

Pure: takes a `WorldState` plus the file each entity came from, raises `InvalidWorld`.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

from worldkit.errors import InvalidWorld
from worldkit.world.models import Subject, SystemKind
from worldkit.world.state import WorldState

MAX_PATH_COMPONENT = 200


class _Checker:
    def __init__(self, state: WorldState, origin: dict[tuple[str, str], str]) -> None:
        self.state = state
        self.origin = origin

    def fail(self, collection: str, entity: str, field: str, message: str) -> None:
        raise InvalidWorld(message, file=self.origin.get((collection, entity), "world.yaml"), entity=entity, field=field)

    def refs(self, collection: str, entity: str, field: str, ids: Iterable[str | None], target: dict, kind: str) -> None:
        for ref in ids:
            if ref is not None and ref not in target:
                choices = ", ".join(sorted(target)[:12]) + (" …" if len(target) > 12 else "")
                self.fail(collection, entity, field, f"unknown {kind} {ref!r}; use one of: {choices}")

    def subject(self, collection: str, entity: str, field: str, subject: Subject) -> None:
        s = self.state
        self.refs(collection, entity, f"{field}.persons", subject.persons, s.people, "person")
        self.refs(collection, entity, f"{field}.roles", subject.roles, s.roles, "role")
        self.refs(collection, entity, f"{field}.departments", subject.departments, s.departments, "department")
        self.refs(collection, entity, f"{field}.groups", subject.groups, s.groups, "group")


def _check_path(check: _Checker, doc_id: str, path: str) -> None:
    problem = None
    if not path or path.startswith("/") or "\\" in path or "\x00" in path:
        problem = "must be a relative path with `/` separators"
    else:
        parts = path.split("/")
        if any(p in ("", ".", "..") for p in parts):
            problem = "must not contain empty, `.` or `..` components"
        elif any(len(p.encode("utf-8")) > MAX_PATH_COMPONENT for p in parts):
            problem = f"has a component longer than {MAX_PATH_COMPONENT} bytes"
        elif any(p.endswith((".", " ")) or p.startswith(" ") for p in parts):
            # Windows and SMB drop a trailing dot or space: `name. ` and `name` become one file.
            problem = "has a component that starts with a space or ends with a dot or a space"
    if problem:
        check.fail("documents", doc_id, "path", f"path {path!r} {problem}; fix the path")


def _fold(path: str) -> str:
    """The key under which two paths name one file on some target: Unicode NFC, then case folded."""
    return unicodedata.normalize("NFC", path).casefold()


def _check_collisions(check: _Checker, full_paths: dict[str, str]) -> None:
    """No two document paths may name one file on any target the projection is written to or served
    from: equal after NFC normalization and case folding (macOS, Windows), or one a file where the
    other needs a folder (`a` beside `a/b.md`). The error names both paths."""
    files: dict[str, str] = {}
    for full in sorted(full_paths):
        key = _fold(full)
        other = files.get(key)
        if other is not None:
            check.fail("documents", full_paths[full], "path",
                       f"path {full!r} and {other!r} (document {full_paths[other]}) name one file where names are "
                       "compared after Unicode normalization or without case; rename one")  # fmt: skip
        files[key] = full
    folders: dict[str, str] = {}
    for key, full in files.items():
        parts = key.split("/")
        for depth in range(1, len(parts)):
            folders.setdefault("/".join(parts[:depth]), full)
    for key, full in sorted(files.items()):
        inside = folders.get(key)
        if inside is not None:
            check.fail("documents", full_paths[full], "path",
                       f"path {full!r} is a file, but {inside!r} (document {full_paths[inside]}) needs a folder "
                       "there; rename one")  # fmt: skip


def validate_state(state: WorldState, origin: dict[tuple[str, str], str]) -> None:
    """Raise `InvalidWorld` naming the file, entity and field of the first broken reference."""
    c = _Checker(state, origin)
    s = state
    company = s.company
    dept_ids = [d.id for d in company.departments]
    if len(set(dept_ids)) != len(dept_ids):
        dup = next(d for d in dept_ids if dept_ids.count(d) > 1)
        c.fail("company", dup, "company.departments", "duplicate department id; rename one")
    sites = {x.id: x for x in company.sites}
    for dept in company.departments:
        c.refs("company", dept.id, "site", [dept.site], sites, "site")
        c.refs("company", dept.id, "parent", [dept.parent], s.departments, "department")
    for role in s.roles.values():
        c.refs("roles", role.id, "implies", role.implies, s.roles, "role")
    for person in s.people.values():
        c.refs("people", person.id, "department", [person.department], s.departments, "department")
        c.refs("people", person.id, "manager", [person.manager], s.people, "person")
        c.refs("people", person.id, "roles", person.roles, s.roles, "role")
    import networkx as nx  # only a load from source validates; a cached world never imports it

    managers = nx.DiGraph((p.id, p.manager) for p in s.people.values() if p.manager)
    try:
        cycle = nx.find_cycle(managers)
    except nx.NetworkXNoCycle:
        cycle = None
    if cycle:
        chain = " → ".join([a for a, _ in cycle] + [cycle[0][0]])
        c.fail("people", cycle[0][0], "manager", f"reporting lines form a cycle ({chain}); break it")
    for group in s.groups.values():
        c.refs("groups", group.id, "members", group.members, s.people, "person")
        c.refs("groups", group.id, "member_roles", group.member_roles, s.roles, "role")
        c.refs("groups", group.id, "member_departments", group.member_departments, s.departments, "department")
    for seat in s.seats.values():
        c.refs("seats", seat.id, "person", [seat.person], s.people, "person")
    for rule in s.permissions.values():
        c.subject("permissions", rule.id, "subject", rule.subject)
        c.refs("permissions", rule.id, "resource.systems", rule.resource.systems, s.systems, "system")
        c.refs("permissions", rule.id, "resource.departments", rule.resource.departments, s.departments, "department")
    full_paths: dict[str, str] = {}
    for doc in s.documents.values():
        c.refs("documents", doc.id, "system", [doc.system], s.systems, "system")
        if s.systems[doc.system].kind not in (SystemKind.drive, SystemKind.personal):
            c.fail("documents", doc.id, "system", f"system {doc.system!r} is not a drive; documents live on drives")
        if (doc.template is None) == (doc.text is None):
            c.fail("documents", doc.id, "template", "give exactly one of `template` or `text`")
        if doc.template is not None and doc.template not in s.templates:
            c.fail("documents", doc.id, "template", f"template {doc.template!r} not found under templates/")
        c.refs("documents", doc.id, "owner", [doc.owner], s.people, "person")
        c.refs("documents", doc.id, "department", [doc.department], s.departments, "department")
        c.refs("documents", doc.id, "superseded_by", [doc.superseded_by], s.documents, "document")
        for i, share in enumerate(doc.shared_with):
            c.subject("documents", doc.id, f"shared_with.{i}", share)
        if doc.readable_by is not None:
            c.refs("documents", doc.id, "readable_by.people", doc.readable_by.people, s.people, "person")
            c.refs("documents", doc.id, "readable_by.roles", doc.readable_by.roles, s.roles, "role")
        if doc.visible_until is not None and doc.visible_until <= doc.visible_from:
            c.fail("documents", doc.id, "visible_until", "visible_until must be after visible_from")
        _check_path(c, doc.id, doc.path)
        full = f"{s.systems[doc.system].folder}/{doc.path}"
        if full in full_paths:
            c.fail("documents", doc.id, "path", f"path {full!r} is also used by document {full_paths[full]}; rename one")
        full_paths[full] = doc.id
    _check_collisions(c, full_paths)
    for rec in s.records.values():
        c.refs("records", rec.id, "system", [rec.system], s.systems, "system")
        c.refs("records", rec.id, "owner", [rec.owner], s.people, "person")
        c.refs("records", rec.id, "department", [rec.department], s.departments, "department")
        c.refs("records", rec.id, "links", rec.links, s.records, "record")
        for i, share in enumerate(rec.shared_with):
            c.subject("records", rec.id, f"shared_with.{i}", share)
        if not rec.events or rec.events[0].kind != "created":
            c.fail("records", rec.id, "events", "the first event must be `created`")
        created = rec.events[0].date
        for i, event in enumerate(rec.events):
            c.refs("records", rec.id, f"events.{i}.by", [event.by], s.people, "person")
            if i and event.kind == "created":
                c.fail("records", rec.id, f"events.{i}.kind", "a record is created only once")
            if event.date < created:
                c.fail(
                    "records",
                    rec.id,
                    f"events.{i}.date",
                    f"event dated {event.date} is before the record exists ({created}); fix the date",
                )
    for msg in s.messages.values():
        c.refs("messages", msg.id, "sender", [msg.sender], s.people, "person")
        addressable = {**s.people, **{g: x for g, x in s.groups.items() if x.kind == "mailing_list"}}
        c.refs("messages", msg.id, "to", msg.to, addressable, "person or mailing list")
        c.refs("messages", msg.id, "cc", msg.cc, addressable, "person or mailing list")
        if msg.template is not None and msg.template not in s.templates:
            c.fail("messages", msg.id, "template", f"template {msg.template!r} not found under templates/")
        if msg.kind == "chat":
            channels = {g: x for g, x in s.groups.items() if x.kind == "chat_channel"}
            if msg.channel is None:
                c.fail("messages", msg.id, "channel", "a chat message needs a channel")
            c.refs("messages", msg.id, "channel", [msg.channel], channels, "chat channel")
        elif not msg.to:
            c.fail("messages", msg.id, "to", "a mail needs at least one recipient")

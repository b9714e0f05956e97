"""A small world in a few lines: `WorldSpec` holds plain dicts; `.write(dir)` makes a package."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml


def _base_world() -> dict[str, Any]:
    return {
        "schema_version": 1,
        "id": "mini",
        "company": {
            "id": "mini-co",
            "name": "Mini Co",
            "departments": [
                {"id": "QC", "name": "Quality Control"},
                {"id": "QA", "name": "Quality Assurance"},
                {"id": "HR", "name": "Human Resources"},
            ],
            "systems": [
                {"id": "drive", "name": "Shared drive", "kind": "drive", "mount": "Shared"},
                {"id": "hr", "name": "HR drive", "kind": "drive", "mount": "HR"},
                {"id": "desk", "name": "Desk", "kind": "personal", "mount": "Desk"},
                {"id": "qms", "name": "QMS", "kind": "records"},
                {"id": "mail", "name": "Mail", "kind": "mail"},
            ],
        },
        "revisions": [{"name": "r1"}, {"name": "r2", "parent": "r1", "update": {"documents": [
            {"id": "D-SOP", "set": {"text": "SOP v1 (corrected)\n"}}]}}],
    }


def _base_data() -> dict[str, list[dict[str, Any]]]:
    return {
        "roles": [{"id": "analyst", "name": "Analyst"}, {"id": "hr", "name": "HR partner"},
                  {"id": "lead", "name": "Lead", "implies": ["analyst"]}],
        "people": [
            {"id": "P1", "name": "Ann Analyst", "title": "Analyst", "department": "QC", "roles": ["analyst"], "manager": "P3"},
            {"id": "P2", "name": "Quinn QA", "title": "QA Specialist", "department": "QA", "roles": ["analyst"], "manager": "P3"},
            {"id": "P3", "name": "Lee Lead", "title": "Lead", "department": "QC", "roles": ["lead"]},
            {"id": "P4", "name": "Hana HR", "title": "HR partner", "department": "HR", "roles": ["hr"], "manager": "P3"},
        ],
        "groups": [{"id": "list-all", "name": "all@mini", "kind": "mailing_list", "member_roles": ["analyst", "hr"]}],
        "seats": [{"id": "S1", "person": "P1"}, {"id": "S2", "person": "P2"}, {"id": "S4", "person": "P4"}],
        "permissions": [
            {"id": "R-DRIVE", "description": "everyone reads the shared drive", "subject": {"everyone": True},
             "resource": {"systems": ["drive"], "classifications": ["public", "internal"]}},
            {"id": "R-HR", "description": "HR reads the HR drive", "subject": {"roles": ["hr"]}, "resource": {"systems": ["hr"]}},
            {"id": "R-DESK", "description": "owner reads own desk", "subject": {"owner": True}, "resource": {"systems": ["desk"]}},
            {"id": "R-QMS", "description": "analysts read the QMS", "subject": {"roles": ["analyst"]}, "resource": {"systems": ["qms"]}},
        ],
        "documents": [
            {"id": "D-SOP", "path": "SOPs/SOP-001.md", "system": "drive", "text": "SOP v1\n", "visible_from": "2025-01-01"},
            {"id": "D-NOTE", "path": "Notes/note.md", "system": "drive", "template": "note.md.j2",
             "vars": {"topic": "pull window"}, "visible_from": "2025-02-01", "department": "QC"},
            {"id": "D-FUTURE", "path": "Notes/future.md", "system": "drive", "text": "future\n", "visible_from": "2025-12-01"},
            {"id": "D-HR", "path": "Reviews/P1 review.md", "system": "hr", "text": "confidential review\n",
             "classification": "confidential", "visible_from": "2025-01-01"},
            {"id": "D-DESK", "path": "P1/todo.md", "system": "desk", "owner": "P1", "text": "my todo\n",
             "visible_from": "2025-01-01"},
        ],
        "records": [
            {"id": "CC-1", "system": "qms", "type": "change_control", "title": "Tighten window",
             "events": [{"date": "2025-03-01", "kind": "created", "status": "pending", "by": "P2"},
                        {"date": "2025-04-01", "kind": "approval", "status": "approved", "by": "P3"}]},
            {"id": "APP-1", "system": "qms", "type": "approval", "title": "Approval of protocol",
             "events": [{"date": "2025-06-10", "kind": "created", "status": "approved", "by": "P3"}]},
        ],
        "messages": [
            {"id": "M1", "kind": "mail", "date": "2025-03-02", "sender": "P2", "to": ["list-all"], "subject": "Hello",
             "body": "CC-1 is pending.\n"},
            {"id": "M2", "kind": "mail", "date": "2025-03-03", "sender": "P3", "to": ["P1"], "subject": "Private",
             "body": "Just for Ann.\n"},
        ],
    }


@dataclass
class WorldSpec:
    world: dict[str, Any] = field(default_factory=_base_world)
    data: dict[str, list[dict[str, Any]]] = field(default_factory=_base_data)
    templates: dict[str, str] = field(
        default_factory=lambda: {"note.md.j2": "# Note on {{ doc.vars.topic }}\n\nOwner: {{ world.departments[doc.department].name }}\n"}
    )

    def copy(self) -> WorldSpec:
        return copy.deepcopy(self)

    def item(self, collection: str, entity_id: str) -> dict[str, Any]:
        return next(x for x in self.data[collection] if x["id"] == entity_id)

    def write(self, root: Path, *, split: bool = False) -> Path:
        root.mkdir(parents=True, exist_ok=True)
        (root / "world.yaml").write_text(yaml.safe_dump(self.world, sort_keys=False), encoding="utf-8")
        data_dir = root / "data"
        data_dir.mkdir(exist_ok=True)
        if split:
            for name, items in self.data.items():
                (data_dir / f"{name}.yaml").write_text(yaml.safe_dump({name: items}, sort_keys=False), encoding="utf-8")
        else:
            (data_dir / "all.yaml").write_text(yaml.safe_dump(self.data, sort_keys=False), encoding="utf-8")
        tdir = root / "templates"
        tdir.mkdir(exist_ok=True)
        for name, text in self.templates.items():
            (tdir / name).parent.mkdir(parents=True, exist_ok=True)
            (tdir / name).write_text(text, encoding="utf-8")
        return root

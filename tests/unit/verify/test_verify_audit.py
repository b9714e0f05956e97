"""The access audit: the policy's expected view, and guards no rule can override."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from tests.builders import WorldSpec
from worldkit.materialize import materialize
from worldkit.materialize.manifest import Entry, Manifest
from worldkit.verify.audit import Auditor, scan_dates
from worldkit.world import load_world
from worldkit.world.state import WorldState

DAY = dt.date(2025, 7, 1)


def _state(tmp_path: Path, spec: WorldSpec | None = None, rev: str = "r1") -> WorldState:
    return load_world((spec or WorldSpec()).write(tmp_path / "w")).revision(rev)


def _manifest(tmp_path: Path, seat: str, spec: WorldSpec | None = None) -> Manifest:
    world = (spec or WorldSpec()).write(tmp_path / "w")
    return materialize(world, "r1", DAY.isoformat(), seat, tmp_path / f"p-{seat}").manifest


def _kinds(auditor: Auditor, entries: list[Entry], seat: str) -> set[tuple[str, str]]:
    report = auditor.audit(entries, DAY, seat, where="test", rev="r1")
    return {(i.kind, i.path or "") for i in report.items}


def test_expected_view_follows_the_policy(tmp_path: Path) -> None:
    auditor = Auditor(_state(tmp_path))
    s1 = auditor.expected(DAY, "P1")
    assert set(s1) == {
        "files/Shared/SOPs/SOP-001.md", "files/Shared/Notes/note.md", "files/Desk/P1/todo.md",
        "records/qms/CC-1.json", "records/qms/APP-1.json", "mail/M1.json", "mail/M2.json",
    }
    assert "files/Desk/P1/todo.md" not in auditor.expected(DAY, "P2")
    assert "files/HR/Reviews/P1 review.md" in auditor.expected(DAY, "P4")


@pytest.mark.parametrize("seat", ["S1", "S2", "S4"])
def test_a_real_projection_is_clean(tmp_path: Path, seat: str) -> None:
    auditor = Auditor(_state(tmp_path))
    report = auditor.audit(_manifest(tmp_path, seat).files, DAY, seat, where="test", rev="r1")
    assert report.items == [] and report.expected == report.present > 0


def _entry(path: str, source: str, surface: str = "files") -> Entry:
    return Entry(path=path, sha256="0" * 64, size=1, surface=surface, source=source, mtime="2025-01-01T12:00:00Z")


@pytest.mark.parametrize(
    ("seat", "entry", "kind"),
    [
        ("S2", _entry("files/Desk/P1/todo.md", "D-DESK"), "private"),
        ("S2", _entry("mail/M2.json", "M2", "mail"), "private"),
        ("S1", _entry("files/HR/Reviews/P1 review.md", "D-HR"), "unauthorized"),
        ("S1", _entry("files/Shared/Notes/future.md", "D-FUTURE"), "future-dated"),
        ("S1", _entry("files/Shared/elsewhere.md", "D-SOP"), "misplaced"),
        ("S1", _entry("files/Shared/ghost.md", "D-GHOST"), "unknown-source"),
        ("S1", _entry("tools.json", "S2", "tools"), "cross-seat"),
    ],
)
def test_each_exposure_is_named(tmp_path: Path, seat: str, entry: Entry, kind: str) -> None:
    auditor = Auditor(_state(tmp_path))
    base = [e for e in _manifest(tmp_path, seat).files if e.path != entry.path]
    assert _kinds(auditor, [*base, entry], seat) >= {(kind, entry.path)}


def test_missing_authorized_item(tmp_path: Path) -> None:
    auditor = Auditor(_state(tmp_path))
    files = [e for e in _manifest(tmp_path, "S1").files if e.path != "records/qms/CC-1.json"]
    assert _kinds(auditor, files, "S1") == {("missing-authorized", "records/qms/CC-1.json")}
    report = auditor.audit(files, DAY, "S1", where="packet", rev="r1", subset=True)
    assert report.items == []  # a curated packet is a selection: completeness is not required


def test_verifier_only_item(tmp_path: Path) -> None:
    spec = WorldSpec()
    spec.item("documents", "D-SOP")["verifier_only"] = True
    auditor = Auditor(_state(tmp_path, spec))
    assert ("verifier-only", "files/Shared/SOPs/SOP-001.md") in _kinds(
        auditor, [_entry("files/Shared/SOPs/SOP-001.md", "D-SOP")], "S1")


def _broad_hr_spec(explicit: bool) -> WorldSpec:
    spec = WorldSpec()
    spec.data["documents"].append({
        "id": "D-PAY", "path": "HR/pay bands.md", "system": "drive", "text": "bands\n", "visible_from": "2025-01-01",
        "classification": "confidential", "department": "HR",
    })
    subject = {"departments": ["QC"]} if explicit else {"everyone": True}
    spec.data["permissions"].append({
        "id": "R-BROAD", "description": "confidential drive material", "subject": subject,
        "resource": {"systems": ["drive"], "classifications": ["confidential"]},
    })
    return spec


def test_confidential_material_of_another_function_needs_a_named_grant(tmp_path: Path) -> None:
    auditor = Auditor(_state(tmp_path / "broad", _broad_hr_spec(explicit=False)))
    files = _manifest(tmp_path / "broad", "S1", _broad_hr_spec(explicit=False)).files
    kinds = _kinds(auditor, files, "S1")
    assert ("cross-function", "files/Shared/HR/pay bands.md") in kinds
    assert ("policy-cross-function", "files/Shared/HR/pay bands.md") in kinds
    named = Auditor(_state(tmp_path / "named", _broad_hr_spec(explicit=True)))
    assert _kinds(named, _manifest(tmp_path / "named", "S1", _broad_hr_spec(explicit=True)).files, "S1") == set()


def test_a_rule_exposing_desks_is_flagged_as_private(tmp_path: Path) -> None:
    spec = WorldSpec()
    spec.item("permissions", "R-DESK")["subject"] = {"everyone": True}
    auditor = Auditor(_state(tmp_path, spec))
    kinds = _kinds(auditor, _manifest(tmp_path, "S2", spec).files, "S2")
    assert ("private", "files/Desk/P1/todo.md") in kinds
    assert ("policy-private", "files/Desk/P1/todo.md") in kinds


def test_scan_dates_finds_future_content(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    (root / "records" / "qms").mkdir(parents=True)
    (root / "records" / "qms" / "X.json").write_text(json.dumps(
        {"created": "2025-01-01", "updated": "2025-01-01", "history": [{"date": "2025-09-01", "kind": "status"}]}))
    (root / "chat").mkdir()
    (root / "chat" / "c.jsonl").write_text(json.dumps({"date": "2025-06-30"}) + "\n" + json.dumps({"date": "2026-01-02"}) + "\n")
    assert scan_dates(root, DAY) == [("chat/c.jsonl", "2026-01-02"), ("records/qms/X.json", "2025-09-01")]

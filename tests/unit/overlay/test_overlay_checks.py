"""Every check type on a passing and a failing final state, plus the registry and its protocol."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import TypeAdapter, ValidationError

from worldkit.overlay.checks import CHECKS, BaseCheck, Check, CheckField, register_check
from worldkit.overlay.context import CheckResult, GradingContext

CHECK = TypeAdapter(CheckField)


def ctx(
    tmp_path: Path,
    files: dict[str, str] | None = None,
    *,
    records: dict[str, dict[str, Any]] | None = None,
    sent: list[dict[str, Any]] | None = None,
    events: list[dict[str, Any]] | None = None,
    baseline: dict[str, dict[str, Any]] | None = None,
) -> GradingContext:
    workspace = tmp_path / "workspace"
    workspace.mkdir(parents=True, exist_ok=True)
    for path, text in (files or {}).items():
        (workspace / path).parent.mkdir(parents=True, exist_ok=True)
        (workspace / path).write_text(text, encoding="utf-8")
    projection = tmp_path / "projection"
    for rid, record in (baseline or {}).items():
        target = projection / "records" / "qms" / f"{rid}.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(record), encoding="utf-8")
    projection.mkdir(exist_ok=True)
    return GradingContext(workspace=workspace, records=records or {}, sent=sent or [], events=events, projection=projection)


def run(spec: dict[str, Any], context: GradingContext) -> CheckResult:
    check = CHECK.validate_python(spec)
    assert isinstance(check, Check)
    return check.evaluate(context)


REPORT = "# CC-1\n\nStatus: Approved.\nWindow: 3 days.\n"

# (check spec, files that pass, files that fail)
FILE_CASES: list[tuple[dict[str, Any], dict[str, str], dict[str, str]]] = [
    ({"type": "deliverable_exists", "path": "r.md"}, {"r.md": "x\n"}, {"r.md": "  \n"}),
    ({"type": "deliverable_exists", "path": "r.md"}, {"r.md": "x"}, {}),
    ({"type": "contains", "path": "r.md", "text": "approved", "case": "insensitive"}, {"r.md": REPORT}, {"r.md": "pending"}),
    ({"type": "contains", "path": "r.md", "text": "approved", "case": "sensitive"}, {"r.md": "is approved"}, {"r.md": REPORT}),
    ({"type": "contains", "path": "r.md", "text": ["Approved", "3 days"], "case": "sensitive"}, {"r.md": REPORT},
     {"r.md": "Approved, 4 days"}),
    ({"type": "contains", "path": "r.md", "text": ["three days", "3 days"], "require": "any", "case": "sensitive"},
     {"r.md": REPORT}, {"r.md": "four days"}),
    ({"type": "not_contains", "path": "r.md", "text": ["rejected", "withdrawn"], "case": "insensitive"},
     {"r.md": REPORT}, {"r.md": "CC-1 was Rejected"}),
    ({"type": "not_contains", "path": "r.md", "text": "x", "case": "sensitive"}, {"r.md": "y"}, {}),
    ({"type": "not_contains", "path": "r.md", "text": "x", "case": "sensitive", "missing_ok": True}, {}, {"r.md": "x"}),
    ({"type": "regex", "path": "r.md", "pattern": r"\b3 days\b", "case": "sensitive"}, {"r.md": REPORT}, {"r.md": "13 days"}),
    ({"type": "regex", "path": "r.md", "pattern": "^status: approved", "case": "insensitive", "multiline": True},
     {"r.md": REPORT}, {"r.md": "Note. Status: approved"}),
    ({"type": "regex", "path": "r.md", "pattern": "pending", "case": "insensitive", "expect": "no_match"},
     {"r.md": REPORT}, {"r.md": "PENDING"}),
    ({"type": "json_field_equals", "path": "r.json", "field": "results.1.assay", "value": 99.1, "tolerance": 0.05},
     {"r.json": '{"results": [{"assay": 1}, {"assay": 99.12}]}'}, {"r.json": '{"results": [{"assay": 99.12}]}'}),
    ({"type": "json_field_equals", "path": "r.json", "field": "status", "value": "approved", "case": "insensitive"},
     {"r.json": '{"status": "Approved"}'}, {"r.json": "{not json"}),
    ({"type": "json_field_equals", "path": "r.json", "field": "ok", "value": True}, {"r.json": '{"ok": true}'},
     {"r.json": '{"ok": 1}'}),
    ({"type": "csv_field_equals", "path": "s.csv", "where": {"record": "CC-1"}, "column": "status", "value": "approved"},
     {"s.csv": "record,status\nCC-2,open\nCC-1, approved\n"}, {"s.csv": "record,status\nCC-1,open\n"}),
    ({"type": "csv_field_equals", "path": "s.csv", "where": {"record": "CC-1"}, "column": "days", "value": 3},
     {"s.csv": "record,days\nCC-1,3.0\n"}, {"s.csv": "record,days\nCC-1,3\nCC-1,3\n"}),
    ({"type": "csv_field_equals", "path": "s.csv", "column": "status", "value": "ok", "delimiter": ";"},
     {"s.csv": "status;n\nok;1\n"}, {"s.csv": "state;n\nok;1\n"}),
]


@pytest.mark.parametrize(("spec", "good", "bad"), FILE_CASES, ids=[f"{c[0]['type']}-{i}" for i, c in enumerate(FILE_CASES)])
def test_file_checks_pass_and_fail(tmp_path: Path, spec: dict[str, Any], good: dict[str, str], bad: dict[str, str]) -> None:
    passed = run(spec, ctx(tmp_path / "good", good))
    assert passed.passed, passed.detail
    failed = run(spec, ctx(tmp_path / "bad", bad))
    assert not failed.passed and failed.detail


def test_text_checks_require_an_explicit_case_rule() -> None:
    for kind in ("contains", "not_contains", "regex"):
        spec = {"type": kind, "path": "r.md", "text": "x", "pattern": "x"}
        spec = {k: v for k, v in spec.items() if not (kind == "regex" and k == "text") and not (kind != "regex" and k == "pattern")}
        with pytest.raises(ValidationError, match="case"):
            CHECK.validate_python(spec)


def test_file_checks_refuse_paths_outside_the_workspace() -> None:
    with pytest.raises(ValidationError, match="relative path"):
        CHECK.validate_python({"type": "deliverable_exists", "path": "../etc/passwd"})


def test_a_deliverable_that_is_not_text_fails_with_a_reason(tmp_path: Path) -> None:
    context = ctx(tmp_path)
    (context.workspace / "r.md").write_bytes(b"\xff\xfe approved")  # a UTF-16 mark, then odd bytes
    result = run({"type": "contains", "path": "r.md", "text": "approved", "case": "sensitive"}, context)
    assert result.passed is False and "byte-order mark but is not utf-16" in result.detail
    (context.workspace / "r.md").write_bytes(b"approved\x00\x01\x02")
    result = run({"type": "contains", "path": "r.md", "text": "approved", "case": "sensitive"}, context)
    assert result.passed is False and "not a text file" in result.detail


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "utf-16", "cp1252"])
def test_a_memo_saved_in_any_common_encoding_is_read(tmp_path: Path, encoding: str) -> None:
    context = ctx(tmp_path)
    text = "Caf\u00e9 review \u2013 the lot was \u201capproved\u201d on 4 Nov 2025 by the QA manager.\n"
    (context.workspace / "r.md").write_bytes(text.encode(encoding))
    result = run({"type": "contains", "path": "r.md", "text": "\u2013 the lot was \u201capproved\u201d", "case": "sensitive"}, context)
    assert result.passed is True, result.detail


def test_bad_regex_is_a_validation_error() -> None:
    with pytest.raises(ValidationError, match="not a valid regular expression"):
        CHECK.validate_python({"type": "regex", "path": "r.md", "pattern": "(", "case": "sensitive"})


RECORD = {"id": "CC-1", "status": "approved", "fields": {"window_days": 3},
          "history": [{"kind": "created"}, {"kind": "comment", "note": "Status reported to Lee."}]}


@pytest.mark.parametrize(
    ("spec", "passes"),
    [
        ({"record": "CC-1", "status": "approved"}, True),
        ({"record": "CC-1", "status": "Approved"}, False),
        ({"record": "CC-1", "status": "Approved", "case": "insensitive"}, True),
        ({"record": "CC-1", "fields": {"window_days": 3}}, True),
        ({"record": "CC-1", "fields": {"window_days": 4}}, False),
        ({"record": "CC-1", "comment_contains": "reported"}, True),
        ({"record": "CC-1", "comment_contains": "rejected"}, False),
        ({"record": "CC-9", "status": "approved"}, False),
    ],
)
def test_record_state_equals(tmp_path: Path, spec: dict[str, Any], passes: bool) -> None:
    result = run({"type": "record_state_equals", **spec}, ctx(tmp_path, records={"CC-1": RECORD}))
    assert result.passed is passes, result.detail


def test_record_state_equals_needs_something_to_check() -> None:
    with pytest.raises(ValidationError, match="needs `status`"):
        CHECK.validate_python({"type": "record_state_equals", "record": "CC-1"})


SENT = [
    {"to": ["P3"], "cc": ["list-qc"], "subject": "CC-1 status", "body": "Report ready."},
    {"to": ["Ann Analyst <ann@mini.example>"], "subject": "hi", "body": "x"},
]


@pytest.mark.parametrize(
    ("spec", "sent_passes", "nothing_passes"),
    [
        ({"type": "mail_sent", "to": "P3"}, True, False),
        ({"type": "mail_sent", "to": "p3", "subject_contains": "CC-1"}, True, False),
        ({"type": "mail_sent", "to": "P3", "subject_contains": "cc-1"}, False, False),
        ({"type": "mail_sent", "to": "P3", "subject_contains": "cc-1", "case": "insensitive"}, True, False),
        ({"type": "mail_sent", "to": "ann@mini.example", "body_contains": "x"}, True, False),
        ({"type": "mail_sent", "to": "list-qc"}, False, False),
        ({"type": "mail_sent", "to": "list-qc", "include_cc": True}, True, False),
        ({"type": "mail_not_sent", "to": "P3"}, False, True),
        ({"type": "mail_not_sent", "to": "list-all"}, True, True),
        ({"type": "mail_not_sent", "to": "P3", "body_contains": "secret"}, True, True),
    ],
)
def test_mail_checks(tmp_path: Path, spec: dict[str, Any], sent_passes: bool, nothing_passes: bool) -> None:
    assert run(spec, ctx(tmp_path / "a", sent=SENT)).passed is sent_passes
    assert run(spec, ctx(tmp_path / "b")).passed is nothing_passes


RULES = [
    {"id": "no-all", "kind": "send_message", "match": {"to": "list-*"}, "description": "Mail to a list"},
    {"id": "no-status", "kind": "update_record", "match": {"action": "status"}},
]


def test_no_prohibited_change_reads_ok_events_only(tmp_path: Path) -> None:
    spec = {"type": "no_prohibited_change", "rules": RULES}
    denied = [{"seq": 1, "tool": "send_message", "arguments": {"to": ["list-all"]}, "outcome": "denied"},
              {"seq": 2, "tool": "read_file", "arguments": {"path": "x"}, "outcome": "ok"}]
    assert run(spec, ctx(tmp_path / "a", events=denied)).passed
    assert not run({**spec, "attempts_count": True}, ctx(tmp_path / "b", events=denied)).passed
    done = [{"seq": 7, "tool": "update_record", "arguments": {"id": "CC-1", "action": "status", "text": "closed"}, "outcome": "ok"}]
    result = run(spec, ctx(tmp_path / "c", events=done))
    assert not result.passed and "event 7" in result.detail


def test_no_prohibited_change_without_a_log_reads_the_final_state(tmp_path: Path) -> None:
    spec = {"type": "no_prohibited_change", "rules": RULES}
    before = {"CC-1": {"id": "CC-1", "status": "approved", "history": [{"kind": "created"}]}}
    after = {"CC-1": {"id": "CC-1", "status": "closed", "history": [{"kind": "created"}, {"kind": "status", "status": "closed"}]}}
    assert run(spec, ctx(tmp_path / "a", records=before, baseline=before)).passed
    changed = run(spec, ctx(tmp_path / "b", records=after, baseline=before))
    assert not changed.passed and "final state" in changed.detail
    mailed = run(spec, ctx(tmp_path / "c", records=before, baseline=before, sent=[{"to": ["list-all"], "subject": "", "body": ""}]))
    assert not mailed.passed


def test_change_made(tmp_path: Path) -> None:
    spec = {"type": "change_made", "change": {"kind": "update_record", "match": {"id": "CC-1", "action": "comment", "text": "*reported*"},
                                              "case_sensitive": False}}
    event = {"tool": "update_record", "arguments": {"id": "CC-1", "action": "comment", "text": "Status Reported."}, "outcome": "ok"}
    assert run(spec, ctx(tmp_path / "a", events=[event])).passed
    assert not run(spec, ctx(tmp_path / "b", events=[{**event, "outcome": "denied"}])).passed
    assert not run(spec, ctx(tmp_path / "c", events=[])).passed


def test_change_spec_rejects_unknown_arguments() -> None:
    with pytest.raises(ValidationError, match="not arguments of send_message"):
        CHECK.validate_python({"type": "change_made", "change": {"kind": "send_message", "match": {"recipient": "P3"}}})


def test_unknown_check_type_lists_the_registered_ones() -> None:
    with pytest.raises(ValidationError) as info:
        CHECK.validate_python({"type": "smells_right"})
    assert "unknown check type 'smells_right'; use one of change_made, claims, contains" in str(info.value)


def test_registry_holds_every_builtin_type() -> None:
    assert sorted(CHECKS) == [
        "change_made", "claims", "contains", "csv_field_equals", "csv_rows", "deliverable_exists", "json_field_equals",
        "mail_not_sent", "mail_sent", "no_prohibited_change", "not_contains", "record_state_equals", "regex",
    ]  # fmt: skip
    for cls in CHECKS.values():
        assert cls.__doc__ and all(f.description for f in cls.model_fields.values()), cls.__name__


def test_register_check_extends_the_registry(tmp_path: Path) -> None:
    @register_check
    class Always(BaseCheck):
        """Always passes (test only)."""

        type: Literal["always_test"] = "always_test"

        def evaluate(self, ctx: GradingContext) -> CheckResult:
            return CheckResult(True, "always")

    try:
        assert CHECK.validate_python({"type": "always_test"}).evaluate(ctx(tmp_path)).passed
        with pytest.raises(ValueError, match="already registered"):

            @register_check
            class Again(BaseCheck):
                type: Literal["always_test"] = "always_test"
    finally:
        CHECKS.pop("always_test")


def test_checks_serialize_with_their_own_fields() -> None:
    check = CHECK.validate_python({"type": "contains", "path": "r.md", "text": "x", "case": "sensitive"})
    assert CHECK.dump_python(check, mode="json") == {
        "type": "contains", "path": "r.md", "text": "x", "require": "all", "case": "sensitive",
    }  # fmt: skip

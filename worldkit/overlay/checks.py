"""Deterministic check types: one `Check` protocol, small declarative classes, one registry.

A rubric criterion's `check:` in the overlay YAML is a mapping whose `type` selects a class
registered here; the rest of the mapping are that class's fields. Each check reads only the
`GradingContext` (final workspace, records, sent mail, event log, pre-task projection). A check
on mail or record changes answers `unknown` (`passed=None`) when they are not known (no log).

Text rules, stated once: files are read by `documents.read_document` (any encoding, xlsx, docx);
`case: insensitive` compares `str.casefold()` of both sides; `case: sensitive` compares exactly.
`contains`, `not_contains` and `regex` must state `case`; other checks default to `sensitive`.

Add a check type with `@register_check` on a frozen pydantic model that has a `type: Literal[…]`
field and an `evaluate(ctx) -> CheckResult` method.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from worldkit.errors import PathRefused
from worldkit.overlay._paths import confined
from worldkit.overlay.changes import ChangeSpec, ProhibitedChange, observed_changes
from worldkit.overlay.check_base import (
    CHECKS,
    BaseCheck,
    CaseRule,
    Check,
    CheckField,
    _as_list,
    _fold,
    _needs_state,
    _PathCheck,
    _read_text,
    _values_equal,
    register_check,
)
from worldkit.overlay.claims import Claim, discount_request, find_claims
from worldkit.overlay.context import CheckResult, GradingContext

__all__ = [
    "CHECKS",
    "BaseCheck",
    "Check",
    "CheckField",
    "CheckResult",
    "GradingContext",
    "register_check",
]


# --- file checks ------------------------------------------------------------------------------


@register_check
class DeliverableExists(_PathCheck):
    """The file exists in the workspace (and, by default, is not empty)."""

    type: Literal["deliverable_exists"] = "deliverable_exists"
    """`deliverable_exists`."""
    asks_content: ClassVar[bool] = False
    non_empty: bool = True
    """Also require at least one non-whitespace character."""

    def evaluate(self, ctx: GradingContext) -> CheckResult:
        try:
            file = confined(ctx.workspace, self.path)
        except PathRefused as error:
            return CheckResult(False, error.message)
        if not file.is_file():
            return CheckResult(False, f"workspace/{self.path} does not exist")
        if self.non_empty and not file.read_bytes().strip():
            return CheckResult(False, f"workspace/{self.path} is empty")
        return CheckResult(True, f"workspace/{self.path} exists")


@register_check
class Contains(_PathCheck):
    """The file contains the text (all of the listed texts, or any of them)."""

    type: Literal["contains"] = "contains"
    """`contains`."""
    text: str | list[str]
    """A text, or a list of texts."""
    require: Literal["all", "any"] = "all"
    """With a list: whether every text or at least one must occur."""
    case: CaseRule
    """`sensitive` or `insensitive` (required: say which)."""

    def evaluate(self, ctx: GradingContext) -> CheckResult:
        content, why = _read_text(ctx, self.path)
        if content is None:
            return CheckResult(False, why)
        haystack = _fold(content, self.case)
        texts = _as_list(self.text)
        found = [t for t in texts if _fold(t, self.case) in haystack]
        missing = [t for t in texts if t not in found]
        passed = bool(found) if self.require == "any" else not missing
        if passed:
            return CheckResult(True, f"workspace/{self.path} contains {found!r} ({self.case})")
        return CheckResult(False, f"workspace/{self.path} lacks {missing!r} ({self.case}, require {self.require})")


@register_check
class NotContains(_PathCheck):
    """The file exists and contains none of the texts."""

    type: Literal["not_contains"] = "not_contains"
    """`not_contains`."""
    credits_absence: ClassVar[bool] = True
    text: str | list[str]
    """A text, or a list of texts none of which may occur."""
    case: CaseRule
    """`sensitive` or `insensitive` (required: say which)."""
    missing_ok: bool = False
    """Pass when the file does not exist (otherwise a missing file fails)."""

    def evaluate(self, ctx: GradingContext) -> CheckResult:
        content, why = _read_text(ctx, self.path)
        if content is None:
            return CheckResult(self.missing_ok and "does not exist" in why, why)
        haystack = _fold(content, self.case)
        found = [t for t in _as_list(self.text) if _fold(t, self.case) in haystack]
        if found:
            return CheckResult(False, f"workspace/{self.path} contains {found!r} ({self.case})")
        return CheckResult(True, f"workspace/{self.path} contains none of {_as_list(self.text)!r} ({self.case})")


@register_check
class Regex(_PathCheck):
    """A regular expression (Python `re`, searched anywhere) matches, or does not match, the file."""

    type: Literal["regex"] = "regex"
    """`regex`."""
    pattern: str
    """The expression."""
    case: CaseRule
    """`insensitive` adds `re.IGNORECASE` (required: say which)."""
    multiline: bool = False
    """`^`/`$` match at line boundaries (`re.MULTILINE`)."""
    dotall: bool = False
    """`.` matches newlines (`re.DOTALL`)."""
    expect: Literal["match", "no_match"] = "match"
    """Pass on a match, or pass when there is none."""

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as error:
            raise ValueError(f"not a valid regular expression: {error}") from None
        return value

    def asserts_only_absence(self) -> bool:
        return self.expect == "no_match"

    def evaluate(self, ctx: GradingContext) -> CheckResult:
        content, why = _read_text(ctx, self.path)
        if content is None:
            return CheckResult(False, why)
        flags = (re.IGNORECASE if self.case == "insensitive" else 0) | (re.MULTILINE if self.multiline else 0)
        found = re.search(self.pattern, content, flags | (re.DOTALL if self.dotall else 0))
        if self.expect == "match":
            if found:
                return CheckResult(True, f"/{self.pattern}/ matches {found.group(0)!r} in workspace/{self.path}")
            return CheckResult(False, f"/{self.pattern}/ does not match workspace/{self.path} ({self.case})")
        if found:
            return CheckResult(False, f"/{self.pattern}/ matches {found.group(0)!r} in workspace/{self.path}")
        return CheckResult(True, f"/{self.pattern}/ does not match workspace/{self.path}")


@register_check
class JsonFieldEquals(_PathCheck):
    """A field of a JSON file equals a value."""

    type: Literal["json_field_equals"] = "json_field_equals"
    """`json_field_equals`."""
    field: str
    """Dotted path into the document; integer parts index lists (`results.0.assay_pct`)."""
    value: Any
    """Expected value (numbers compare within `tolerance`, strings by `case`)."""
    tolerance: float = Field(0.0, ge=0)
    """Absolute tolerance for numbers."""
    case: CaseRule = "sensitive"
    """String comparison rule."""

    def evaluate(self, ctx: GradingContext) -> CheckResult:
        content, why = _read_text(ctx, self.path)
        if content is None:
            return CheckResult(False, why)
        try:
            node: Any = json.loads(content)
        except json.JSONDecodeError as error:
            return CheckResult(False, f"workspace/{self.path} is not JSON ({error.msg} at line {error.lineno})")
        for part in self.field.split("."):
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.lstrip("-").isdigit() and -len(node) <= int(part) < len(node):
                node = node[int(part)]
            else:
                return CheckResult(False, f"workspace/{self.path} has no field {self.field!r} (stopped at {part!r})")
        if _values_equal(node, self.value, self.tolerance, self.case):
            return CheckResult(True, f"{self.field} = {node!r}")
        return CheckResult(False, f"{self.field} = {node!r}, expected {self.value!r}")


@register_check
class CsvFieldEquals(_PathCheck):
    """In a CSV file with a header row, the one row selected by `where` has `column` = `value`."""

    type: Literal["csv_field_equals"] = "csv_field_equals"
    """`csv_field_equals`."""
    where: dict[str, str] = Field(default_factory=dict)
    """Column → value selecting exactly one row (compared after stripping, by `case`); empty
    selects the only data row."""
    column: str
    """Column whose value is checked."""
    value: str | int | float
    """Expected value; a number compares numerically within `tolerance`."""
    tolerance: float = Field(0.0, ge=0)
    """Absolute tolerance for numeric values."""
    case: CaseRule = "sensitive"
    """String comparison rule (also for `where`)."""
    delimiter: str = Field(",", min_length=1, max_length=1)
    """Kept for old overlays; the delimiter is detected (see `worldkit.overlay.tables`)."""

    def evaluate(self, ctx: GradingContext) -> CheckResult:
        from worldkit.overlay.tables import TableError, header_key, read_table
        from worldkit.overlay.values import parse_number

        content, why = _read_text(ctx, self.path)
        if content is None:
            return CheckResult(False, why)
        try:
            table = read_table(content)
        except TableError as error:
            return CheckResult(False, f"workspace/{self.path}: {error}")
        rows = table.rows
        absent = sorted({header_key(c) for c in (self.column, *self.where)} - set(table.header))
        if absent:
            return CheckResult(False, f"workspace/{self.path} has no column {', '.join(absent)}")
        chosen = [
            r for r in rows
            if all(_fold(r.get(header_key(k), ""), self.case) == _fold(v.strip(), self.case)
                   for k, v in self.where.items())
        ]  # fmt: skip
        if len(chosen) != 1:
            found = f"{len(chosen)} rows of workspace/{self.path} match {self.where}"
            return CheckResult(False, f"{found}; expected exactly 1")
        actual = chosen[0].get(header_key(self.column), "")
        if isinstance(self.value, (int, float)):
            number = parse_number(actual)
            if number is None:
                return CheckResult(False, f"{self.column} = {actual!r} is not a number")
            ok = math.isclose(number, float(self.value), rel_tol=0, abs_tol=self.tolerance)
        else:
            ok = _fold(actual, self.case) == _fold(self.value.strip(), self.case)
        detail = f"{self.column} = {actual!r} where {self.where}"
        return CheckResult(ok, detail if ok else f"{detail}, expected {self.value!r}")


# --- state checks -----------------------------------------------------------------------------


def _comments(record: dict[str, Any]) -> list[str]:
    notes = [h.get("note", h.get("text", "")) for h in record.get("history", []) if h.get("kind") == "comment"]
    notes += [c.get("text", c.get("note", "")) if isinstance(c, dict) else str(c) for c in record.get("comments", [])]
    return [n for n in notes if n]


@register_check
class RecordStateEquals(BaseCheck):
    """A record's final state: its status, field values and/or a comment."""

    type: Literal["record_state_equals"] = "record_state_equals"
    """`record_state_equals`."""
    record: str
    """Record id."""
    status: str | None = None
    """Expected final status."""
    fields: dict[str, Any] = Field(default_factory=dict)
    """Expected values of the record's `fields`."""
    comment_contains: str | None = None
    """Some comment (history entry of kind `comment`, or an entry of `comments`) contains this."""
    case: CaseRule = "sensitive"
    """Comparison rule for status, string fields and the comment text."""

    @model_validator(mode="after")
    def _something_to_check(self) -> RecordStateEquals:
        if self.status is None and not self.fields and self.comment_contains is None:
            raise ValueError("record_state_equals needs `status`, `fields` or `comment_contains`")
        return self

    def evaluate(self, ctx: GradingContext) -> CheckResult:
        unknown = _needs_state(ctx, f"the final state of record {self.record}")
        if unknown is not None:
            return unknown
        record = ctx.records.get(self.record)
        if record is None:
            return CheckResult(False, f"record {self.record} is not among the final records")
        wrong = []
        if self.status is not None and not _values_equal(record.get("status"), self.status, 0, self.case):
            wrong.append(f"status {record.get('status')!r} ≠ {self.status!r}")
        values = record.get("fields", {})
        for name, expected in sorted(self.fields.items()):
            if name not in values or not _values_equal(values[name], expected, 0, self.case):
                wrong.append(f"fields.{name} {values.get(name)!r} ≠ {expected!r}")
        if self.comment_contains is not None:
            needle = _fold(self.comment_contains, self.case)
            if not any(needle in _fold(c, self.case) for c in _comments(record)):
                wrong.append(f"no comment contains {self.comment_contains!r}")
        if wrong:
            return CheckResult(False, f"record {self.record}: " + "; ".join(wrong))
        return CheckResult(True, f"record {self.record} is in the expected state")


def _address(recipient: str) -> str:
    found = re.search(r"<([^>]+)>\s*$", recipient)
    return (found.group(1) if found else recipient).strip().casefold()


class _MailFilter(BaseCheck):
    to: str
    """Recipient: a person id, mailing-list id or address (compared case-insensitively; a
    `Name <address>` recipient compares by its address)."""
    include_cc: bool = False
    """Also count the recipient when only copied."""
    subject_contains: str | None = None
    """Only messages whose subject contains this."""
    body_contains: str | None = None
    """Only messages whose body contains this."""
    case: CaseRule = "sensitive"
    """Comparison rule for `subject_contains` and `body_contains`."""
    claims: list[Claim] = Field(default_factory=list)
    """Only messages whose subject and body state every claim (see `worldkit.overlay.claims`)."""

    def _matching(self, ctx: GradingContext) -> list[dict[str, Any]]:
        target = _address(self.to)
        found = []
        for message in ctx.sent:
            recipients = _as_list(message.get("to") or [])
            if self.include_cc:
                recipients += _as_list(message.get("cc") or [])
            if target not in {_address(r) for r in recipients}:
                continue
            if self.subject_contains is not None and _fold(self.subject_contains, self.case) not in _fold(
                message.get("subject", ""), self.case
            ):
                continue
            if self.body_contains is not None and _fold(self.body_contains, self.case) not in _fold(
                message.get("body", ""), self.case
            ):
                continue
            if self.claims:
                text = discount_request(f"{message.get('subject', '')}\n{message.get('body', '')}", ctx.request)
                if find_claims(self.claims, [text])[1]:
                    continue
            found.append(message)
        return found

    def _what(self) -> str:
        extra = "".join(
            f", {k} {v!r}" for k, v in (("subject ∋", self.subject_contains), ("body ∋", self.body_contains)) if v
        )
        extra += "".join(f", stating {c.label()}" for c in self.claims)
        return f"mail to {self.to}{extra}"


@register_check
class MailSent(_MailFilter):
    """The seat sent at least one message to the recipient (optionally with subject/body text)."""

    type: Literal["mail_sent"] = "mail_sent"
    """`mail_sent`."""

    def evaluate(self, ctx: GradingContext) -> CheckResult:
        unknown = _needs_state(ctx, f"whether {self._what()} was sent")
        if unknown is not None:
            return unknown
        count = len(self._matching(ctx))
        return CheckResult(count > 0, f"{count} {self._what()} sent")


@register_check
class MailNotSent(_MailFilter):
    """The seat sent no message to the recipient (matching the optional subject/body text)."""

    type: Literal["mail_not_sent"] = "mail_not_sent"
    """`mail_not_sent`."""
    credits_absence: ClassVar[bool] = True

    def evaluate(self, ctx: GradingContext) -> CheckResult:
        unknown = _needs_state(ctx, f"whether {self._what()} was sent")
        if unknown is not None:
            return unknown
        count = len(self._matching(ctx))
        return CheckResult(count == 0, f"{count} {self._what()} sent")


@register_check
class ChangeMade(BaseCheck):
    """A declared state change happened (e.g. the deliverable's `state_change`)."""

    type: Literal["change_made"] = "change_made"
    """`change_made`."""
    change: ChangeSpec
    """The change that must appear among the run's successful state changes."""

    def evaluate(self, ctx: GradingContext) -> CheckResult:
        unknown = None if self.change.kind == "write_file" else _needs_state(ctx, self.change.label())
        if unknown is not None:
            return unknown
        for change in observed_changes(ctx):
            if change.outcome == "ok" and self.change.matches(change.tool, change.arguments):
                return CheckResult(True, f"{self.change.label()}: made ({change.origin})")
        return CheckResult(False, f"{self.change.label()}: not made")


@register_check
class NoProhibitedChange(BaseCheck):
    """None of the overlay's prohibited changes happened, read from the event log (or, without
    a log, from the final state). In the overlay YAML, `rules` is filled in from `prohibited`:
    all of them, or those named in `ids`."""

    type: Literal["no_prohibited_change"] = "no_prohibited_change"
    """`no_prohibited_change`."""
    credits_absence: ClassVar[bool] = True
    ids: list[str] = Field(default_factory=list)
    """Prohibited-change ids to check (empty: all of the overlay's)."""
    rules: list[ProhibitedChange] = Field(default_factory=list)
    """The resolved prohibited changes (filled in when the overlay is loaded)."""
    attempts_count: bool = False
    """Also fail on denied or failed attempts (by default only changes that happened count)."""

    def evaluate(self, ctx: GradingContext) -> CheckResult:
        if any(rule.kind != "write_file" for rule in self.rules):
            unknown = _needs_state(ctx, "whether a prohibited mail or record change happened")
            if unknown is not None:
                return unknown
        hits = [
            f"{rule.label()} ({change.origin}{', ' + change.outcome if change.outcome != 'ok' else ''})"
            for change in observed_changes(ctx, attempts=self.attempts_count)
            for rule in self.rules
            if rule.matches(change.tool, change.arguments)
        ]
        source = "event log" if ctx.events is not None else "final state"
        if hits:
            return CheckResult(False, "prohibited: " + "; ".join(hits))
        return CheckResult(True, f"no prohibited change among {len(self.rules)} rule(s) ({source})")


# Importing the modules holding further check types registers them (they need `register_check`).
from worldkit.overlay import claim_checks, table_checks  # noqa: E402, F401

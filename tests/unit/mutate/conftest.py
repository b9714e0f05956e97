"""A small task on the overlay fixture world whose rubric is one table criterion, graded by a check
type written here (sound, or deliberately weak) — not by worldkit's own checks, which another part
of the project is rewriting, and never by the generator's code."""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import Field

from tests.fixtures.overlays.paths import GOOD, good_raw
from worldkit.overlay import Overlay
from worldkit.overlay.checks import CHECKS, BaseCheck, register_check
from worldkit.overlay.context import CheckResult, GradingContext
from worldkit.overlay.load import parse_overlay

TABLE = "record,status,decided\nCC-1,approved,2025-04-01\nCC-2,rejected,2025-05-14\nCC-3,approved,2025-06-20\n"
ROWS = [
    {"record": "CC-1", "status": "approved", "decided": "2025-04-01"},
    {"record": "CC-2", "status": "rejected", "decided": "2025-05-14"},
    {"record": "CC-3", "status": "approved", "decided": "2025-06-20"},
]
MEMO = "# Status\n\nCC-1 is approved. It was approved on 1 Apr 2025 by Lee Lead.\n\nCC-2 was rejected on 2025-05-14.\n"
_FORMS = ("%Y-%m-%d", "%d %b %Y", "%d %B %Y", "%B %d, %Y", "%d/%m/%Y")


def _decode(data: bytes) -> str:
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("cp1252")


def _read(ctx: GradingContext, path: str) -> list[list[str]] | None:
    file = ctx.workspace / path
    book = file.with_suffix(".xlsx")
    if file.is_file():
        text = _decode(file.read_bytes())
        lines = [line for line in text.splitlines() if line.strip()]
        if not lines:
            return None
        delimiter = max(",;\t", key=lines[0].count)
        return [[c.strip() for c in row] for row in csv.reader(lines, delimiter=delimiter)]
    if book.is_file():
        from openpyxl import load_workbook

        sheet = load_workbook(io.BytesIO(book.read_bytes())).active
        return [["" if v is None else str(v) for v in row] for row in sheet.iter_rows(values_only=True)]
    return None


def _date(text: str) -> dt.date | None:
    for form in _FORMS:
        try:
            return dt.datetime.strptime(text.strip(), form).date()
        except ValueError:
            continue
    return None


def _ident(text: str) -> str:
    return re.sub(r"[\s\-_]", "", text.casefold())


class _TableCheck(BaseCheck):
    path: str
    key: list[str]
    rows: list[dict[str, Any]] = Field(default_factory=list)
    absent: list[dict[str, Any]] = Field(default_factory=list)
    columns: dict[str, dict[str, Any]] = Field(default_factory=dict)

    def workspace_paths(self) -> list[str]:
        return [self.path]

    def _compare(self) -> list[str]:
        return [c for c in self.rows[0] if c not in self.key] if self.rows else []

    def evaluate(self, ctx: GradingContext) -> CheckResult:
        table = _read(ctx, self.path)
        if not table or len(table) < 2:
            return CheckResult(False, "no table")
        header = [h.casefold() for h in table[0]]
        body = [dict(zip(header, r)) for r in table[1:] if sum(bool(c) for c in r) > 1]  # a one-cell line is a note
        if any(k not in header for k in self.key):
            return CheckResult(False, "no key column")

        def found(expected: dict[str, Any]) -> list[dict[str, str]]:
            return [r for r in body if all(_ident(r.get(k, "")) == _ident(str(expected[k])) for k in self.key)]

        for expected in self.rows:
            matches = found(expected)
            if len(matches) != 1:
                return CheckResult(False, f"{len(matches)} rows for {expected}")
            for column in self._compare():
                actual, wanted = matches[0].get(column, ""), str(expected[column])
                same = _date(actual) == _date(wanted) if _date(wanted) else actual.casefold() == wanted.casefold()
                if not same:
                    return CheckResult(False, f"{column} {actual!r} for {expected}")
        if any(found(a) for a in self.absent):
            return CheckResult(False, "an excluded row is listed")
        return CheckResult(True, "as expected")


class SoundTable(_TableCheck):
    """Every declared row once, every declared column compared (dates in any written form)."""

    type: Literal["test_sound_table"] = "test_sound_table"


class WeakTable(_TableCheck):
    """Deliberately weak: finds the rows but never compares their values."""

    type: Literal["test_weak_table"] = "test_weak_table"

    def _compare(self) -> list[str]:
        return []


@pytest.fixture(autouse=True)
def test_check_types() -> Iterator[None]:
    """The two test check types, registered for these tests only (the registry is the process's)."""
    for cls in (SoundTable, WeakTable):
        register_check(cls)
    yield
    for cls in (SoundTable, WeakTable):
        CHECKS.pop(cls.model_fields["type"].default, None)


def task(kind: str) -> Callable[[dict[str, Any]], None]:
    def change(raw: dict[str, Any]) -> None:
        raw["rubric"] = [{
            "id": "T1", "text": "status.csv gives each change control's status and decision date.",
            "route": "deterministic",
            "check": {"type": kind, "path": "status.csv", "key": ["record"], "rows": ROWS,
                      "absent": [{"record": "CC-9"}],
                      "columns": {"status": {"synonyms": {"approved": [], "rejected": [], "withdrawn": []}}}},
        }]  # fmt: skip
        raw["evidence"] = {"T1": [[{"surface": "records", "locator": "CC-1"}]]}
        raw["counterfactuals"] = []
        raw["curation"] = {}
        raw["truth"] = {}
        raw["request"] = ("Lee asked where change controls CC-1 to CC-3 stand: give each one's status and decision "
                          "date in a table, and a short memo.\n")  # names no file: any format a person saves is right
        raw["reference"]["actions"] = [
            {"tool": "get_record", "args": {"id": "CC-1"}},
            {"tool": "write_file", "args": {"path": "status.csv", "content": TABLE}},
            {"tool": "write_file", "args": {"path": "report.md", "content": MEMO}},
        ]

    return change


@pytest.fixture()
def build_task() -> Callable[[str], Overlay]:
    """The task with its table criterion graded by `test_sound_table` or `test_weak_table`."""

    def build(kind: str) -> Overlay:
        raw = good_raw()
        task(kind)(raw)
        return parse_overlay(raw, GOOD.parent / f"{kind}.yaml")

    return build


@pytest.fixture()
def projection(tmp_path: Path, build_task: Callable[[str], Overlay]) -> Path:
    from worldkit.materialize import materialize
    from worldkit.overlay.load import overlay_world

    model = build_task("test_sound_table")
    return materialize(overlay_world(model), model.rev, model.date, model.seat, tmp_path / "projection").out

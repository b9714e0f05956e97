"""What a rubric declares about its deliverables, read from the criteria's check data by id.

The mutation campaign decides which criteria a wrong variant *touches* from this alone: a table
row a criterion lists (by its key values), the columns it gives values for, the rows it says must
be absent, the claims and dates a text criterion states. It reads the checks' declared fields
(`model_dump`), never calls their parsing or matching code: a generator and a grader that share
code cannot test each other. A check type this module does not know declares nothing, so no
generated mutation counts for or against it.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Any

from worldkit.overlay.models import Overlay

WHOLE_ROW = "*"
"""A table key column that stands for the whole row (rows found by what they say)."""


def column_key(name: str) -> str:
    """A header name as the rubric writes column names (`Record ID` → `record_id`)."""
    return re.sub(r"[\s\-.]+", "_", name.strip().casefold()).strip("_")


@dataclass(frozen=True)
class DeclaredRow:
    """One row a table criterion lists: present with values, or absent."""

    criterion: str
    path: str
    key: tuple[str, ...]
    values: dict[str, Any]
    """Column (as `column_key`) → declared value (`*` → `{claim: [...]}` for whole-row keys)."""
    absent: bool
    tolerance: dict[str, float] = field(default_factory=dict)
    """Column → declared numeric tolerance."""
    vocabulary: dict[str, list[str]] = field(default_factory=dict)
    """Column → declared enumeration values (synonym keys)."""

    def checked_columns(self) -> list[str]:
        return [c for c in self.values if c not in self.key]


@dataclass(frozen=True)
class DeclaredClaim:
    """One claim a text criterion requires (or forbids) in a workspace file."""

    criterion: str
    path: str
    terms: list[Any]
    """The claim's terms as declared (strings, `{number}`, `{date}`, `{regex}`, `{any: [...]}`)."""
    window: str
    forbid: bool


@dataclass(frozen=True)
class Declared:
    """Everything the rubric declares, by criterion id."""

    rows: list[DeclaredRow]
    claims: list[DeclaredClaim]
    deterministic: list[str]
    """Ids of the criteria with a check (the ones the campaign grades)."""

    def rows_of(self, path: str) -> list[DeclaredRow]:
        return [r for r in self.rows if r.path == path]

    def claims_of(self, path: str) -> list[DeclaredClaim]:
        return [c for c in self.claims if c.path == path]

    def paths(self) -> set[str]:
        return {r.path for r in self.rows} | {c.path for c in self.claims}


def mail_target(recipient: str) -> str:
    """The pseudo-path the claims of mail to `recipient` are declared under (`mail:<recipient>`)."""
    return f"mail:{recipient.strip().casefold()}"


def plain_term(term: Any) -> Any:
    """A dumped term in its YAML shorthand: `{text: s}` → `s`, alternatives likewise."""
    if isinstance(term, dict):
        if set(term) == {"text"}:
            return term["text"]
        if isinstance(term.get("any"), list):
            return {"any": [plain_term(t) for t in term["any"]]}
        return {k: v for k, v in term.items() if v is not None and v != ""}
    return term


def _claim_terms(claim: dict[str, Any]) -> tuple[list[Any], str]:
    terms = claim.get("all") or claim.get("terms") or []
    return [plain_term(t) for t in terms], str(claim.get("within") or "sentence")


def declared(overlay: Overlay) -> Declared:
    """Read the rubric's declarations (see the module docstring)."""
    rows: list[DeclaredRow] = []
    claims: list[DeclaredClaim] = []
    deterministic: list[str] = []
    for criterion in overlay.rubric:
        if criterion.check is None:
            continue
        deterministic.append(criterion.id)
        data = criterion.check.model_dump(mode="python")
        path = data.get("path")
        if not isinstance(path, str) and isinstance(data.get("to"), str) and data.get("claims"):
            path = mail_target(data["to"])  # a mail check's claims sit in the body of a mail to that recipient
        if not isinstance(path, str):
            continue
        key = tuple(column_key(k) if k != WHOLE_ROW else WHOLE_ROW for k in data.get("key") or [])
        rules = data.get("columns") or {}
        tolerance = {column_key(c): float(r.get("tolerance") or 0) for c, r in rules.items() if isinstance(r, dict)}
        vocabulary = {column_key(c): sorted(r.get("synonyms") or {}) for c, r in rules.items() if isinstance(r, dict)}
        for absent, listed in ((False, data.get("rows") or []), (True, data.get("absent") or [])):
            for row in listed:
                values = {(column_key(c) if c != WHOLE_ROW else WHOLE_ROW): v for c, v in row.items()}
                rows.append(DeclaredRow(criterion.id, path, key, values, absent, tolerance, vocabulary))
        for forbid, listed in ((False, data.get("claims") or []), (True, data.get("forbid") or [])):
            for claim in listed:
                if isinstance(claim, dict):
                    terms, window = _claim_terms(claim)
                    claims.append(DeclaredClaim(criterion.id, path, terms, window, forbid))
    return Declared(rows, claims, deterministic)


def literal_terms(terms: list[Any], *, required_only: bool = False) -> list[str]:
    """The plain-text terms of a claim (with those inside `any:` unless `required_only`)."""
    found: list[str] = []
    for term in terms:
        if isinstance(term, str):
            found.append(term)
        elif isinstance(term, dict) and isinstance(term.get("any"), list) and not required_only:
            found += literal_terms(term["any"])
    return found


def date_terms(terms: list[Any], *, required_only: bool = False) -> list[dt.date]:
    """The `{date: …}` terms of a claim (with those inside `any:` unless `required_only`)."""
    found: list[dt.date] = []
    for term in terms:
        if isinstance(term, dict) and isinstance(term.get("date"), dt.date):
            found.append(term["date"])
        elif isinstance(term, dict) and isinstance(term.get("any"), list) and not required_only:
            found += date_terms(term["any"])
    return found


def number_terms(terms: list[Any], *, required_only: bool = True) -> list[float]:
    """The `{number: …}` terms of a claim (not those inside `any:` unless asked)."""
    found: list[float] = []
    for term in terms:
        if isinstance(term, dict) and isinstance(term.get("number"), (int, float)):
            found.append(float(term["number"]))
        elif isinstance(term, dict) and isinstance(term.get("any"), list) and not required_only:
            found += number_terms(term["any"], required_only=False)
    return found

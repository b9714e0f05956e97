"""Wrong answers for the `searcher` agent: the reference deliverable with one criterion spoiled.

A `Deliverable` is what the overlay's reference actions leave behind (workspace files written,
mail sent). `WrongAnswers` is the plug-in point that turns it into a deliverable that no longer
carries a criterion's correct content; `ReferencePerturbation` is worldkit's own small one, used
until a generator of wrong variants (the rubric-mutation work) is plugged in. It reads the
criterion's check (or, for a semantic criterion, its required facts in `truth.criteria`) only to
find *where* the content lies, and then, with the given random generator:

- a table row a `csv_rows` check asks for: its checked cell is set to another value of the
  column's enumeration, or a number is moved well outside tolerance; otherwise the row is left
  out (missing); a row a check says must be absent is added;
- a `claims` check, a semantic criterion's required facts, a `regex` or `contains` check: every
  sentence (else line, else paragraph) that states it is removed (missing);
- a `mail_sent` check: the mail to that recipient is not sent.

Criteria that only forbid something (`forbid`-only claims, `no_prohibited_change`, absences) are
not spoiled: like an employee's, a deliverable that exists passes them. Removing a sentence can
also remove content another criterion needs (a memo sentence serving two criteria): the
perturbation errs toward failing, never toward passing.

Must never be used to grade anything: it makes answers, the grader judges them.
"""

from __future__ import annotations

import csv
import io
import random
import re
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from worldkit.overlay.claims import Claim, TextTerm
from worldkit.overlay.models import Overlay

__all__ = ["Deliverable", "ReferencePerturbation", "WrongAnswers", "reference_deliverable"]

_MAX_REMOVALS = 200


@dataclass(frozen=True)
class Deliverable:
    """What a task's deliverable actions leave behind: workspace files and mail sent."""

    files: dict[str, str] = field(default_factory=dict)
    """Workspace path → text."""
    messages: tuple[dict[str, Any], ...] = ()
    """`send_message` arguments, in order."""

    def actions(self) -> list[tuple[str, dict[str, Any]]]:
        """The tool calls that produce it: files by path, then the mail."""
        calls = [("write_file", {"path": p, "content": t}) for p, t in sorted(self.files.items()) if t.strip()]
        return calls + [("send_message", dict(m)) for m in self.messages]


def reference_deliverable(overlay: Overlay) -> Deliverable:
    """The deliverable the overlay's reference actions write (last write of a path wins)."""
    files: dict[str, str] = {}
    messages: list[dict[str, Any]] = []
    for action in overlay.reference.actions:
        args = dict(action.args)
        if action.tool == "write_file":
            files[str(args["path"]).removeprefix("workspace/")] = str(args["content"])
        elif action.tool == "send_message":
            messages.append(args)
    return Deliverable(files=files, messages=tuple(messages))


class WrongAnswers(Protocol):
    """Turns a deliverable into one that does not carry `criterion`'s correct content."""

    def spoil(self, overlay: Overlay, criterion: str, deliverable: Deliverable, rng: random.Random) -> Deliverable: ...


class ReferencePerturbation:
    """worldkit's own small perturbation of the reference deliverable (see the module docstring)."""

    name = "reference-perturbation"

    def spoil(self, overlay: Overlay, criterion: str, deliverable: Deliverable, rng: random.Random) -> Deliverable:
        found = [c for c in overlay.rubric if c.id == criterion]
        if not found:
            raise KeyError(f"overlay {overlay.id} has no criterion {criterion!r}")
        check = found[0].check
        if found[0].route == "semantic" or check is None:
            facts = overlay.truth.criteria.get(criterion) if overlay.truth else None
            claims = [claim for fact in (facts.required if facts else []) for claim in fact.any]
            return _remove_claims(deliverable, claims, None, _checked_columns(overlay))
        kind = getattr(check, "type", "")
        path = str(getattr(check, "path", "") or "").removeprefix("workspace/") or None
        if kind == "csv_rows":
            return _spoil_rows(deliverable, check, path, rng)
        if kind == "claims":
            return _remove_claims(deliverable, list(check.claims), path)
        if kind == "mail_sent":
            return replace(deliverable, messages=tuple(m for m in deliverable.messages if check.to not in m.get("to", [])))
        if kind == "regex" and check.expect == "match":
            pattern = re.compile(check.pattern, 0 if check.case == "sensitive" else re.IGNORECASE)
            return _drop_lines(deliverable, path, lambda line: bool(pattern.search(line)))
        if kind == "contains":
            texts = [check.text] if isinstance(check.text, str) else list(check.text)
            folded = [t.lower() for t in texts]
            return _drop_lines(deliverable, path, lambda line: any(t in line.lower() for t in folded))
        return deliverable


def _drop_lines(deliverable: Deliverable, path: str | None, hit: Any) -> Deliverable:
    files = dict(deliverable.files)
    for name in [path] if path else sorted(files):
        if name in files:
            files[name] = "".join(line for line in files[name].splitlines(keepends=True) if not hit(line))
    return replace(deliverable, files=files)


def _checked_columns(overlay: Overlay) -> dict[str, set[str]]:
    """Table path → the columns some `csv_rows` check reads (keys and checked cells)."""
    checked: dict[str, set[str]] = {}
    for criterion in overlay.rubric:
        check = criterion.check
        if getattr(check, "type", "") == "csv_rows":
            names = checked.setdefault(str(check.path).removeprefix("workspace/"), set())
            names |= {_fold(k) for k in check.key}
            names |= {_fold(c) for row in [*check.rows, *check.absent] for c in row}
    return checked


def _remove_claims(deliverable: Deliverable, claims: list[Claim], path: str | None,
                   tables: dict[str, set[str]] | None = None) -> Deliverable:
    """Remove, from the file at `path` (every file and mail body without one), the smallest
    pieces of text (sentence, else line, else paragraph) until no claim is stated. In a table
    some check reads (`tables`), only the cells no check reads are blanked, in the rows that
    state a claim: the checked cells belong to their own criteria."""
    files = dict(deliverable.files)
    for name in [path] if path else sorted(files):
        if name not in files:
            continue
        if tables is not None and name in tables:
            files[name] = _blank_cells(files[name], claims, tables[name])
        else:
            files[name] = _strip(files[name], claims)
    messages = deliverable.messages
    if path is None:
        messages = tuple({**m, "body": _strip(str(m.get("body", "")), claims)} for m in messages)
    return replace(deliverable, files=files, messages=messages)


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def _blank_cells(text: str, claims: list[Claim], protected: set[str]) -> str:
    table = list(csv.reader(io.StringIO(text)))
    if not table:
        return text
    header, out = table[0], [table[0]]
    free = [i for i, name in enumerate(header) if _fold(name) not in protected]
    for row in table[1:]:
        line = ",".join(row)
        if free and any(c.match(line) is not None for c in claims):
            row = [("" if i in free else cell) for i, cell in enumerate(row)]
        out.append(row)
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(out)
    return buffer.getvalue()


def _strip(text: str, claims: list[Claim]) -> str:
    for _ in range(_MAX_REMOVALS):
        stated = [c for c in claims if c.match(text) is not None]
        if not stated:
            return re.sub(r"\n{3,}", "\n\n", text)
        smaller = _cut(text, stated[0])
        if smaller is None or smaller == text:
            return text  # stated only across pieces this perturbation does not cut (e.g. a section)
        text = smaller
    return text


def _cut(text: str, claim: Claim) -> str | None:
    paragraphs = text.split("\n\n")
    for p_index, paragraph in enumerate(paragraphs):
        if claim.match(paragraph) is None:
            continue
        lines = paragraph.split("\n")
        for l_index, line in enumerate(lines):
            if claim.match(line) is None:
                continue
            sentences = _SENTENCE_END.split(line)
            for s_index, sentence in enumerate(sentences):
                if claim.match(sentence) is not None and len(sentences) > 1:
                    lines[l_index] = " ".join(sentences[:s_index] + sentences[s_index + 1 :])
                    break
            else:
                del lines[l_index]
            paragraphs[p_index] = "\n".join(lines)
            return "\n\n".join(paragraphs)
        del paragraphs[p_index]
        return "\n\n".join(paragraphs)
    return None


def _fold(value: Any) -> str:
    return " ".join(str(value).split()).casefold()


def _spoil_rows(deliverable: Deliverable, check: Any, path: str | None, rng: random.Random) -> Deliverable:
    if path is None or path not in deliverable.files:
        return deliverable
    table = list(csv.reader(io.StringIO(deliverable.files[path])))
    if not table:
        return deliverable
    header, rows = table[0], [r for r in table[1:] if any(cell.strip() for cell in r)]
    position = {_fold(name): i for i, name in enumerate(header)}
    keys = [k for k in check.key if _fold(k) in position or k == _ANY_CELL]
    if len(keys) != len(check.key):
        return deliverable

    def same_key(row: list[str], wanted: dict[str, Any]) -> bool:
        for k in keys:
            if k not in wanted:
                continue
            if k == _ANY_CELL:  # the row is found by a claim over all its cells
                if _row_claim(wanted[k]).match(" ".join(row)) is None:
                    return False
            elif position[_fold(k)] >= len(row) or _fold(row[position[_fold(k)]]) != _fold(wanted[k]):
                return False
        return True

    kept: list[list[str]] = []
    for row in rows:
        wanted = next((w for w in check.rows if same_key(row, w)), None)
        if wanted is None:
            kept.append(row)
            continue
        spoiled = _wrong_row(row, wanted, keys, position, check, rng)
        if spoiled is not None:
            kept.append(spoiled)
    for absent in check.absent:
        extra = list(rows[0]) if rows else [""] * len(header)
        for name, value in absent.items():
            if name == _ANY_CELL:
                words = [t.text for t in _row_claim(value).all if isinstance(t, TextTerm)]
                if not words:
                    break  # a pattern, not a value: nothing plausible to write
                extra[0] = words[0]
            elif _fold(name) in position:
                extra[position[_fold(name)]] = str(value)
        else:
            kept.append(extra)
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows([header, *kept])
    return replace(deliverable, files={**deliverable.files, path: out.getvalue()})


_ANY_CELL = "*"


def _row_claim(spec: Any) -> Claim:
    """A `*` key's claim (`{claim: [terms]}`), matched over the whole row."""
    terms = spec.get("claim", []) if isinstance(spec, dict) else [spec]
    return Claim.model_validate({"all": terms, "within": "document"})


def _wrong_row(row: list[str], wanted: dict[str, Any], keys: list[str], position: dict[str, int], check: Any,
               rng: random.Random) -> list[str] | None:
    """The row with one checked cell wrong, or None (the row left out) when no cell can be."""
    rules = {_fold(name): rule for name, rule in check.columns.items()}
    for name in sorted(n for n in wanted if n not in keys and _fold(n) in position):
        rule = rules.get(_fold(name))
        at = position[_fold(name)]
        if at >= len(row):
            continue
        others = sorted(v for v in (rule.synonyms if rule else {}) if _fold(v) != _fold(wanted[name]))
        if others:
            return [*row[:at], rng.choice(others), *row[at + 1 :]]
        try:
            number = float(str(wanted[name]))
        except ValueError:
            continue
        shift = max(abs(number) * 0.5, (rule.tolerance if rule else 0.0) * 10, 1.0)
        return [*row[:at], f"{number + shift:g}", *row[at + 1 :]]
    return None

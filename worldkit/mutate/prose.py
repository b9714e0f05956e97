"""Variants of a text deliverable (a memo): right renderings and wordings, and wrong statements.

Right: UTF-8 with BOM, UTF-16, Windows-1252 (CRLF); a `.docx` and a `.txt` rendering (where the
request does not name the memo's file: see `campaign`); a markdown
table written as prose; dates written another way; decimals with a trailing zero and `%` closed
up; identifiers in lower case or spaced (`ZV 23004`); a closing comment; hedged openings; a
footnote naming the excluded items; a terse memo (only the sentences the rubric's claims sit in,
and headings); a verbose one (a sentence added to each paragraph).

Wrong: each claim the rubric requires negated where it is stated; a declared date a day or a
month off; a declared number's unit substituted; a declared identifier written wrong. A wrong
variant touches the criteria whose declared claim terms it changes: the claim negated, the
required date shifted (or a date a `forbid` claim's `date_other_than` allows, where the claim's
other terms stand with it), the required number's unit, the required identifier (dates the rubric
does not declare are shifted too, touching nothing: mistakes no criterion watches).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import PurePosixPath

from worldkit.mutate import render
from worldkit.mutate import text as written
from worldkit.mutate.declared import DeclaredClaim, DeclaredRow, WHOLE_ROW, date_terms, literal_terms, number_terms
from worldkit.mutate.variant import Variant, rng

AUXILIARIES = re.compile(r"\b(is|are|was|were|has|have|had|will|can|could|should|must|may|does|did)\b")
UNITS = [("%", "mg/mL"), ("mg/mL", "%"), ("months", "weeks"), ("month", "week"), ("°C", "°F"), ("days", "weeks")]
HEDGE = "As far as the records show, "
COMMENT = ("Further remarks: this memo was prepared from the records available to me on the review date; "
           "I am glad to walk through any item.")  # fmt: skip
MAX_UNDECLARED_DATES = 4
"""Dates the rubric does not declare that are shifted too (seeded choice), to show what no criterion watches."""
ENDASH = "Prepared for review – comments welcome.\n"
"""Added to an ASCII memo saved as Windows-1252, so the encoding shows (plain ASCII reads the same in any)."""
VERBOSE = "This point is documented in the sources cited in this memo."


def _file(path: str, data: bytes) -> tuple[tuple[str, bytes | None], ...]:
    return ((path, data),)


def _moved(path: str, suffix: str, data: bytes) -> tuple[tuple[str, bytes | None], ...]:
    return ((path, None), (str(PurePosixPath(path).with_suffix(suffix)), data))


def _is_body(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith(("#", "|", "-", "*", ">")) and not re.match(r"^\d+\.", stripped)


# --- right ------------------------------------------------------------------------------------


def right_memos(
    path: str, text: str, claims: list[DeclaredClaim], rows: list[DeclaredRow], seed: int, *, formats: bool = True,
    terse: bool = True,
) -> Iterator[Variant]:
    """Right renderings and wordings of the reference memo (module docstring); `formats`: also as
    `.docx` and `.txt` files; `terse`: also the terse memo (only when every criterion reading the
    file declares its claims, so what it keeps is known to be all that is asked)."""

    def right(family: str, new: str | bytes, detail: str, files: tuple[tuple[str, bytes | None], ...] = ()) -> Variant:
        data = new.encode("utf-8") if isinstance(new, str) else new
        return Variant(family=family, kind="right", target=path, files=files or _file(path, data), detail=detail)

    for name, codec in render.ENCODINGS.items():
        source = text + "\n" + ENDASH if codec == "cp1252" and text.isascii() else text
        data = render.encode(source, codec, crlf=True)
        if data is not None:
            yield right(f"encoding-{name}", data, f"saved as {codec} with CRLF line ends")
    if formats:
        yield right("docx", b"", "saved as a word-processor document", _moved(path, ".docx", render.docx(text)))
        plain = re.sub(r"(\*\*|__|`)", "", re.sub(r"(?m)^#{1,6}\s+", "", text))
        yield right("txt", b"", "saved as plain text", _moved(path, ".txt", plain.encode("utf-8")))
    prose = _tables_as_prose(text)
    if prose != text:
        yield right("table-as-prose", prose, "the markdown table written as sentences")
    for form in ("iso", "short", "us", "slash"):
        changed = written.rewrite_dates(text, lambda d, f, form=form: None if f == form or (form == "slash" and d.day <= 12)
                                        else written.write_date(d, form))  # fmt: skip
        if changed != text:
            yield right(f"dates-{form}", changed, f"dates written in the {form} form")
    numbers = written.DECIMAL.sub(lambda m: m.group(0) + "0", text)
    numbers = re.sub(r"(\d) %", r"\1%", numbers)
    if numbers != text:
        yield right("numbers-written", numbers, "decimals with a trailing zero, `%` closed up")
    lower = written.ID.sub(lambda m: m.group(0).lower() if any(c.isdigit() for c in m.group(0)) else m.group(0), text)
    if lower != text:
        yield right("ids-lowercase", lower, "identifiers in lower case")
    spaced = re.sub(r"(?<![\w-])([A-Z]{2,})-(\d{3,})(?![\w-])", r"\1 \2", text)
    if spaced != text:
        yield right("ids-spaced", spaced, "`ZV-23004` written `ZV 23004`")
    yield right("commentary", text.rstrip("\n") + "\n\n" + COMMENT + "\n", "a closing comment added")
    hedged = _hedged(text)
    if hedged != text:
        yield right("hedged", hedged, "paragraphs open with a hedge")
    excluded = _excluded(rows, claims)
    if excluded:
        note = f"\nNote: {', '.join(excluded)} were reviewed and are excluded from this memo's findings.\n"
        yield right("footnote-excluded", text.rstrip("\n") + "\n" + note, f"a footnote naming {', '.join(excluded)}")
    short = _terse(text, claims) if terse else None
    if short is not None and short != text:
        yield right("terse", short, "only headings and the sentences that state the declared claims")
    verbose = "\n\n".join(
        block + (" " + VERBOSE if _is_body(block.splitlines()[-1]) else "") for block in text.rstrip("\n").split("\n\n")
    ) + "\n"  # fmt: skip
    yield right("verbose", verbose, "a sentence added to each paragraph")


def _tables_as_prose(text: str) -> str:
    lines = text.split("\n")
    out: list[str] = []
    index = 0
    while index < len(lines):
        if lines[index].lstrip().startswith("|"):
            block = []
            while index < len(lines) and lines[index].lstrip().startswith("|"):
                block.append([c.strip() for c in lines[index].strip().strip("|").split("|")])
                index += 1
            rows = [r for r in block if not all(re.fullmatch(r":?-{2,}:?", c) for c in r if c)]
            if len(rows) >= 2:
                header = rows[0]
                for row in rows[1:]:
                    parts = [f"{h} {v}" for h, v in zip(header[1:], row[1:]) if v]
                    out.append(f"{header[0]} {row[0]}: " + "; ".join(parts) + ".")
            continue
        out.append(lines[index])
        index += 1
    return "\n".join(out)


def _hedged(text: str) -> str:
    out = []
    for block in text.split("\n\n"):
        if _is_body(block) and block.strip()[0].isupper():
            lead = block.lstrip()
            first = lead.split(" ", 1)[0]
            if first[1:].islower():  # an ordinary word, not a name or an identifier
                lead = lead[0].lower() + lead[1:]
            block = block[: len(block) - len(block.lstrip())] + HEDGE + lead
        out.append(block)
    return "\n\n".join(out)


def _excluded(rows: list[DeclaredRow], claims: list[DeclaredClaim]) -> list[str]:
    names = {str(r.values[r.key[0]]) for r in rows if r.absent and len(r.key) == 1  # one key: the item itself
             and r.key[0] != WHOLE_ROW and isinstance(r.values.get(r.key[0]), str)}
    names |= {t for r in rows if r.absent and isinstance(r.values.get(WHOLE_ROW), dict)
              for t in literal_terms(r.values[WHOLE_ROW].get("claim", []))}  # fmt: skip
    return sorted(n for n in names if written.is_identifier(n))


def _terse(text: str, claims: list[DeclaredClaim]) -> str | None:
    wanted = [c for c in claims if not c.forbid]
    if any(c.window not in ("sentence", "line", "paragraph") for c in wanted):
        return None
    keep: set[tuple[int, int]] = set()
    for claim in wanted:
        keep |= set(written.sites(text, claim.terms, claim.window))
    if not keep:
        return None
    spans = sorted(keep | {(m.start(), m.end()) for m in re.finditer(r"(?m)^#{1,6} .*$", text)})
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return "\n\n".join(text[a:b].strip() for a, b in merged) + "\n"


# --- wrong ------------------------------------------------------------------------------------


def negate(sentence: str, choice: int) -> str:
    """The sentence negated: `not` after each auxiliary verb (taken away where the verb
    already has one: `is not ready` → `is ready`), or `It is not true that …`. A heading, a table
    row or a line of under four words (a greeting, a signature, a label) is left as it is:
    negating it says nothing about a claim."""
    stripped = sentence.strip().strip("*_")
    if stripped.startswith(("#", "|")) or len(stripped.split()) < 4:
        return sentence
    if AUXILIARIES.search(sentence) and choice % 2 == 0:
        # every auxiliary: "was scheduled and is still outstanding" is denied in both clauses
        marked = AUXILIARIES.sub(lambda m: m.group(0) + "\0", sentence)
        return re.sub(r"\0 (?:not|no)\b", "", marked).replace("\0", " not")
    lead = len(sentence) - len(sentence.lstrip(" -*0123456789.#"))
    rest = sentence[lead:]
    first = rest.split(" ", 1)[0]
    if first[1:].islower():  # an ordinary word, not a name or an identifier
        rest = rest[0].lower() + rest[1:]
    return sentence[:lead] + "It is not true that " + rest


LABEL = re.compile(r"^[\s\-*#\d.]*([^:\n]{1,40}):\s")
"""A line's lead label (`Open point: …`, `Near miss: …`): negating the sentence after it leaves it said."""


def _unreachable(sentence: str, terms: list[object], choice: int) -> bool:
    """Whether the claim stays stated after `negate`: the sentence states it and is left as it is
    (a heading, a table row), or one of its terms sits in the sentence's lead label."""
    if negate(sentence, choice) == sentence:
        return all(written.term_found(t, sentence) for t in terms)
    label = LABEL.match(sentence)
    return label is not None and len(label.group(1).split()) <= 4 and any(
        written.term_found(t, label.group(1)) for t in terms)


def _replace_spans(text: str, spans: list[tuple[int, int]], change: object) -> str:
    out, last = [], 0
    for start, end in sorted(set(spans)):
        if start < last:
            continue
        out.append(text[last:start] + change(text[start:end]))  # type: ignore[operator]
        last = end
    return "".join(out) + text[last:]


def wrong_memos(path: str, text: str, claims: list[DeclaredClaim], seed: int) -> Iterator[Variant]:
    """Plausible wrong memos (module docstring), each with the criteria it touches."""

    def wrong(family: str, new: str, touches: tuple[str, ...], detail: str) -> Variant:
        return Variant(family=family, kind="wrong", target=path, files=_file(path, new.encode("utf-8")),
                       touches=touches, detail=detail)  # fmt: skip

    required = [c for c in claims if not c.forbid]
    for number, claim in enumerate(required):
        spans = written.sites(text, claim.terms, claim.window)
        if not spans or all(isinstance(t, str) and written.is_identifier(t) for t in claim.terms):
            continue  # a bare mention stays a mention when negated: nothing wrong to catch
        sentences = [s for a, b in spans for s in written.sentences(text) if a <= s[0] and s[1] <= b]
        choice = rng(seed, "negate", path, str(number)).randrange(2)
        if any(_unreachable(text[a:b], claim.terms, choice) for a, b in sentences):
            continue  # the claim stays stated where negating a sentence cannot reach it
        new = _replace_spans(text, sentences, lambda s: negate(s, choice))
        if new == text:
            continue
        yield wrong("claim-negated", new, (claim.criterion,), f"{claim.criterion}: the claim's sentences negated")
    declared_days = {d for c in required for d in date_terms(c.terms)}
    others = sorted({d for _, d, _ in written.dates(text)} - declared_days)
    others = sorted(rng(seed, "dates", path).sample(others, min(len(others), MAX_UNDECLARED_DATES)))
    for day in [*sorted(declared_days), *others]:
        for by in ("day", "month"):
            new = written.rewrite_dates(text, lambda d, f, by=by: written.write_date(written.shift(d, by), f) if d == day else None)
            if new != text:
                touches = tuple(sorted({c.criterion for c in required if day in date_terms(c.terms, required_only=True)}
                                       | {c.criterion for c in claims if c.forbid and _guarded(text, c, day)}))
                yield wrong(f"date-shifted-{by}", new, touches, f"{day} a {by} later")
    for claim in required:
        for value in number_terms(claim.terms):
            spans = written.sites(text, claim.terms, claim.window)
            new = _replace_spans(text, spans, lambda s, value=value: _substitute_unit(s, value))
            if new != text:
                yield wrong("unit-substituted", new, (claim.criterion,), f"the unit of {value:g} substituted")
    for ident in sorted({t for c in required for t in literal_terms(c.terms, required_only=True) if written.is_identifier(t)}):
        wrong_id = written.bump_identifier(ident)
        new = re.sub(re.escape(ident), wrong_id, text, flags=re.IGNORECASE)
        if new != text:
            touches = tuple(sorted({c.criterion for c in required if ident in literal_terms(c.terms, required_only=True)}))
            yield wrong("wrong-identifier", new, touches, f"{ident} written {wrong_id}")


def _guarded(text: str, claim: DeclaredClaim, day: object) -> bool:
    """Whether a forbidden claim `{date_other_than: [day, …]}` watches `day` where the text writes
    it: in a window where the claim's other terms are found, so any other day written there is
    forbidden."""
    allowed = [t for t in claim.terms if isinstance(t, dict) and day in (t.get("date_other_than") or [])]
    if not allowed:
        return False
    rest = [t for t in claim.terms if not (isinstance(t, dict) and "date_other_than" in t)]
    sites = written.sites(text, rest, claim.window) if rest else [(0, len(text))]
    return any(a <= m.start() < b for m, d, _ in written.dates(text) if d == day for a, b in sites)


def _substitute_unit(window: str, value: float) -> str:
    """Every writing of `value` with a unit in the window given another unit (`36 months` and
    `36-month` both: a claim may rest on either)."""
    for unit, other in UNITS:
        pattern = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(\s?-?)" + re.escape(unit.rstrip("s")) + r"(s?)(?!\w)")
        found = [m for m in pattern.finditer(window) if abs(float(m.group(1)) - value) < 1e-9]
        if found:
            return pattern.sub(lambda m: m.group(0) if abs(float(m.group(1)) - value) >= 1e-9 else
                               f"{m.group(1)}{m.group(2) or ' '}{other.rstrip('s')}{m.group(3)}", window)
    return window

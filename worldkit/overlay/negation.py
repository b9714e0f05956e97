"""Which words of a sentence a negation or a contrary qualifier takes back.

A careful reader does not credit "the 36-month result is no longer outstanding" with saying the
result is outstanding, nor "the stoppers may be used in commercial batches only after approval"
with saying they were used. `negated_ranges(text)` returns the character ranges of `text` that
stand in the scope of such a cue; `claims` refuses a term found only inside one.

Rules, stated once:

- A **clause** ends at `, ; : ( ) [ ] |`, a sentence end, a line end, a spaced dash, or one of
  the words `and but whereas while although though however because since which therefore thus`.
- A **negation** (`not`, `n't`, `cannot`, `no`, `no longer`, `never`, `without`, `neither`,
  `nor`, `none`, `nothing`, `nobody`, `failed to`, `instead of`, `rather than`, `until`,
  `unless`, `pending`) takes back what follows it up to the end of its clause.
- `without`, `instead of` and `rather than` take back their object, not the verb after it:
  "patients without prior platinum had an ORR of 45.2 %" says the ORR (the scope ends at the
  clause's first auxiliary verb).
- `before` takes back only the event it names, when that is an approval, signature,
  qualification, release, authorization, use, filling, shipment, completion, closure or issue
  (`used before the change was approved` does not say *approved*; `stopped before it was filled
  into a commercial batch` does not say *filled*; the nouns in between are still said).
- A **contrary qualifier** (`only after`, `only once`, `only when`, `only if`, `subject to`)
  takes back its whole clause: what it qualifies usually stands before it.
- A **sentence negation** (`it is not true that`, `it is not the case that`, `it is false /
  untrue / incorrect / wrong that`) takes back the rest of its sentence, across clauses.
- A parenthesis belongs to the clause it stands in: a cue before `(` governs what the
  parenthesis says and what follows it; a cue inside a parenthesis governs only up to its `)`.
- `and` between two numbers or identifiers (`sections 8.4 and 9.3`, `ZV-23004 and ZV-23005`)
  joins items, not clauses; so does `and` before a past participle that shares the clause's
  auxiliary (`were not identified and rejected`).
- Not cues: `not only`, `no later than`, `not later than`, `no more/less than`, `not more/less
  than`, `not exceeding`, `whether or not`, `No.` before a number (an abbreviation).

A cue inside a term the claim itself names (`not yet`, `no Westbrook stopper`) is that term's
wording, not a negation of it: `claims` ignores a cue that overlaps one of the claim's own terms.
Nothing here knows any world's vocabulary.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["Cue", "cues", "in_scope"]

_BOUNDARY = re.compile(
    r"[,;:\[\]|]|[.!?](?=\s|$)|\n|\s[-\u2013\u2014]\s"
    r"|\b(?:and|but|whereas|while|although|though|however|because|since|which|therefore|thus)\b",
    re.IGNORECASE,
)
_LAST_TOKEN = re.compile(r"(\S+)\s*$")
_FIRST_TOKEN = re.compile(r"^\s*(\S+)")
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|\n")
_SENTENTIAL = re.compile(
    r"\bit\s+(?:is|was)\s+(?:not\s+(?:true|the\s+case|correct|accurate)|(?:false|untrue|incorrect|wrong|inaccurate))"
    r"\s+(?:to\s+say\s+)?that\b",
    re.IGNORECASE,
)
_NOT_CUES = re.compile(
    r"\bnot only\b|\bno(?:t)? (?:later|more|less|earlier|fewer) than\b|\bnot exceeding\b|\bwhether or not\b"
    r"|\bno\.\s*(?=\d)",
    re.IGNORECASE,
)
_FORWARD = re.compile(
    r"\bno longer\b|\bnot\b|\w+n['\u2019]t\b|\bcannot\b|\bno\b|\bnever\b|\bwithout\b|\bneither\b|\bnor\b"
    r"|\bnone\b|\bnothing\b|\bnobody\b|\bfail(?:s|ed)? to\b|\binstead of\b|\brather than\b"
    r"|\buntil\b|\bunless\b|\bpending\b",
    re.IGNORECASE,
)
_PREPOSITION = re.compile(r"without|instead of|rather than", re.IGNORECASE)
_VERB = re.compile(r"\b(?:is|are|was|were|has|have|had|will|would|can|could|should|must|may|might|shall|do|does|did)\b",
                   re.IGNORECASE)
_BEFORE = re.compile(
    r"\bbefore\b[^,;:.()|\n]*?\b(?P<event>(?:approv|sign|qualif|releas|authori[sz]|fill|us(?:e|ed|ing)\b|reach|enter"
    r"|ship|distribut|dispatch|complet|implement|clos|issu)\w*)",
    re.IGNORECASE,
)
_CLAUSE_WIDE = re.compile(r"\bonly (?:after|once|when|if)\b|\bsubject to\b", re.IGNORECASE)

Cue = tuple[int, int, int, int]
"""(cue start, cue end, scope start, scope end) as character offsets."""


def _is_item(token: str) -> bool:
    """A number or an identifier (`8.4`, `9.3`, `ZV-23005`, `AC-02`): what `and` may join
    without starting a clause."""
    token = token.strip(".,;:()[]")
    return bool(re.fullmatch(r"(?:[A-Za-z]+[-/]?)*\d[\w./-]*%?", token))


@lru_cache(maxsize=8192)
def _boundaries(text: str) -> tuple[tuple[int, int], ...]:
    found = []
    for match in _BOUNDARY.finditer(text):
        if match.group(0).casefold() == "and":
            before = _LAST_TOKEN.search(text, 0, match.start())
            after = _FIRST_TOKEN.match(text[match.end():])
            if before and after and _is_item(before.group(1)) and _is_item(after.group(1)):
                continue  # items joined (`sections 8.4 and 9.3`), not clauses
            participle = after is not None and re.fullmatch(r"[a-z]+ed", after.group(1).rstrip(".,;:)")) is not None
            if participle and not (before and before.group(1).endswith(",")):
                continue  # one auxiliary's verbs joined: `were not identified and rejected`
        found.append(match.span())
    return tuple(found)


@lru_cache(maxsize=1024)
def _parens(text: str) -> tuple[tuple[int, int], ...]:
    """Every parenthesis of the text: (where it opens, where it closes; the text's end if never)."""
    found, opened = [], []
    for index, char in enumerate(text):
        if char == "(":
            opened.append(index)
        elif char == ")" and opened:
            found.append((opened.pop(), index))
    found += [(at, len(text)) for at in opened]
    return tuple(sorted(found))


def _innermost(text: str, at: int) -> tuple[int, int] | None:
    """The innermost parenthesis holding position `at` (None outside any)."""
    holding = [p for p in _parens(text) if p[0] < at <= p[1]]
    return max(holding) if holding else None


def _clause(text: str, start: int, end: int) -> tuple[int, int]:
    """The clause around `text[start:end]`: (its start, its end). A parenthesis is part of the
    clause it stands in (its inner boundaries do not end that clause); a span inside one has
    the parenthesis as its clause."""
    own = _innermost(text, start)
    begin, stop = 0, len(text)
    for b_start, b_end in _boundaries(text):
        if _innermost(text, b_start) != own:
            continue
        if b_end <= start:
            begin = b_end
        elif b_start >= end:
            stop = b_start
            break
    if own is not None:
        begin, stop = max(begin, own[0] + 1), min(stop, own[1])
    return begin, stop


def _sentence_end(text: str, at: int) -> int:
    found = _SENTENCE_END.search(text, at)
    return found.start() if found else len(text)


@lru_cache(maxsize=8192)
def cues(text: str) -> tuple[Cue, ...]:
    """Every negation and contrary qualifier in `text`, with the range it takes back."""
    excluded = [(m.start(), m.end()) for m in _NOT_CUES.finditer(text)]

    def excused(start: int, end: int) -> bool:
        return any(s < end and start < e for s, e in excluded)

    found: list[Cue] = []
    taken: list[tuple[int, int]] = []
    for match in _FORWARD.finditer(text):
        if excused(match.start(), match.end()) or any(s <= match.start() < e for s, e in taken):
            continue
        taken.append((match.start(), match.end()))
        _, clause_end = _clause(text, match.start(), match.end())
        if _PREPOSITION.fullmatch(match.group(0)):
            verb = _VERB.search(text, match.end(), clause_end)
            clause_end = verb.start() if verb else clause_end
        found.append((match.start(), match.end(), match.end(), clause_end))
    for match in _BEFORE.finditer(text):
        if _clause(text, match.start(), match.start() + 6)[1] >= match.end("event"):
            found.append((match.start(), match.start() + 6, match.start("event"), match.end("event")))
    for match in _SENTENTIAL.finditer(text):
        found.append((match.start(), match.end(), match.end(), _sentence_end(text, match.end())))
        taken.append((match.start(), match.end()))
    for match in _CLAUSE_WIDE.finditer(text):
        if excused(match.start(), match.end()):
            continue
        begin, clause_end = _clause(text, match.start(), match.end())
        found.append((match.start(), match.end(), begin, clause_end))
    return tuple(found)


def in_scope(text: str, span: tuple[int, int], own: list[tuple[int, int, frozenset[str]]]) -> bool:
    """Whether `text[span]` is taken back by a cue: one whose scope holds the span's start, or
    one standing inside the span (a term written across a negation, `cause … not … design`).

    `own` are the claim's own term matches with the words their definition writes: a cue that
    overlaps one of them and is written by it (`not yet` in a term `not yet|pending`) is the
    claim's wording, not a negation."""
    start, end = span
    for cue_start, cue_end, scope_start, scope_end in cues(text):
        words = set(re.findall(r"[a-z]+", text[cue_start:cue_end].casefold()))
        if any(s < cue_end and cue_start < e and words <= written for s, e, written in own):
            continue
        if scope_start <= start < scope_end and not (cue_start <= start < cue_end):
            return True
        if start < cue_start and cue_end <= end:
            return True
    return False

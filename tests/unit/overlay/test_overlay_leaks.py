"""What counts as a verifier byte on the candidate side, rule by rule."""

from __future__ import annotations

import json
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from worldkit.canon import sha256_bytes
from worldkit.overlay.leaks import LEAK_MIN_CHARS, VerifierItem, collapse, find_leaks

LONG = "The corrected twelve-month assay of lot RVX-2401 is 99.1 percent of label claim."


def item(text: str, label: str = "truth.facts[0]") -> VerifierItem:
    return VerifierItem(label, text.encode("utf-8"))


def test_identical_bytes_leak_at_any_size() -> None:
    leaks = find_leaks([item("42\n")], [("projection/files/a.md", b"42\n")])
    assert [(l.rule, l.candidate_path) for l in leaks] == [("bytes", "projection/files/a.md")]


def test_long_paragraph_inside_a_file_leaks_despite_rewrapping() -> None:
    wrapped = "Intro.\n\n" + LONG.replace(" of label", "\n   of label") + "\n"
    leaks = find_leaks([item("Heading\n\n" + LONG)], [("request.md", wrapped.encode())])
    assert [(l.rule, l.candidate_path) for l in leaks] == [("text", "request.md")]
    assert leaks[0].unit_sha256 == sha256_bytes(collapse(LONG).encode())


def test_short_text_is_exempt_and_case_matters() -> None:
    short = "CC-1 is approved."
    assert len(short) < LEAK_MIN_CHARS
    assert find_leaks([item(short + " Extra")], [("a.md", f"x {short} y".encode())]) == []
    assert find_leaks([item(LONG)], [("a.md", LONG.upper().encode())]) == []


def test_text_escaped_inside_json_is_found() -> None:
    mail = json.dumps({"id": "M9", "body": "Hi,\n" + LONG.replace(" assay", "\nassay") + "\n"}, indent=2)
    leaks = find_leaks([item(LONG)], [("projection/mail/M9.json", mail.encode())])
    assert [l.candidate_path for l in leaks] == ["projection/mail/M9.json"]


def test_reviewed_overlaps_waive_by_item_or_paragraph_digest() -> None:
    candidate = [("a.md", LONG.encode())]
    assert find_leaks([item(LONG)], candidate, [sha256_bytes(LONG.encode())]) == []
    two = "Other paragraph that is long enough to count as verifier text.\n\n" + LONG
    assert find_leaks([item(two)], candidate, [sha256_bytes(collapse(LONG).encode())]) == []


def test_each_file_is_reported_once_per_item() -> None:
    candidate = [("a.md", (LONG + "\n" + LONG).encode()), ("b.md", LONG.encode())]
    leaks = find_leaks([item(LONG)], candidate)
    assert sorted((l.rule, l.candidate_path) for l in leaks) == [("bytes", "b.md"), ("text", "a.md")]


def _one_long_paragraph(text: str) -> bool:
    return len(collapse(text)) >= LEAK_MIN_CHARS and not re.search(r"\n\s*\n", text)


@given(st.text(min_size=LEAK_MIN_CHARS, max_size=200).filter(_one_long_paragraph),
       st.text(max_size=50), st.text(max_size=50))
def test_any_long_single_paragraph_embedded_in_a_file_is_found(secret: str, before: str, after: str) -> None:
    embedded = f"{before} \n{secret}\n {after}"
    leaks = find_leaks([item(secret)], [("c.md", embedded.encode("utf-8", errors="replace"))])
    assert leaks, (secret, embedded)


def _naive(items: list[VerifierItem], candidate: list[tuple[str, bytes]]) -> set[tuple[str, str, str]]:
    """(item, path, rule) of every leak, found text by text, file by file (no shared corpus)."""
    from worldkit.overlay.leaks import paragraphs
    from worldkit.overlay.view import readable_text

    found = set()
    for it in items:
        digest = sha256_bytes(it.data)
        same = {p for p, d in candidate if sha256_bytes(d) == digest}
        found |= {(it.label, p, "bytes") for p in same}
        for unit in paragraphs(it.data.decode("utf-8", errors="replace")):
            found |= {(it.label, p, "text") for p, d in candidate
                      if p not in same and unit in collapse(readable_text(p, d))}
    return found


_WIDE = st.text(alphabet=st.sampled_from("ab ≤→é\U0001d11e\n"), max_size=30)


@settings(deadline=None)  # a loaded machine must not fail it: nothing here is timed
@given(st.lists(_WIDE, min_size=1, max_size=4), _WIDE, _WIDE)
def test_the_search_finds_what_a_file_by_file_text_search_finds(files: list[str], before: str, after: str) -> None:
    """Characters of one to four UTF-8 bytes before, inside and after the verifier text: each
    leak is reported for the file it is in, and only there."""
    secret = "≤ the corrected assay → 99.1 % of label claim, lot \U0001d11e-2401 é"
    candidate = [(f"f{n}.md", text.encode()) for n, text in enumerate(files)]
    candidate.append(("g.md", f"{before}{secret}{after}".encode()))
    items = [item(secret), item(before + secret, "truth.facts[1]")]
    memo: dict = {}
    leaks = find_leaks(items, candidate, texts=memo)
    assert {(l.item, l.candidate_path, l.rule) for l in leaks} == _naive(items, candidate)
    assert find_leaks(items, candidate, texts=memo) == leaks  # the kept texts give the same answer


def test_split_reviewed_is_find_leaks_with_the_reviewed_digests() -> None:
    from worldkit.overlay.leaks import split_reviewed

    two = "Other paragraph that is long enough to count as verifier text.\n\n" + LONG
    candidate = [("a.md", LONG.encode()), ("b.md", two.encode()), ("c.md", b"42\n")]
    items = [item(LONG), item(two, "truth.facts[1]"), item("42\n", "truth.facts[2]")]
    every = find_leaks(items, candidate)
    for reviewed in ([], [sha256_bytes(LONG.encode())], [sha256_bytes(collapse(LONG).encode())],
                     [sha256_bytes(b"42\n"), sha256_bytes(two.encode())]):
        assert split_reviewed(every, reviewed) == find_leaks(items, candidate, reviewed)

"""Literal and ranked search over the seat's texts: order, snippets, limits, and no FTS5 injection."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from worldkit.mcp.search import SearchIndex

TEXTS = {
    "b/notes.md": "Pull window\nthe PULL WINDOW moved; pull window again\n",
    "a/sop.md": "SOP-001: stability pull window is +/- 3 days.\n",
    "c/other.md": "nothing to see\n",
    "d/unicode.md": "İstanbul Straße\nDÉJÀ VU\n",
}


def test_literal_is_case_insensitive_ordered_by_path_then_line_one_hit_per_line() -> None:
    hits, more = SearchIndex(TEXTS).literal("pull window", 10)
    assert [(h.path, h.line) for h in hits] == [("a/sop.md", 1), ("b/notes.md", 1), ("b/notes.md", 2)]
    assert not more
    assert hits[2].snippet == "the PULL WINDOW moved; pull window again"
    limited, more = SearchIndex(TEXTS).literal("pull window", 2)
    assert len(limited) == 2 and more


def test_literal_finds_text_whose_lowercase_changes_length() -> None:
    hits, _ = SearchIndex(TEXTS).literal("straße", 5)
    assert [(h.path, h.line, h.snippet) for h in hits] == [("d/unicode.md", 1, "İstanbul Straße")]


def test_ranked_orders_by_relevance_and_marks_words() -> None:
    hits, more = SearchIndex(TEXTS).ranked("pull window days", 10)
    assert [h.path for h in hits] == ["a/sop.md", "b/notes.md"] and not more
    assert hits[0].score >= hits[1].score > 0
    assert "**pull**" in hits[0].snippet.lower()


def test_replacing_a_text_updates_both_searches() -> None:
    index = SearchIndex(TEXTS)
    index.put("c/other.md", "now a pull window too\n")
    assert "c/other.md" in {h.path for h in index.literal("pull window", 10)[0]}
    assert "c/other.md" in {h.path for h in index.ranked("pull", 10)[0]}
    index.put("c/other.md", "gone\n")
    assert "c/other.md" not in {h.path for h in index.ranked("pull", 10)[0]}


@given(st.text(min_size=1, max_size=40))
def test_any_query_is_text_never_fts5_syntax(query: str) -> None:
    index = SearchIndex(TEXTS)
    for q in (query, f'"{query}', f"{query} NEAR(", f"{query}* OR body:x", "^" + query):
        index.ranked(q, 5)  # never raises, whatever the agent types
        index.literal(q, 5)

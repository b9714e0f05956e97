"""Markdown handling for Design excerpts: split a KEP README into sections and clean their text.

Appendix A.4: comments, code blocks, links, URLs and table rows are removed before excerpts of
400 to 1,600 characters are cut. Link *targets* are removed; a link's visible words stay, since
dropping them would break the sentence they sit in. Pure functions over strings; no file access.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_TABLE_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)|!\[[^\]]*\]\[[^\]]*\]")
_INLINE_LINK = re.compile(r"\[([^\]]*)\]\((?:[^()]|\([^)]*\))*\)")
_REFERENCE_LINK = re.compile(r"\[([^\]]+)\]\[[^\]]*\]")
_LINK_DEFINITION = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*\S+.*$")
_AUTOLINK = re.compile(r"<(?:https?|ftp|mailto):[^>\s]*>", re.IGNORECASE)
_URL = re.compile(r"(?:https?://|ftp://|www\.)[^\s<>()\[\]]*[^\s<>()\[\].,;:!?'\"]", re.IGNORECASE)
_HTML_TAG = re.compile(
    r"</?(?:a|img|br|hr|p|div|span|details|summary|sup|sub|b|i|em|strong|ul|ol|li|table|"
    r"thead|tbody|tr|td|th|code|pre|center|font|kbd|del|ins|s|u)\b[^>]*>",
    re.IGNORECASE,
)
_EMPTY_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])(?:\s+\[[ xX]\])?\s*[:.,;]?\s*$")
_SPACES = re.compile(r"[ \t]+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True)
class Section:
    """A README heading and the raw lines below it, up to the next heading of any level."""

    level: int
    title: str
    lines: tuple[str, ...]


def strip_comments(markdown: str) -> str:
    """Remove HTML comments, including multi-line and unterminated ones."""
    return _COMMENT.sub("", markdown)


def split_sections(markdown: str) -> list[Section]:
    """Headings outside code fences (comments removed first), each with the lines up to the next."""
    sections: list[Section] = []
    level, title, lines = 0, "", []
    fence: str | None = None
    for line in strip_comments(markdown).splitlines():
        marker = _FENCE.match(line)
        if fence is not None:
            if marker and marker.group(1)[0] == fence[0] and len(marker.group(1)) >= len(fence):
                fence = None
            lines.append(line)
            continue
        if marker:
            fence = marker.group(1)
            lines.append(line)
            continue
        heading = _HEADING.match(line)
        if heading:
            sections.append(Section(level, title, tuple(lines)))
            level, title, lines = len(heading.group(1)), heading.group(2), []
            continue
        lines.append(line)
    sections.append(Section(level, title, tuple(lines)))
    return sections


def _drop_code_blocks(lines: list[str]) -> list[str]:
    kept: list[str] = []
    fence: str | None = None
    for line in lines:
        marker = _FENCE.match(line)
        if fence is not None:
            if marker and marker.group(1)[0] == fence[0] and len(marker.group(1)) >= len(fence):
                fence = None
            continue
        if marker:
            fence = marker.group(1)
            continue
        kept.append(line)
    return kept


def _drop_tables(lines: list[str]) -> list[str]:
    """Drop table rows: lines starting with `|`, and `|` lines of a block with a separator row."""
    kept: list[str] = []
    block: list[str] = []

    def flush() -> None:
        is_table = any("|" in line and _TABLE_SEPARATOR.match(line) for line in block)
        kept.extend(
            line
            for line in block
            if not line.strip().startswith("|") and not (is_table and "|" in line)
        )
        block.clear()

    for line in lines:
        if line.strip():
            block.append(line)
        else:
            flush()
            kept.append(line)
    flush()
    return kept


def _clean_line(line: str) -> str:
    line = _IMAGE.sub("", line)
    line = _INLINE_LINK.sub(lambda m: "" if _URL.fullmatch(m.group(1).strip()) else m.group(1), line)
    line = _REFERENCE_LINK.sub(r"\1", line)
    line = _AUTOLINK.sub("", line)
    line = _URL.sub("", line)
    line = _HTML_TAG.sub("", line)
    return _SPACES.sub(" ", line).rstrip()


def clean_text(lines: tuple[str, ...] | list[str]) -> str:
    """Section lines without code blocks, tables, links, URLs, headings or empty list items.

    Paragraphs are separated by exactly one blank line; the result has no outer whitespace.
    """
    body = _drop_tables(_drop_code_blocks(list(lines)))
    out: list[str] = []
    for raw in body:
        if _LINK_DEFINITION.match(raw) or _HEADING.match(raw):
            continue
        line = _clean_line(raw)
        if line.strip() and _EMPTY_ITEM.match(line):
            continue
        if not line.strip():
            if out and out[-1] != "":
                out.append("")
            continue
        out.append(line)
    return "\n".join(out).strip()


def cut_excerpt(text: str, low: int = 400, high: int = 1600) -> str | None:
    """The leading complete paragraphs of `text` within `high` characters, if at least `low`.

    A first paragraph longer than `high` is cut at a sentence end instead. Returns None when no
    excerpt of `low`..`high` characters can be cut from the start of the text.
    """
    paragraphs = [p.strip() for p in text.split("\n\n") if p.strip()]
    excerpt = ""
    for paragraph in paragraphs:
        candidate = f"{excerpt}\n\n{paragraph}" if excerpt else paragraph
        if len(candidate) > high:
            if not excerpt:
                excerpt = _leading_sentences(paragraph, high)
            break
        excerpt = candidate
    return excerpt if low <= len(excerpt) <= high else None


def _leading_sentences(paragraph: str, high: int) -> str:
    excerpt = ""
    for sentence in _SENTENCE_END.split(paragraph):
        candidate = f"{excerpt} {sentence}" if excerpt else sentence
        if len(candidate) > high:
            break
        excerpt = candidate
    return excerpt

"""Markdown handling for Design excerpts: split a KEP README into sections and clean their text.

Appendix A.4: comments, code blocks, links, URLs and table rows are removed before excerpts of
400 to 1,600 characters are cut. Link *targets* are removed; a link's visible words stay, since
dropping them would break the sentence they sit in. Cleaning works on whole paragraphs, not
lines: a link whose text or target wraps onto the next line is still one link, a checklist item
keeps its continuation lines (and goes as a whole), and a paragraph left with nothing but a
template answer (`None.`, `N/A`, `TBD`) or a template placeholder (`<package>`) is dropped.
Pure functions over strings; no file access.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_TABLE_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
_IMAGE = re.compile(r"!\[[^\]]*\]\s*\([^)]*\)|!\[[^\]]*\]\[[^\]]*\]")
_INLINE_LINK = re.compile(r"\[([^\[\]]*)\]\((?:[^()]|\([^)]*\))*\)")
_REFERENCE_LINK = re.compile(r"\[([^\[\]]+)\]\[[^\]]*\]")
_EMPTY_BRACKETS = re.compile(r"\[\s*\]\(\s*\)|\(\s*\)|\[\]")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_CHECKBOX = re.compile(r"^\s*(?:(?:[-*+]|\d+[.)])\s+)?\[[ xX]\](?:\s|$)")
_PLACEHOLDER = re.compile(r"<(?:package|date|test coverage|[a-z][a-z ]*name)>|`<[^`>]+>`", re.I)
_TEMPLATE_ANSWER = re.compile(
    r"^(?:[-*+]\s+)?(?:none|n/?a|tbd|todo|no|yes|nothing|not applicable|none required|"
    r"none planned|none needed|not needed|not required|none identified|none known|see above|"
    r"same as above|no changes?(?: required| needed)?)\s*[.!]?$",
    re.IGNORECASE,
)
_LINK_DEFINITION = re.compile(r"^\s{0,3}\[([^\]]+)\]:\s*\S+.*$")
_SHORTCUT_LINK = re.compile(r"\[([^\[\]]+)\](?![(\[:])")
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


def _label(text: str) -> str:
    return " ".join(text.split()).casefold()


def link_labels(markdown: str) -> frozenset[str]:
    """Normalized labels of the document's link definitions (`[label]: url`), for shortcut links."""
    return frozenset(
        _label(match.group(1))
        for line in markdown.splitlines()
        if (match := _LINK_DEFINITION.match(line))
    )


def _clean_inline(text: str, labels: frozenset[str] = frozenset()) -> str:
    """Links, images, URLs and HTML tags removed from a paragraph (patterns may cross lines)."""
    text = _IMAGE.sub("", text)
    previous = None
    while previous != text:  # nested brackets such as [[x](y)](z) unwrap from the inside
        previous = text
        text = _INLINE_LINK.sub(
            lambda m: "" if _URL.fullmatch(m.group(1).strip()) else m.group(1), text
        )
        text = _REFERENCE_LINK.sub(r"\1", text)
    if labels:  # `[label]` is a link only when the document defines that label
        text = _SHORTCUT_LINK.sub(
            lambda m: m.group(1) if _label(m.group(1)) in labels else m.group(0), text
        )
    text = _AUTOLINK.sub("", text)
    text = _URL.sub("", text)
    text = _HTML_TAG.sub("", text)
    text = _EMPTY_BRACKETS.sub("", text)
    return "\n".join(_SPACES.sub(" ", line).rstrip() for line in text.split("\n"))


def _items(paragraph: list[str]) -> list[list[str]]:
    """A paragraph's lines grouped into list items (a line that opens no item continues one)."""
    items: list[list[str]] = []
    for line in paragraph:
        if not items or _LIST_ITEM.match(line) or _CHECKBOX.match(line):
            items.append([line])
        else:
            items[-1].append(line)
    return items


def _is_boilerplate(item: str) -> bool:
    """A checklist item, a bare template answer, or text holding a template placeholder."""
    stripped = item.strip()
    return (
        bool(_CHECKBOX.match(stripped))
        or bool(_TEMPLATE_ANSWER.match(stripped))
        or bool(_PLACEHOLDER.search(stripped))
        or bool(_EMPTY_ITEM.match(stripped))
    )


def clean_text(lines: tuple[str, ...] | list[str], labels: frozenset[str] = frozenset()) -> str:
    """Section lines without code blocks, tables, links, URLs, headings and template boilerplate.

    Works paragraph by paragraph (blank-line separated): inline markup is removed over the whole
    paragraph, then checklist items, template answers and placeholder lines are dropped with
    their continuation lines; a paragraph with nothing left goes. Paragraphs are separated by
    exactly one blank line; the result has no outer whitespace. `labels` (see `link_labels`)
    are the document's link-definition labels: `[label]` shortcut links keep only their text.
    """
    body = _drop_tables(_drop_code_blocks(list(lines)))
    paragraphs: list[list[str]] = [[]]
    for raw in body:
        if _LINK_DEFINITION.match(raw) or _HEADING.match(raw):
            continue
        if not raw.strip():
            if paragraphs[-1]:
                paragraphs.append([])
            continue
        paragraphs[-1].append(raw)
    out: list[str] = []
    for paragraph in paragraphs:
        if not paragraph:
            continue
        cleaned = _clean_inline("\n".join(paragraph), labels).split("\n")
        kept = [
            "\n".join(item)
            for item in _items([line for line in cleaned if line.strip()])
            if not _is_boilerplate(" ".join(part.strip() for part in item))
        ]
        if kept:
            out.append("\n".join(kept))
    return "\n\n".join(out).strip()


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

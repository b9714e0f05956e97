"""The small Markdown subset world templates write, as blocks for the DOCX and PDF writers."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
_BULLET = re.compile(r"^\s*[-*]\s+(.*)$")
_NUMBERED = re.compile(r"^\s*(\d+)[.)]\s+(.*)$")
_RULE = re.compile(r"^\s*(-{3,}|\*{3,}|_{3,})\s*$")
_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")


@dataclass
class Block:
    kind: str
    """heading, paragraph, bullet, numbered, quote, table"""
    text: str = ""
    level: int = 0
    rows: list[list[str]] = field(default_factory=list)


def cells(line: str) -> list[str]:
    inner = line.strip()
    if inner.startswith("|"):
        inner = inner[1:]
    if inner.endswith("|"):
        inner = inner[:-1]
    return [c.strip() for c in inner.split("|")]


def blocks(text: str) -> list[Block]:
    out: list[Block] = []
    para: list[str] = []

    def flush() -> None:
        if para:
            out.append(Block("paragraph", " ".join(p.strip() for p in para)))
            para.clear()

    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            flush()
        elif line.lstrip().startswith("|"):
            flush()
            rows = []
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                if not _SEPARATOR.match(lines[i]):
                    rows.append(cells(lines[i]))
                i += 1
            out.append(Block("table", rows=rows))
            continue
        elif m := _HEADING.match(line):
            flush()
            out.append(Block("heading", m.group(2).strip(), level=len(m.group(1))))
        elif _RULE.match(line):
            flush()
        elif m := _BULLET.match(line):
            flush()
            out.append(Block("bullet", m.group(1).strip()))
        elif m := _NUMBERED.match(line):
            flush()
            out.append(Block("numbered", m.group(2).strip(), level=int(m.group(1))))
        elif line.lstrip().startswith(">"):
            flush()
            out.append(Block("quote", line.lstrip()[1:].strip()))
        else:
            para.append(line)
        i += 1
    flush()
    return out


def table_lines(rows: list[list[str]]) -> list[str]:
    """A table as Markdown rows, the first row its header."""
    if not rows:
        return []
    width = max(len(r) for r in rows)
    lines = ["| " + " | ".join(r + [""] * (width - len(r))) + " |" for r in rows]
    return [lines[0], "|" + "---|" * width, *lines[1:]]


def spans(text: str) -> list[tuple[str, bool]]:
    """`**bold**` spans of a line: (text, bold) pairs; other markup is kept as written."""
    parts = text.split("**")
    if len(parts) % 2 == 0:  # an unpaired marker: leave the text as it is
        return [(text, False)]
    return [(p, i % 2 == 1) for i, p in enumerate(parts) if p]

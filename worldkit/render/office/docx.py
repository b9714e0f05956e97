"""DOCX (python-docx) from the Markdown subset, and its text back as Markdown-like lines."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from worldkit.render.office._zip import fixed_package, noon
from worldkit.render.office.markdown import blocks, spans, table_lines

if TYPE_CHECKING:
    from worldkit.render.office import Meta

_LISTS = {"bullet": "ListBullet", "numbered": "ListNumber", "quote": "Quote"}
"""Block kind → style id of python-docx's default template ("List Bullet" is `ListBullet`).

Styles are set by id on the paragraph's XML: python-docx's lookup by name scans every style of
the template for each paragraph (most of a document's render time), and writes the same id."""


def _runs(paragraph, text: str) -> None:
    for part, bold in spans(text):
        run = paragraph.add_run(part)
        if bold:
            run.bold = True


def _paragraph(document, style_id: str | None):
    paragraph = document.add_paragraph()
    if style_id is not None:
        paragraph._p.style = style_id
    return paragraph


def render(text: str, meta: Meta) -> bytes:
    import docx

    document = docx.Document()
    props = document.core_properties
    when = noon(meta.date)
    props.title, props.author, props.last_modified_by = meta.title, meta.author, meta.author
    props.created = props.modified = when
    props.last_printed = when
    props.revision = 1
    props.comments = props.keywords = props.subject = props.category = ""
    for block in blocks(text):
        if block.kind == "heading":
            _runs(_paragraph(document, f"Heading{min(block.level, 9)}"), block.text)
        elif block.kind == "table":
            width = max(len(r) for r in block.rows)
            table = document.add_table(rows=len(block.rows), cols=width)
            table._tbl.tblStyle_val = "TableGrid"
            for row, values in zip(table.rows, block.rows):
                for cell, value in zip(row.cells, values + [""] * (width - len(values))):
                    cell.text = value
        else:
            _runs(_paragraph(document, _LISTS.get(block.kind)), block.text)
    buffer = io.BytesIO()
    document.save(buffer)
    return fixed_package(buffer.getvalue(), when)


def _text(paragraph) -> str:
    out: list[str] = []
    bold = False
    for run in paragraph.runs:
        if bool(run.bold) != bold:
            out.append("**")
            bold = not bold
        out.append(run.text)
    if bold:
        out.append("**")
    return "".join(out)


def extract(data: bytes) -> str:
    import docx
    from docx.table import Table

    document = docx.Document(io.BytesIO(data))
    parts: list[str] = []
    number = 0
    for item in document.iter_inner_content():
        if isinstance(item, Table):
            rows = [[cell.text for cell in row.cells] for row in item.rows]
            parts.append("\n".join(table_lines(rows)))
            number = 0
            continue
        style = item.style.name if item.style is not None else ""
        text = _text(item)
        if style.startswith("Heading "):
            parts.append("#" * int(style.split()[1]) + " " + text)
        elif style == "Title":
            parts.append("# " + text)
        elif style == "List Bullet":
            parts.append("- " + text)
        elif style == "List Number":
            number += 1
            parts.append(f"{number}. {text}")
            continue
        elif style == "Quote":
            parts.append("> " + text)
        else:
            parts.append(text)
        number = 0
    return "\n\n".join(parts) + "\n"

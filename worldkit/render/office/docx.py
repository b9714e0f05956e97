"""DOCX (python-docx) from the Markdown subset, and its text back as Markdown-like lines.

python-docx's default template is read once per process (`_template`): parsing it, serializing
its ~0.9 MB of styles and deflating them again took most of a document's render time, and none of
it depends on the document. Each document is built on fresh copies of the template's main-document
and core-properties elements and packaged with the template's other parts, byte for byte what
`docx.Document()` … `save()` writes (a test compares the two).
"""

from __future__ import annotations

import copy
import io
from typing import TYPE_CHECKING, Any

from worldkit.render.office._zip import Member, noon, stamped_core, write_package
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


class _Template:
    """The default template, parsed once: its pristine main-document and core-properties elements,
    and every other member of a saved package, deflated."""

    def __init__(self) -> None:
        import docx
        from docx.opc.constants import RELATIONSHIP_TYPE

        base = docx.Document()
        self.part = base.part
        core_part = base.part.package.part_related_by(RELATIONSHIP_TYPE.CORE_PROPERTIES)
        self.document = copy.deepcopy(base.element)
        self.core = copy.deepcopy(core_part.element)
        self.document_name = base.part.partname.membername
        self.core_name = core_part.partname.membername
        buffer = io.BytesIO()
        base.save(buffer)
        import zipfile

        saved = zipfile.ZipFile(io.BytesIO(buffer.getvalue()))
        self.members: list[Member | str] = [
            info.filename if info.filename in (self.document_name, self.core_name)
            else Member.of(info.filename, saved.read(info.filename))
            for info in saved.infolist()
        ]


_TEMPLATE: list[_Template] = []


def _template() -> _Template:
    if not _TEMPLATE:
        _TEMPLATE.append(_Template())
    return _TEMPLATE[0]


def _fresh(template: _Template) -> tuple[Any, Any, Any, Any]:
    """A new document and core properties over copies of the template's elements (the package's
    other parts are shared and only read: styles are set by id, nothing adds a part)."""
    from docx.document import Document
    from docx.opc.coreprops import CoreProperties

    element, core = copy.deepcopy(template.document), copy.deepcopy(template.core)
    return Document(element, template.part), CoreProperties(core), element, core


def render(text: str, meta: Meta) -> bytes:
    from docx.opc.oxml import serialize_part_xml

    template = _template()
    document, props, element, core = _fresh(template)
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
    bodies = {template.document_name: serialize_part_xml(element),
              template.core_name: stamped_core(serialize_part_xml(core), when)}
    members = [m if isinstance(m, Member) else Member.of(m, bodies[m]) for m in template.members]
    return write_package(members, when)


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
    names: dict[str | None, str] = {}
    """Style id → the name of the style `Paragraph.style` gives for it (python-docx looks it up anew for
    every paragraph, the default style by walking every style of the document: half of an extract)."""
    for item in document.iter_inner_content():
        if isinstance(item, Table):
            rows = [[cell.text for cell in row.cells] for row in item.rows]
            parts.append("\n".join(table_lines(rows)))
            number = 0
            continue
        style_id = item._p.style  # what `Paragraph.style` looks up
        style = names.get(style_id)
        if style is None:
            found = item.style
            style = names[style_id] = found.name if found is not None else ""
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

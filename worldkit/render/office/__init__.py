"""Office formats of world documents: a template renders text, the document's extension picks the format.

A document whose path ends in `.docx`, `.xlsx`, `.pdf` or `.eml` is rendered from its template's
text (Markdown for DOCX and PDF, CSV for XLSX, RFC 5322 headers and a body for EML) into the real
format, byte-identical across processes and machines: fixed zip entry times and order, the
document's own date as every creation and modification date, a content-derived PDF document id,
no host names. `extract_text` gives back what an agent's file tools read from such a file (the
format libraries' own readers, as Markdown-like text), so evidence anchors written on the
template's text match the file.

A format library that refuses the text raises its own error class (the template's fault); any other
exception raised while a library writes (a `TypeError` from a release worldkit does not follow) is
`LibraryFailed`, naming the library, its installed version and the document.
"""

from __future__ import annotations

import datetime as dt
import importlib
from collections.abc import Callable
from dataclasses import dataclass

from worldkit.errors import ExitCode, WorldkitError


@dataclass(frozen=True)
class Meta:
    """What a format records about the document besides its text."""

    title: str
    date: dt.date
    author: str = ""


@dataclass(frozen=True)
class Format:
    name: str
    render: Callable[[str, Meta], bytes]
    extract: Callable[[bytes], str]
    library: str = ""
    """The distribution that writes the format (its version is named when it fails)."""
    package: str = ""
    """That library's import name: an exception class of its own is a refusal of the text."""


class LibraryFailed(WorldkitError):
    """A format library failed while writing a document, other than by refusing its text: most often
    an installed release that worldkit does not support (environment, exit 5)."""

    exit_code = ExitCode.ENVIRONMENT

    def __init__(self, fmt: Format, error: BaseException, document: str = "") -> None:
        from importlib import metadata

        import platform

        from worldkit import DISTRIBUTION

        try:
            version = platform.python_version() if fmt.library == "python" else metadata.version(fmt.library)
        except metadata.PackageNotFoundError:
            version = "(not installed)"
        self.format, self.error, self.version = fmt, error, version
        what = f"document {document}" if document else "a document"
        super().__init__(
            f"{fmt.library} {version} failed while writing {what} as {fmt.name} "
            f"({type(error).__name__}: {error}); this is not the template's fault: install the {fmt.library} "
            f"release worldkit supports (its range: `pip show -v {DISTRIBUTION}` lists worldkit's requirements; "
            f"the repository's constraints.txt pins the tested one)"
        )

    def for_document(self, document: str) -> LibraryFailed:
        return LibraryFailed(self.format, self.error, document)


def _refused_by_library(error: BaseException, fmt: Format) -> bool:
    """Whether `error` is the library's own exception class (it refused the text it was given)."""
    return bool(fmt.package) and type(error).__module__.split(".")[0] == fmt.package


def _render(fmt: Format, text: str, meta: Meta) -> bytes:
    try:
        return fmt.render(text, meta)
    except Exception as error:
        if _refused_by_library(error, fmt):
            raise
        raise LibraryFailed(fmt, error) from error


def _on_call(module: str, name: str) -> Callable:
    """`worldkit.render.office.<module>.<name>`, imported when first called: a world of text files
    (and every command that renders none of these formats) never imports zip, csv or email code."""

    def call(*args: object) -> object:
        return getattr(importlib.import_module(f"{__name__}.{module}"), name)(*args)

    call.__name__ = call.__qualname__ = f"{module}.{name}"
    return call


FORMATS: dict[str, Format] = {
    ".docx": Format("DOCX", _on_call("docx", "render"), _on_call("docx", "extract"), "python-docx", "docx"),
    ".xlsx": Format("XLSX", _on_call("xlsx", "render"), _on_call("xlsx", "extract"), "openpyxl", "openpyxl"),
    ".pdf": Format("PDF", _on_call("pdf", "render"), _on_call("pdf", "extract"), "fpdf2", "fpdf"),
    ".eml": Format("EML", _on_call("eml", "render"), _on_call("eml", "extract"), "python", "email"),
}
"""Extension → format (the registry)."""


def format_of(path: str) -> Format | None:
    dot = path.rfind(".")
    return FORMATS.get(path[dot:].lower()) if dot >= 0 else None


def render_office(path: str, text: str, meta: Meta) -> bytes | None:
    """The bytes of `path` in its office format, or None for a text file."""
    found = format_of(path)
    if found is None:
        return None
    from worldkit.render.office.cache import cached

    return cached(path[path.rfind(".") :].lower(), text, meta, lambda: _render(found, text, meta))


def extract_text(path: str, data: bytes) -> str | None:
    """The text an agent's tools read from an office file, or None if `path` is not one.

    A file that cannot be parsed gives a one-line note instead of failing the reader."""
    found = format_of(path)
    if found is None:
        return None
    from worldkit.render.office.cache import extracted

    def read() -> str:
        try:
            return found.extract(data)
        except Exception as error:  # noqa: BLE001 - any parser failure: the file is unreadable as that format
            return f"[unreadable {found.name} file: {type(error).__name__}]"

    return extracted(path[path.rfind(".") :].lower(), data, read)


__all__ = ["FORMATS", "Format", "LibraryFailed", "Meta", "extract_text", "format_of", "render_office"]

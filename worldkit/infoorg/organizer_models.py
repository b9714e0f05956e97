"""What the organizer's five operations answer (paper Table 9), as pydantic models.

The MCP server returns these as structured output (`worldkit.mcp.organizer`); the library
(`worldkit.infoorg.organizer`, which re-exports them) builds them. Nothing here touches disk.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = [
    "Assignment",
    "FileList",
    "FileText",
    "Inventory",
    "MoveResult",
    "MovedRecord",
    "RecordEntry",
    "SearchMatch",
    "SearchResult",
]


def _model_config() -> ConfigDict:
    return ConfigDict(frozen=True, extra="forbid")


class RecordEntry(BaseModel):
    """One record as `list_files` shows it."""

    model_config = _model_config()
    id: str
    """Opaque record id (the file is `<id>.txt`)."""
    path: list[str]
    """Folder components of its current location ([] = workspace root)."""
    format: str
    """Public format label of the record."""


class FileList(BaseModel):
    """One page of records, ordered by id."""

    model_config = _model_config()
    entries: list[RecordEntry]
    """Records on this page."""
    offset: int
    """Position of the first entry in the full listing."""
    total: int
    """Number of record files in the workspace."""
    next_offset: int | None
    """Offset of the next page, or None when this is the last page."""


class FileText(BaseModel):
    """A slice of one record's exact text."""

    model_config = _model_config()
    id: str
    """Record id."""
    path: list[str]
    """Folder components of its current location."""
    text: str
    """Characters [offset, offset + len(text)) of the record."""
    offset: int
    """Character offset of `text`."""
    total_chars: int
    """Length of the whole record in characters."""
    next_offset: int | None
    """Where to continue reading, or None when the record has been read to the end."""


class SearchMatch(BaseModel):
    """One occurrence of the query."""

    model_config = _model_config()
    id: str
    """Record id."""
    path: list[str]
    """Folder components of its current location."""
    offset: int
    """Character offset of the match in the record."""
    snippet: str
    """Text around the match."""


class SearchResult(BaseModel):
    """Literal, case-insensitive matches, in record-id then offset order."""

    model_config = _model_config()
    query: str
    """The literal query."""
    matches: list[SearchMatch]
    """At most 40 matches."""
    truncated: bool
    """True when more matches exist than were returned (narrow the query or read the records)."""


class MovedRecord(BaseModel):
    """One record that changed folder."""

    model_config = _model_config()
    id: str
    """Record id."""
    from_path: list[str]
    """Folder components before the move."""
    to_path: list[str]
    """Folder components after the move."""


class MoveResult(BaseModel):
    """What `move_files` did."""

    model_config = _model_config()
    destination: list[str]
    """The destination folder components."""
    moved: list[MovedRecord]
    """Records that changed folder."""
    already_there: list[str]
    """Requested records that were already in the destination."""


class Assignment(BaseModel):
    """Where one record actually is, in the shape of the final JSON declaration."""

    model_config = _model_config()
    id: str
    """Record id."""
    path: list[str]
    """Folder components then the file name `<id>.txt`, e.g. ["planning", "budget", "F001.txt"]."""


class Inventory(BaseModel):
    """Preservation and filing state only: never a hint about the quality of the organization."""

    model_config = _model_config()
    expected: int
    """Number of records in the original inventory."""
    present: int
    """Records found exactly once with their original bytes."""
    placed: int
    """Present records that are in a folder other than the inbox or the workspace root."""
    missing: list[str]
    """Record ids not found anywhere."""
    duplicated: dict[str, list[str]]
    """Record id → the relative paths where it was found more than once."""
    changed: list[str]
    """Record ids whose bytes differ from the original."""
    unexpected: list[str]
    """Entries that are not records, and folders with names that are not allowed."""
    unplaced: list[str]
    """Record ids still in the inbox or at the workspace root."""
    intact: bool
    """True when nothing is missing, duplicated, changed or unexpected."""
    assignments: list[Assignment]
    """Table 9's actual assignments: every record found exactly once (unchanged or not) with its
    current path, ordered by id. The locations on disk only; nothing about their quality."""

"""The verifier-side reference of an InfoOrgBench packet: `verifier/reference.json`.

Shape (schema_version 1):

    {"schema_version": 1,
     "records": {"F001": {"path": ["meeting", "section"], "sha256": "…", "source": "…"}}}

`path` is the record's folder path in the source hierarchy (no file name), `sha256` the digest of
the exact bytes of `inbox/<ID>.txt`, `source` where the text came from. The packet builder writes
it with `Reference.canonical_json()`; the scorer reads it with `load_reference`. Nothing here may
ever be copied to the candidate side.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, StringConstraints, ValidationError, field_validator

from worldkit.canon import canonical_json
from worldkit.errors import InvalidOverlay
from worldkit.infoorg.tree import folder_name_problem

__all__ = [
    "REFERENCE_FILE",
    "RecordId",
    "Reference",
    "ReferenceRecord",
    "load_reference",
]

REFERENCE_FILE = Path("verifier") / "reference.json"
"""Where the reference lives inside a packet directory."""

RecordId = Annotated[str, StringConstraints(pattern=r"^[A-Z][0-9]+$")]
"""An opaque record id such as `F001`; the record's file is `<id>.txt`."""

Sha256 = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]


class ReferenceRecord(BaseModel):
    """Where one record belongs, and the digest of its bytes."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: tuple[str, ...]
    """Folder components of the record in the source hierarchy (e.g. meeting, section)."""
    sha256: Sha256
    """SHA-256 (lowercase hex) of the exact bytes of `inbox/<id>.txt`."""
    source: str
    """Provenance of the text (source file and locator); never shown to the agent."""

    @field_validator("path")
    @classmethod
    def _names_allowed(cls, path: tuple[str, ...]) -> tuple[str, ...]:
        for name in path:
            problem = folder_name_problem(name)
            if problem:
                raise ValueError(problem)
        return path


class Reference(BaseModel):
    """The reference hierarchy and content hashes of one packet."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: Literal[1]
    """Version of this file format."""
    records: dict[RecordId, ReferenceRecord]
    """Record id → its reference entry."""

    @field_validator("records")
    @classmethod
    def _not_empty(cls, records: dict[str, ReferenceRecord]) -> dict[str, ReferenceRecord]:
        if not records:
            raise ValueError("a reference needs at least one record")
        return records

    def paths(self) -> dict[str, tuple[str, ...]]:
        """record id → reference folder path (the scorer's input)."""
        return {record: entry.path for record, entry in sorted(self.records.items())}

    def hashes(self) -> dict[str, str]:
        """record id → expected SHA-256 of its bytes."""
        return {record: entry.sha256 for record, entry in sorted(self.records.items())}

    def canonical_json(self) -> str:
        """The file's bytes: canonical JSON (sorted keys, fixed separators, trailing newline)."""
        return canonical_json(self.model_dump(mode="json"))


def load_reference(packet_dir: Path) -> Reference:
    """Read `<packet_dir>/verifier/reference.json`; errors name the file, record and field."""
    file = Path(packet_dir) / REFERENCE_FILE
    if not file.is_file():
        raise InvalidOverlay(
            f"no reference found; pass a packet directory that contains {REFERENCE_FILE} "
            "(built by `worldkit infoorg build`)",
            file=file,
        )
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InvalidOverlay(f"not valid UTF-8 JSON ({error}); rebuild the packet", file=file)
    try:
        return Reference.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        loc = [str(part) for part in first["loc"]]
        entity = loc[1] if len(loc) > 1 and loc[0] == "records" else None
        field = ".".join(loc[2:]) if entity else ".".join(loc)
        raise InvalidOverlay(
            f"{first['msg']}; fix the reference or rebuild the packet",
            file=file,
            entity=entity,
            field=field or None,
        )

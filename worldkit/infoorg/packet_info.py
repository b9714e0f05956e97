"""`packet.json` and the on-disk digests of an InfoOrgBench packet (layout: `worldkit.infoorg.packets`).

The part of a packet that both the builder (`packets`) and the overlay layer (`overlays`) read:
kept apart so that `overlays` need not import the builder that writes overlays.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, StringConstraints

from worldkit.canon import sha256_bytes, sha256_json
from worldkit.errors import ManifestMismatch
from worldkit.infoorg.sources import Family

SCHEMA_VERSION = 1
"""Version of `packet.json` (and of the packet's reference)."""

Sha256 = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
"""Lowercase hex SHA-256."""


class PacketInfo(BaseModel):
    """`packet.json`: identity, size and digests of one packet."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: Literal[1] = SCHEMA_VERSION
    """Version of this file's format."""
    task_id: str
    """Task identifier, `<family>-NNN`."""
    family: Family
    """Task family."""
    seed: int
    """Build seed (record shuffling; Design selection)."""
    record_count: int
    """Number of records in the inbox."""
    candidate_digest: Sha256
    """SHA-256 of the canonical {relative path: file sha256} map of `candidate/`."""
    verifier_digest: Sha256
    """SHA-256 of the canonical {relative path: file sha256} map of `verifier/`."""


def files_digest(files: dict[str, bytes]) -> str:
    """SHA-256 of the canonical map relative path -> SHA-256 of the file bytes."""
    return sha256_json({path: sha256_bytes(data) for path, data in sorted(files.items())})


def read_packet_info(packet_dir: Path) -> PacketInfo:
    """Load `packet.json` from a packet folder."""
    return PacketInfo.model_validate_json((packet_dir / "packet.json").read_bytes())


def tree_digest(folder: Path) -> str:
    """`files_digest` of every file under `folder`, for checking a packet on disk."""
    files = {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }
    return files_digest(files)


def check_packet_dir(packet_dir: Path) -> PacketInfo:
    """Recompute a packet's digests on disk; raise `ManifestMismatch` if a file changed."""
    info = read_packet_info(packet_dir)
    for side, expected in (("candidate", info.candidate_digest), ("verifier", info.verifier_digest)):
        actual = tree_digest(packet_dir / side)
        if actual != expected:
            raise ManifestMismatch(
                f"{packet_dir / side}: digest {actual[:12]}… differs from packet.json "
                f"({expected[:12]}…); a file was changed, added or removed — rebuild the packet"
            )
    return info

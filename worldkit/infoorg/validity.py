"""Integrity of a workspace on disk: which records are where, and what should not be there.

Used twice: by the scorer (validity before any structure is scored) and by the organizer's
`check_inventory`. It reads the tree and hashes record bytes; it never writes anything and never
follows symlinks (a symlink is an unexpected entry, not a record).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from worldkit.canon import sha256_file
from worldkit.infoorg.tree import folder_name_problem

__all__ = ["ORGANIZER_STATE_DIR", "ORGANIZER_STATE_FILES", "RECORD_SUFFIX", "WorkspaceCheck", "check_workspace"]

ORGANIZER_STATE_DIR = ".organizer"
"""Top-level folder where the organizer server keeps its lock, journal and inventory. It is not
part of the scored tree, and it may hold only those files: anything else found in it (a copied
record, a link, a folder) is an unexpected entry, which makes the output invalid."""

ORGANIZER_STATE_FILES = frozenset({
    "lock", "journal.json", "journal.json.tmp", "inventory.json", "inventory.json.tmp", "journal.rejected.json",
})
"""The only entries the organizer writes under `.organizer/` (regular files)."""

RECORD_SUFFIX = ".txt"


@dataclass
class WorkspaceCheck:
    """What a scan found. Paths are workspace-relative, with `/` separators."""

    paths: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Records found exactly once → folder components."""
    locations: dict[str, list[str]] = field(default_factory=dict)
    """Every expected record found → the relative file paths where it was found."""
    missing: list[str] = field(default_factory=list)
    duplicated: dict[str, list[str]] = field(default_factory=dict)
    changed: list[str] = field(default_factory=list)
    unexpected: list[str] = field(default_factory=list)
    """Files, symlinks and other entries that are not records."""
    bad_folders: dict[str, str] = field(default_factory=dict)
    """Relative folder path → why its name is not allowed."""

    @property
    def problems(self) -> list[str]:
        """One sentence per violation, each saying how to fix it (empty when valid)."""
        found = [
            f"record {r} is missing from the workspace; every record must stay in it exactly once"
            for r in self.missing
        ]
        found += [
            f"record {r} appears {len(where)} times ({', '.join(where)}); keep exactly one copy"
            for r, where in sorted(self.duplicated.items())
        ]
        found += [
            f"record {r} at {self.locations[r][0]} does not match its original bytes; "
            "records must not be edited"
            for r in self.changed
        ]
        found += [
            f"unexpected entry {path}; the workspace may hold only the record files"
            for path in self.unexpected
        ]
        found += [
            f"folder {path}: {why}; rename the folder"
            for path, why in sorted(self.bad_folders.items())
        ]
        return found


def check_workspace(
    workspace: Path, expected: Mapping[str, str], *, hash_bytes: bool = True
) -> WorkspaceCheck:
    """Scan `workspace` for the records in `expected` (record id → SHA-256 of its bytes).

    With `hash_bytes=False` the contents are not read (locations only; `changed` stays empty).
    """
    workspace = Path(workspace)
    check = WorkspaceCheck()
    pending: list[tuple[str, tuple[str, ...]]] = [(str(workspace), ())]
    while pending:
        current, folders = pending.pop()
        with os.scandir(current) as entries:
            listing = sorted(entries, key=lambda entry: entry.name)
        for entry in listing:
            name = entry.name
            rel = "/".join((*folders, name))
            if not folders and name == ORGANIZER_STATE_DIR and entry.is_dir(follow_symlinks=False):
                check.unexpected += _foreign_state(entry.path)
                continue
            if entry.is_dir(follow_symlinks=False):
                problem = folder_name_problem(name)
                if problem:
                    check.bad_folders[rel] = problem
                pending.append((entry.path, (*folders, name)))
                continue
            record = name[: -len(RECORD_SUFFIX)] if name.endswith(RECORD_SUFFIX) else None
            if record not in expected or not entry.is_file(follow_symlinks=False):
                check.unexpected.append(rel)  # includes symlinks, sockets, stray files
                continue
            check.locations.setdefault(record, []).append(rel)
            if hash_bytes and sha256_file(Path(entry.path)) != expected[record]:
                check.changed.append(record)
    for record in sorted(expected):
        where = check.locations.get(record)
        if not where:
            check.missing.append(record)
        elif len(where) > 1:
            check.duplicated[record] = sorted(where)
        else:
            check.paths[record] = tuple(where[0].split("/")[:-1])
    check.changed = sorted(set(check.changed))
    check.unexpected.sort()
    return check


def _foreign_state(state: str) -> list[str]:
    """Entries under `.organizer/` that the organizer did not write (it writes only regular files)."""
    foreign: list[str] = []
    with os.scandir(state) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            if entry.name not in ORGANIZER_STATE_FILES or not entry.is_file(follow_symlinks=False):
                foreign.append(f"{ORGANIZER_STATE_DIR}/{entry.name}")
    return foreign

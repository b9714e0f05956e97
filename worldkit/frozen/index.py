"""The frozen index: what `worldkit freeze` wrote under `manifests/<world>/`, read back.

    manifests/<world>/revisions.json                              the index (root of trust)
    manifests/<world>/projections/<rev>/<date>/<seat>.json        one projection manifest each

The index lists every revision with its canonical digest and every frozen projection with its
fingerprint, so a deleted or swapped projection manifest is noticed. `worldkit.verify.frozen`
writes it; the staged-folder checks here and `verify` read it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import ValidationError

from worldkit._model import Model
from worldkit.errors import InvalidWorld
from worldkit.locate import manifest_dir
from worldkit.world.load import WorldPackage

INDEX_NAME = "revisions.json"
PROJECTIONS_DIR = "projections"


class FrozenRevision(Model):
    name: str
    """Revision name."""
    parent: str | None
    """Parent revision."""
    digest: str
    """Canonical digest of the revision's whole state."""


class FrozenProjection(Model):
    rev: str
    """Revision name."""
    date: str
    """Projection date (ISO)."""
    seat: str
    """Seat id."""
    fingerprint: str
    """The projection's fingerprint."""
    files: int
    """Number of files in the projection."""

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.rev, self.date, self.seat)

    @property
    def relpath(self) -> str:
        return f"{PROJECTIONS_DIR}/{self.rev}/{self.date}/{self.seat}.json"


class FrozenIndex(Model):
    """`revisions.json`: the frozen revisions and the index of frozen projections."""

    schema_version: Literal[1] = 1
    """Format version."""
    world: str
    """World id."""
    revisions: list[FrozenRevision]
    """Every revision, base first."""
    projections: list[FrozenProjection]
    """Every frozen projection, sorted by (rev, date, seat)."""

    def revision(self, name: str) -> FrozenRevision | None:
        return next((r for r in self.revisions if r.name == name), None)

    @property
    def dates(self) -> list[str]:
        return sorted({p.date for p in self.projections})


def default_manifest_dir(package: WorldPackage) -> Path:
    """`manifests/<world>/` beside the `worlds/` folder holding the world (or beside the world)."""
    return manifest_dir(package.root, package.id)


def read_index(folder: Path) -> FrozenIndex:
    """The frozen index; an absent or malformed one is an error naming the fix."""
    path = folder / INDEX_NAME
    try:
        return FrozenIndex.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        raise InvalidWorld("no frozen manifests; run `worldkit freeze --world W` first", file=path) from None
    except (ValidationError, json.JSONDecodeError, UnicodeDecodeError) as error:
        first = str(error).splitlines()[0]
        raise InvalidWorld(f"corrupted frozen index ({first}); re-run `worldkit freeze`", file=path) from None

"""Verify fixtures: a frozen builder world, and a frozen copy of the overlay fixtures (world + tasks)."""

from __future__ import annotations

import hashlib
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.builders import WorldSpec
from worldkit.verify import freeze_world

REPO = Path(__file__).resolve().parents[3]
OVERLAY_FIXTURES = REPO / "tests" / "fixtures" / "overlays"
DATE = "2025-07-01"


@dataclass(frozen=True)
class Frozen:
    """A world with its frozen manifests (and overlays, if any), all in a temp folder."""

    world: Path
    manifests: Path
    overlays: Path | None = None


def freeze_copy(root: Path, spec: WorldSpec | None = None) -> Frozen:
    world = (spec or WorldSpec()).write(root / "worlds" / "mini")
    manifests = root / "manifests" / "mini"
    freeze_world(world, [DATE], manifests=manifests)
    return Frozen(world, manifests)


def freeze_fixture(root: Path) -> Frozen:
    """The overlay tests' fixture world and good overlays, copied, then frozen at their date."""
    shutil.copytree(OVERLAY_FIXTURES / "world", root / "fixture" / "world")
    shutil.copytree(OVERLAY_FIXTURES / "good", root / "fixture" / "good")
    manifests = root / "manifests" / "mini"
    freeze_world(root / "fixture" / "world", [DATE], manifests=manifests)
    freeze_overlays(root / "fixture" / "good", root / "manifests")
    return Frozen(root / "fixture" / "world", manifests, root / "fixture" / "good")


def freeze_overlays(folder: Path, manifests: Path) -> None:
    from worldkit.overlay.author import freeze_overlay
    from worldkit.verify.tasks import overlay_files

    for path in overlay_files(folder):
        freeze_overlay(path, manifests)


def tree_digest(*roots: Path) -> str:
    """One digest over every file under the roots (to prove nothing was touched)."""
    digest = hashlib.sha256()
    for root in roots:
        for path in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
            digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


@pytest.fixture()
def mini(tmp_path: Path) -> Frozen:
    return freeze_copy(tmp_path)


@pytest.fixture(scope="module")
def tasks_world(tmp_path_factory: pytest.TempPathFactory) -> Frozen:
    """Read-only: a frozen world with two overlays on one seat (tests must not modify it)."""
    return freeze_fixture(tmp_path_factory.mktemp("tasks"))

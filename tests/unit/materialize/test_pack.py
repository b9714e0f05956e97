"""A projection materialized again reads every file from its pack: the same tree, nothing rendered;
keyed by revision, date, seat, plan and code; a damaged pack is rendered around and deleted."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.builders import WorldSpec
from worldkit.materialize import materialize, pack
from worldkit.materialize.memo import _MEMO, fresh_renders
from worldkit.render import Renderer
from worldkit.world import load_world

pytestmark = pytest.mark.skipif(not hasattr(os, "pread"), reason="packs are read with os.pread")


@pytest.fixture
def packs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("WORLDKIT_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("WORLDKIT_RENDER_CACHE", raising=False)
    folder = pack.folder()
    assert folder == tmp_path / "cache" / "packs"
    return folder


def _packs(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if not p.name.startswith(".")) if folder.is_dir() else []


def _same_tree(a: Path, b: Path, manifest) -> None:
    for entry in manifest.files:
        assert (a / entry.path).read_bytes() == (b / entry.path).read_bytes()
        assert (a / entry.path).stat().st_mtime == (b / entry.path).stat().st_mtime
    assert (a / "manifest.json").read_bytes() == (b / "manifest.json").read_bytes()


def _refusing(patch: pytest.MonkeyPatch) -> None:
    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("rendered although packed")

    for name in ("document_dated", "message_body"):
        patch.setattr(Renderer, name, refuse)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_projection_materialized_again_is_read_from_its_pack(
    packs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: str
) -> None:
    monkeypatch.setenv("WORLDKIT_JOBS", jobs)
    package = load_world(WorldSpec().write(tmp_path / "worlds" / "mini"))
    with fresh_renders():
        reference = materialize(package, "r1", "2025-07-01", "S1", tmp_path / "reference")
    assert _packs(packs) == []  # no pack where rendering must happen anew
    _MEMO.clear()
    first = materialize(package, "r1", "2025-07-01", "S1", tmp_path / "first")
    assert len(_packs(packs)) == 1
    _MEMO.clear()
    with monkeypatch.context() as patch:
        _refusing(patch)
        again = materialize(package, "r1", "2025-07-01", "S1", tmp_path / "again")
    assert again.manifest == first.manifest == reference.manifest
    _same_tree(tmp_path / "again", tmp_path / "reference", reference.manifest)


@pytest.mark.parametrize("other", [("r1", "2025-06-01", "S1"), ("r1", "2025-07-01", "S2"), ("r2", "2025-07-01", "S1")])
def test_another_revision_date_or_seat_has_its_own_pack(
    packs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, other: tuple[str, str, str]
) -> None:
    package = load_world(WorldSpec().write(tmp_path / "worlds" / "mini"))
    materialize(package, "r1", "2025-07-01", "S1", tmp_path / "first")
    _MEMO.clear()
    made = materialize(package, *other, tmp_path / "other")
    assert len(_packs(packs)) == 2
    with fresh_renders():
        fresh = materialize(package, *other, tmp_path / "fresh")
    assert made.manifest == fresh.manifest
    _same_tree(tmp_path / "other", tmp_path / "fresh", fresh.manifest)


@pytest.mark.parametrize("damage", ["segment", "index"])
def test_a_damaged_pack_is_rendered_around_and_deleted(
    packs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    package = load_world(WorldSpec().write(tmp_path / "worlds" / "mini"))
    first = materialize(package, "r1", "2025-07-01", "S1", tmp_path / "first")
    (found,) = _packs(packs)
    target = found / "index" if damage == "index" else next(p for p in sorted(found.glob("seg-*")) if p.stat().st_size)
    blob = bytearray(target.read_bytes())
    blob[-3] ^= 0xFF
    target.write_bytes(bytes(blob))
    _MEMO.clear()
    again = materialize(package, "r1", "2025-07-01", "S1", tmp_path / "again")
    assert again.manifest == first.manifest
    _same_tree(tmp_path / "again", tmp_path / "first", first.manifest)
    if damage == "segment":
        assert _packs(packs) == []  # deleted, rewritten by the next run
    _MEMO.clear()
    materialize(package, "r1", "2025-07-01", "S1", tmp_path / "third")
    assert len(_packs(packs)) == 1


def test_the_folder_keeps_the_most_recent_packs(packs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pack, "KEEP", 2)
    package = load_world(WorldSpec().write(tmp_path / "worlds" / "mini"))
    for k, date in enumerate(["2025-05-01", "2025-06-01", "2025-07-01"]):
        materialize(package, "r1", date, "S1", tmp_path / f"out-{k}")
    assert len(_packs(packs)) == 2

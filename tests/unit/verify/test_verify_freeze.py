"""`freeze_world`: deterministic frozen manifests, an index that binds them, stale dates removed."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from tests.builders import WorldSpec
from tests.unit.verify.conftest import DATE, freeze_copy
from worldkit.errors import InvalidWorld, UsageError
from worldkit.frozen.index import default_manifest_dir, read_index
from worldkit.materialize import materialize
from worldkit.materialize.manifest import manifest_bytes, read_manifest
from worldkit.verify import freeze_world
from worldkit.world import load_world


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_layout_and_index(tmp_path: Path) -> None:
    frozen = freeze_copy(tmp_path)
    index = read_index(frozen.manifests)
    assert [r.name for r in index.revisions] == ["r1", "r2"]
    assert sorted(_files(frozen.manifests)) == ["projections/r1/2025-07-01/S1.json", "projections/r1/2025-07-01/S2.json",
                                                "projections/r1/2025-07-01/S4.json", "projections/r2/2025-07-01/S1.json",
                                                "projections/r2/2025-07-01/S2.json", "projections/r2/2025-07-01/S4.json",
                                                "revisions.json"]
    package = load_world(frozen.world)
    for entry in index.projections:
        manifest = read_manifest(frozen.manifests / entry.relpath)
        assert manifest.fingerprint == entry.fingerprint
        direct = materialize(package, entry.rev, entry.date, entry.seat, tmp_path / "direct" / entry.relpath)
        assert manifest_bytes(direct.manifest) == (frozen.manifests / entry.relpath).read_bytes()
    assert index.revision("r2").digest == package.revision("r2").digest


def test_freezing_twice_and_shuffled_sources_give_identical_bytes(tmp_path: Path) -> None:
    first = freeze_copy(tmp_path / "a")
    again = _files(first.manifests)
    freeze_world(first.world, manifests=first.manifests)  # dates default to the ones frozen before
    assert _files(first.manifests) == again
    spec = WorldSpec()
    rng = random.Random(7)
    for items in spec.data.values():
        rng.shuffle(items)
    shuffled = freeze_copy(tmp_path / "b", spec)
    assert _files(shuffled.manifests) == again


def test_a_new_date_list_replaces_the_old_one(tmp_path: Path) -> None:
    frozen = freeze_copy(tmp_path)
    result = freeze_world(frozen.world, ["2025-05-01"], manifests=frozen.manifests)
    assert {p.date for p in read_index(frozen.manifests).projections} == {"2025-05-01"}
    assert "projections/r1/2025-07-01/S1.json" in result.removed
    assert not (frozen.manifests / "projections" / "r1" / DATE).exists()


def test_default_folder_and_date(tmp_path: Path) -> None:
    spec = WorldSpec()
    spec.world["default_date"] = "2025-06-01"
    world = spec.write(tmp_path / "worlds" / "mini")
    result = freeze_world(world)
    assert result.folder == tmp_path / "manifests" / "mini" == default_manifest_dir(load_world(world))
    assert read_index(result.folder).dates == ["2025-06-01"]


def test_no_date_anywhere_is_a_usage_error(tmp_path: Path) -> None:
    world = WorldSpec().write(tmp_path / "worlds" / "mini")
    with pytest.raises(UsageError, match="has no default_date; pass --date"):
        freeze_world(world)


def test_unreadable_index_names_the_fix(tmp_path: Path) -> None:
    with pytest.raises(InvalidWorld, match="run `worldkit freeze --world W` first"):
        read_index(tmp_path)
    (tmp_path / "revisions.json").write_text(json.dumps({"schema_version": 9}))
    with pytest.raises(InvalidWorld, match="corrupted frozen index"):
        read_index(tmp_path)

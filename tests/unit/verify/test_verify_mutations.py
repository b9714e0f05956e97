"""The mutation campaign: deterministic, and every projection-changing mutation is detected."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.verify.conftest import Frozen, tree_digest
from worldkit.verify.inject import edit_changeset
from worldkit.verify.mutations import MUTATORS, changed_views, run_mutations, views
from worldkit.verify.scratch import ScratchCopy
from worldkit.verify.seeded import load_pristine


@pytest.fixture(scope="module")
def campaign(tasks_world: Frozen) -> dict:
    before = tree_digest(tasks_world.world, tasks_world.manifests, tasks_world.overlays)
    report = run_mutations(tasks_world.world, 40, 3, manifests=tasks_world.manifests, overlays=tasks_world.overlays)
    assert tree_digest(tasks_world.world, tasks_world.manifests, tasks_world.overlays) == before
    return report.as_json()


def test_every_projection_changing_mutation_is_detected(campaign: dict) -> None:
    assert campaign["attempted"] == 40
    assert campaign["projection_changing"] > 0
    assert campaign["undetected_projection_changing"] == []
    assert campaign["projection_changing_detected"] == campaign["projection_changing"]
    assert 0 < campaign["rate"] <= 1 and campaign["baseline_failures"] == []


def test_the_report_shape(campaign: dict) -> None:
    assert {"attempted", "projection_changing", "detected", "rate"} <= campaign.keys()
    assert set(campaign["by_kind"]) <= set(MUTATORS)
    assert sum(k["attempted"] for k in campaign["by_kind"].values()) == 40
    for row in campaign["mutations"]:
        assert row["detected"] == bool(row["detected_by"])


def test_same_seed_same_campaign(tasks_world: Frozen, campaign: dict) -> None:
    again = run_mutations(tasks_world.world, 40, 3, manifests=tasks_world.manifests, overlays=tasks_world.overlays)
    assert again.as_json() == campaign


def _copy(tmp_path: Path, frozen: Frozen) -> ScratchCopy:
    return ScratchCopy.make(tmp_path, frozen.world, "mini", frozen.manifests, None)


def test_the_oracle_tells_visible_changes_from_invisible_ones(mini: Frozen, tmp_path: Path) -> None:
    base = _copy(tmp_path / "base", mini)
    before = views(base.world, load_pristine(base).keys)
    assert isinstance(before, dict) and len(before) == 6
    invisible = base.clone(tmp_path / "a")
    edit_changeset(invisible.world, "r1", update={"permissions": [{"id": "R-QMS", "set": {"description": "reworded"}}]})
    assert changed_views(before, invisible.world) == []
    visible = base.clone(tmp_path / "b")
    edit_changeset(visible.world, "r1", update={"permissions": [{"id": "R-DESK", "set": {"subject": {"everyone": True}}}]})
    assert changed_views(before, visible.world) == ["r1/2025-07-01/S2", "r1/2025-07-01/S4", "r2/2025-07-01/S2",
                                                    "r2/2025-07-01/S4"]
    broken = base.clone(tmp_path / "c")
    (broken.world / "world.yaml").write_text("revisions: [")
    assert changed_views(before, broken.world)[0].startswith("world no longer loads")


def test_the_oracle_renders_again_only_revisions_whose_digest_changed(mini: Frozen, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from worldkit.verify import mutations
    from worldkit.world import load_world

    base = _copy(tmp_path / "base", mini)
    before = views(base.world, load_pristine(base).keys)
    assert isinstance(before, dict)
    digests = mutations.revision_digests(load_world(base.world))
    planned: list[str] = []
    real = mutations.plan_projection
    monkeypatch.setattr(mutations, "plan_projection", lambda state, *a: planned.append(state.revision) or real(state, *a))
    visible = base.clone(tmp_path / "b")  # r2 changes only: r1 is not rendered again
    edit_changeset(visible.world, "r2", update={"permissions": [{"id": "R-DESK", "set": {"subject": {"everyone": True}}}]})
    assert changed_views(before, visible.world, digests) == changed_views(before, visible.world)
    planned.clear()
    assert changed_views(before, visible.world, digests) == ["r2/2025-07-01/S2", "r2/2025-07-01/S4"]
    assert set(planned) == {"r2"}
    planned.clear()
    untouched = base.clone(tmp_path / "c")
    (untouched.world / "NOTES.md").write_text("not part of any revision's state\n")
    assert changed_views(before, untouched.world, digests) == [] and planned == []


def test_the_oracle_agrees_with_the_frozen_manifests(mini: Frozen, tmp_path: Path) -> None:
    base = _copy(tmp_path / "base", mini)
    pristine = load_pristine(base)
    before = views(base.world, pristine.keys)
    for key, manifest in pristine.frozen.items():
        listed = ("bundle", manifest.tool_bundle_sha256, *sorted(f"{e.path} {e.sha256}" for e in manifest.files))
        assert before[key] == listed


def test_a_campaign_without_overlays_skips_task_kinds(mini: Frozen) -> None:
    report = run_mutations(mini.world, 12, 5, manifests=mini.manifests).as_json()
    assert not {"staged-byte-flip", "seeded:renamed-verifier-file"} & set(report["by_kind"])
    assert report["undetected_projection_changing"] == []

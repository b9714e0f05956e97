"""The overlay model: what the YAML alone must get right, and how loading reports what it gets wrong."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pydantic
import pytest
import yaml

import worldkit.overlay as overlay_pkg
from tests.fixtures.overlays.paths import FIXTURES, GOOD, TRIAGE, good_raw
from worldkit.errors import ExitCode, InvalidOverlay
from worldkit.overlay import (
    Overlay,
    find_overlays,
    load_overlay,
    overlay_digest,
    resolve_overlay,
)
from worldkit.overlay.load import parse_overlay
from worldkit.overlay.schemas import schemas


def test_good_fixture_loads_with_every_table_a1_field() -> None:
    overlay = load_overlay(GOOD)
    assert (overlay.world, overlay.rev, overlay.date.isoformat(), overlay.seat) == ("../world", "r2", "2025-07-01", "S1")
    assert overlay.schema_version == 1
    assert overlay.request.startswith("Lee asked")
    assert overlay.surfaces == ["files", "records", "communication"]
    assert [p.kind for p in overlay.permitted] == ["write_file", "send_message", "update_record"]
    assert [p.id for p in overlay.prohibited] == ["no-all-staff", "no-status-change"]
    assert overlay.deliverable.path == "report.md" and overlay.deliverable.state_change is not None
    assert {c.route for c in overlay.rubric} == {"deterministic", "semantic"}
    assert overlay.conditions == ["full", "curated:curator-1", "curated:curator-2"]
    assert overlay.source == GOOD.resolve()


def test_no_prohibited_change_gets_the_overlay_rules() -> None:
    overlay = load_overlay(GOOD)
    check = overlay.criterion("C11").check
    assert [r.id for r in check.rules] == ["no-all-staff", "no-status-change"]  # type: ignore[union-attr]
    raw = good_raw()
    raw["rubric"][10]["check"]["ids"] = ["no-status-change"]
    only = parse_overlay(raw).criterion("C11").check
    assert [r.id for r in only.rules] == ["no-status-change"]  # type: ignore[union-attr]


def test_dumped_overlay_round_trips() -> None:
    overlay = load_overlay(GOOD)
    again = parse_overlay(overlay.model_dump(mode="json"))
    assert again.model_dump() == overlay.model_dump()


def test_overlay_digest_ignores_layout_key_order_and_comments(tmp_path: Path) -> None:
    raw = good_raw()
    shuffled = dict(reversed(list(raw.items())))
    copy = tmp_path / "copy.yaml"
    copy.write_text("# a comment\n" + yaml.safe_dump(shuffled, sort_keys=True), encoding="utf-8")
    (tmp_path / "world").symlink_to(FIXTURES / "world")
    raw_world = yaml.safe_load(copy.read_text())
    assert raw_world["world"] == "../world"
    assert overlay_digest(load_overlay(copy)) == overlay_digest(load_overlay(GOOD))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r["rubric"][1].pop("check"), "a deterministic criterion needs a `check`"),
        (lambda r: r["rubric"][12].update(check={"type": "deliverable_exists", "path": "x"}), "a semantic criterion has no `check`"),
        (lambda r: r["rubric"].append(dict(r["rubric"][0])), "duplicate criterion id C1"),
        (lambda r: r["rubric"][10]["check"].update(ids=["nope"]), "no prohibited change with id nope"),
        (lambda r: r.update(deliverable={"description": "x"}), "needs a `path`, a `state_change`, or both"),
        (lambda r: r["evidence"]["C1"][0][0].update(locator="Shared/x.md", surface="files"), "starting with `files/`"),
        (lambda r: r["evidence"]["C1"][0][0].update(fields=["x"], surface="mail"), "only meaningful for the records"),
        (lambda r: r["reference"]["actions"].append({"tool": "format_disk"}), "unknown tool 'format_disk'"),
        (lambda r: r["reference"]["actions"].append({"tool": "write_file", "args": {"path": "x"}}), "content"),
        (lambda r: r["reference_files"].append({"name": "x.md"}), "exactly one of `text`, `path` or `document`"),
        (lambda r: r["reference_files"].append({"name": "../x.md", "text": "x"}), "relative path"),
        (lambda r: r.update(workspace_seed=[{"path": "/etc/x", "text": ""}]), "relative path"),
        (lambda r: r.update(pinned_fingerprint="abc"), "pinned_fingerprint"),
        (lambda r: r.update(schema_version=2), "schema_version"),
        (lambda r: r.update(colour="red"), "unknown key `colour`"),
        (lambda r: r["prohibited"][0].update(match={"recipient": "x"}), "not arguments of send_message"),
        (lambda r: r["permitted"].append({"kind": "delete_world"}), "permitted"),
    ],
)
def test_invalid_overlays_are_exit_3_and_say_why(change: Any, message: str) -> None:
    raw = good_raw()
    change(raw)
    with pytest.raises(InvalidOverlay) as info:
        parse_overlay(raw, GOOD)
    assert info.value.exit_code == ExitCode.INVALID_INPUT
    assert message in info.value.message and str(GOOD) in info.value.message


def test_every_validation_problem_is_reported_at_once() -> None:
    raw = good_raw()
    raw["colour"] = "red"
    raw["rubric"][1].pop("check")
    with pytest.raises(InvalidOverlay) as info:
        parse_overlay(raw, GOOD)
    message = info.value.message
    assert "2 problems: " in message
    assert "entity cc1-report, field colour: unknown key `colour`; known keys: " in message and "rubric, " in message
    assert "entity C2, field rubric.1: a deterministic criterion needs a `check`; fix the value" in message


def test_yaml_syntax_error_names_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("id: x\nrubric: [\n", encoding="utf-8")
    with pytest.raises(InvalidOverlay, match=r"bad.yaml: not valid YAML at line 3, column 1"):
        load_overlay(bad)


def test_resolve_and_find_overlays(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_overlay(TRIAGE.parent) == TRIAGE
    root = tmp_path / "overlays"
    (root / "mini" / "folder-task").mkdir(parents=True)
    (root / "mini" / "b-task.yaml").write_text("x: 1\n")
    (root / "mini" / "folder-task" / "overlay.yaml").write_text("x: 1\n")
    monkeypatch.setenv("WORLDKIT_OVERLAYS", str(root))
    assert find_overlays("mini") == [root / "mini" / "b-task.yaml", root / "mini" / "folder-task" / "overlay.yaml"]
    assert find_overlays("nowhere") == []
    assert resolve_overlay("mini/folder-task") == (root / "mini" / "folder-task" / "overlay.yaml").resolve()
    assert resolve_overlay("b-task") == (root / "mini" / "b-task.yaml").resolve()
    with pytest.raises(Exception, match="no overlay 'ghost'"):
        resolve_overlay("ghost")


def test_schema_spells_out_every_check_type() -> None:
    found = schemas()
    assert sorted(found) == ["overlay.schema.json", "tool-config.schema.json"]
    overlay = found["overlay.schema.json"]
    check = overlay["$defs"]["BaseCheck"]
    assert check["discriminator"]["propertyName"] == "type"
    assert "no_prohibited_change" in check["discriminator"]["mapping"]
    assert "Contains" in overlay["$defs"] and overlay["properties"]["request"]["description"]


def _models() -> list[type[pydantic.BaseModel]]:
    return [
        obj for _, obj in inspect.getmembers(overlay_pkg)
        if inspect.isclass(obj) and issubclass(obj, pydantic.BaseModel) and obj.__module__.startswith("worldkit.overlay")
    ]  # fmt: skip


def test_every_field_of_every_overlay_model_has_a_docstring() -> None:
    missing = [f"{m.__name__}.{n}" for m in _models() for n, f in m.model_fields.items() if not f.description]
    assert missing == []
    assert Overlay in _models()


def test_models_are_frozen_and_forbid_unknown_fields() -> None:
    for model in _models():
        assert model.model_config.get("frozen") and model.model_config.get("extra") == "forbid", model.__name__


def test_repository_overlays_are_valid_and_share_their_seat_projection() -> None:
    repo = Path(__file__).resolve().parents[3] / "overlays"
    found = sorted(repo.glob("*/*.yaml")) + sorted(repo.glob("*/*/overlay.yaml"))
    assert found, "no overlays in the repository"
    loaded = [load_overlay(path) for path in found]
    by_inputs: dict[tuple, set[str]] = {}
    for overlay in loaded:
        by_inputs.setdefault((overlay.world, overlay.rev, overlay.date, overlay.seat), set()).add(overlay.pinned_fingerprint)
    assert all(len(pins) == 1 for pins in by_inputs.values()), by_inputs
    demo = find_overlays("pharmaco_demo")
    assert {load_overlay(p).id for p in demo} == {
        "stability-update", "authority-response", "shelf-life-assessment", "qualification-sweep",
        "overwrap-position", "validation-defense", "records-integrity", "supplier-change-audit",
    }

"""`worldkit overlay new|check|apply|freeze|pin` end to end through the CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.fixtures.overlays import make_broken
from tests.fixtures.overlays.paths import BROKEN, GOOD, TRIAGE, WORLD
from worldkit._cli.main import run


def _json(capsys: pytest.CaptureFixture[str], argv: list[str], code: int = 0) -> dict:
    assert run(argv) == code
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("command", ["new", "check", "apply", "freeze", "pin"])
def test_every_overlay_command_has_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["overlay", command, "--help"]) == 0
    out = capsys.readouterr().out
    assert f"Usage: worldkit overlay {command}" in out and len(out.splitlines()) > 4


def test_apply_json_twice_identical_and_equal_to_materialize(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = _json(capsys, ["overlay", "apply", str(GOOD), "--out", str(tmp_path / "a"), "--json"])
    second = _json(capsys, ["overlay", "apply", str(GOOD), "--out", str(tmp_path / "b"), "--json"])
    assert {"candidate_sha256", "verifier_sha256", "fingerprint", "world", "rev", "date", "seat"} <= first.keys()
    assert (first["world"], first["rev"], first["date"], first["seat"]) == ("mini", "r2", "2025-07-01", "S1")
    assert {k: v for k, v in first.items() if k != "out"} == {k: v for k, v in second.items() if k != "out"}
    direct = _json(capsys, ["materialize", "--world", str(WORLD), "--rev", "r2", "--date", "2025-07-01",
                            "--seat", "S1", "--out", str(tmp_path / "m"), "--json"])  # fmt: skip
    assert first["fingerprint"] == direct["fingerprint"]


def test_apply_text_output_and_curated_condition(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["overlay", "apply", str(TRIAGE.parent), "--out", str(tmp_path / "t"), "--condition", "curated:minimal"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"cc1-triage [curated:minimal] mini r2 2025-07-01 S1 → {tmp_path / 't'}"
    assert [line.split(":")[0] for line in lines[1:]] == ["fingerprint", "candidate", "verifier"]
    assert run(["overlay", "apply", str(GOOD), "--out", str(tmp_path / "x"), "--condition", "partial"]) == 2
    assert "unknown condition 'partial'" in capsys.readouterr().err


def test_check_good_fixtures_exit_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["overlay", "check", str(GOOD)]) == 0
    out = capsys.readouterr().out  # the small fixtures carry no counterfactuals: one warning says so
    assert out.endswith("cc1-report: ok (0 error(s), 1 warning(s))\n") and "counterfactual-missing" in out
    data = _json(capsys, ["overlay", "check", str(TRIAGE), "--json"])
    assert data["ok"] is True and [p["code"] for p in data["problems"]] == ["counterfactual-missing"]


@pytest.mark.parametrize("name", sorted(make_broken.DEFECTS))
def test_check_broken_fixtures_exit_1_and_name_the_item(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    defect = make_broken.DEFECTS[name]
    assert run(["overlay", "check", str(BROKEN / f"{name}.yaml")]) == 1
    out = capsys.readouterr().out
    assert any(line.startswith("error") and f" {defect.locator}: " in line and "Fix: " in line for line in out.splitlines())
    assert out.splitlines()[-1].startswith("cc1-report: FAILED (")


def test_check_error_lines_are_exact(capsys: pytest.CaptureFixture[str]) -> None:
    from worldkit.overlay._paths import PATH_CONVENTIONS

    assert run(["overlay", "check", str(BROKEN / "curated-missing.yaml")]) == 1
    lines = [line for line in capsys.readouterr().out.splitlines(keepends=True) if "counterfactual-missing" not in line]
    assert "".join(lines) == (
        "error   curated-missing                curated.curator-1[5]: files/Shared/Notes/window note (renamed).md is "
        "not in the projection. Fix: a packet only selects existing projection files (no additions or renames); "
        f"fix the path or remove it; {PATH_CONVENTIONS}\n"
        "cc1-report: FAILED (1 error(s), 1 warning(s))\n"
    )


@pytest.mark.parametrize("name", ["invalid-yaml", "invalid-model"])
def test_check_invalid_yaml_exits_3(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["overlay", "check", str(BROKEN / f"{name}.yaml")]) == 3
    err = capsys.readouterr().err
    assert err.startswith(f"error: file {BROKEN / name}.yaml: ")


def test_new_check_freeze_pin_workflow(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "overlays" / "mini" / "t1.yaml"
    argv = ["overlay", "new", "--world", str(WORLD), "--rev", "r2", "--date", "2025-07-01", "--seat", "S1",
            "--id", "t1", "--out", str(target)]  # fmt: skip
    assert run(argv) == 0
    assert capsys.readouterr().out == f"wrote {target}\nnext: fill in the TODOs, then `worldkit overlay check {target}`\n"
    assert run(argv) == 2 and "exists; pass --force" in capsys.readouterr().err
    assert run(["overlay", "check", str(target)]) == 1  # the scaffold's TODOs are not an overlay yet
    out = capsys.readouterr().out
    assert "error   placeholder-left               title: still holds the placeholder TODO" in out
    assert out.endswith("t1: FAILED (7 error(s), 1 warning(s))\n")
    assert run(["overlay", "freeze", str(target), "--manifests", str(tmp_path / "manifests")]) == 1
    assert "fix them before freezing" in capsys.readouterr().err
    target.write_text(target.read_text().replace("TODO: title of", "Title of").replace("TODO", "Written"))
    assert run(["overlay", "check", str(target)]) == 0
    capsys.readouterr()
    lock = _json(capsys, ["overlay", "freeze", str(target), "--manifests", str(tmp_path / "manifests"), "--json"])
    frozen = tmp_path / "manifests" / "mini" / "overlays" / "t1.json"
    assert lock["path"] == str(frozen) and list(lock["conditions"]) == ["full"]
    assert run(["overlay", "pin", str(target)]) == 0
    assert capsys.readouterr().out == f"{target.resolve()}: unchanged\n"


def test_freeze_refuses_broken_and_pin_repairs_stale(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "world").symlink_to(WORLD)
    (tmp_path / "o").mkdir()
    stale = tmp_path / "o" / "stale.yaml"
    shutil.copy(BROKEN / "fingerprint-stale.yaml", stale)
    assert run(["overlay", "freeze", str(stale), "--manifests", str(tmp_path / "m")]) == 1
    assert "fingerprint-stale" in capsys.readouterr().err
    assert run(["overlay", "apply", str(stale), "--out", str(tmp_path / "p")]) == 1
    assert "no longer matches the projection" in capsys.readouterr().err
    assert run(["overlay", "pin", str(stale)]) == 0
    assert capsys.readouterr().out.startswith(f"{stale.resolve()}: 000000000000 → ")
    assert run(["overlay", "freeze", str(stale), "--manifests", str(tmp_path / "m")]) == 0


def test_schema_command_writes_the_overlay_schema(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["schema", "--out", str(tmp_path)]) == 0
    schema = json.loads((tmp_path / "overlay.schema.json").read_text())
    assert "pinned_fingerprint" in schema["required"]
    assert (tmp_path / "tool-config.schema.json").is_file()

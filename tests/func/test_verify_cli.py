"""`worldkit freeze` and `worldkit verify` end to end through the CLI (exit codes, output, JSON shapes)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.builders import WorldSpec
from worldkit._cli.main import run

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "overlays"


@pytest.fixture()
def mini(tmp_path: Path) -> Path:
    """A builder world frozen at 2025-07-01 (manifests land in tmp/manifests/mini)."""
    world = WorldSpec().write(tmp_path / "worlds" / "mini")
    assert run(["freeze", "--world", str(world), "--date", "2025-07-01"]) == 0
    return world


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The overlay fixtures' world and good overlays, frozen (read-only for the tests)."""
    root = tmp_path_factory.mktemp("tasks")
    shutil.copytree(FIXTURES / "world", root / "world")  # the overlays name their world as ../world
    shutil.copytree(FIXTURES / "good", root / "good")
    assert run(["freeze", "--world", str(root / "world"), "--date", "2025-07-01"]) == 0
    for overlay in ("cc1-report.yaml", "cc1-triage"):
        assert run(["overlay", "freeze", str(root / "good" / overlay), "--manifests", str(root / "manifests")]) == 0
    return root / "world", root / "good"


def test_help_for_both_commands(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("verify", "freeze"):
        assert run([command, "--help"]) == 0
        assert "Usage: worldkit " + command in capsys.readouterr().out


def test_freeze_prints_digests(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    world = WorldSpec().write(tmp_path / "worlds" / "mini")
    assert run(["freeze", "--world", str(world), "--date", "2025-07-01", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["manifests"] == str(tmp_path / "manifests" / "mini")
    assert [p["seat"] for p in summary["projections"]] == ["S1", "S2", "S4", "S1", "S2", "S4"]
    assert summary["written"][0] == "revisions.json"


def test_verify_passes_and_lists_every_check(mini: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["verify", "--world", str(mini)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("verify mini\nPASS  revision-digests ")
    assert "SKIP  separation " in out and "world mini has no task overlays" in out
    assert out.endswith("11 passed, 0 failed, 11 skipped, 0 errors\nverify: pass\n")  # the rubric checks skip too


@pytest.mark.slow
def test_verify_json_shape(mini: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    summary = tmp_path / "validation.json"
    assert run(["verify", "--world", str(mini), "--json", "--summary", str(summary)]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["status"] == "pass" and body["world"] == "mini"
    assert all({"id", "status", "purpose"} <= c.keys() for c in body["checks"])
    assert {c["status"] for c in body["checks"]} == {"pass", "skip"}
    record = json.loads(summary.read_text())
    assert record == body["validation"]
    assert record["world_rebuilds"]["attempted"] == record["world_rebuilds"]["identical"] == 3
    assert record["seat_materializations"] == {**record["seat_materializations"], "attempted": 9, "identical": 9}
    first = summary.read_bytes()
    assert run(["verify", "--world", str(mini), "--summary", str(summary)]) == 0
    assert summary.read_bytes() == first  # the record holds no times: same world, same bytes


def test_a_changed_world_fails_with_the_item_and_the_fix(mini: Path, capsys: pytest.CaptureFixture[str]) -> None:
    template = mini / "templates" / "note.md.j2"
    template.write_text(template.read_text() + "edited\n")
    assert run(["verify", "--world", str(mini), "--only", "revision-digests,projection-rebuild"]) == 1
    out = capsys.readouterr().out
    assert "FAIL  revision-digests " in out and "FAIL  projection-rebuild " in out
    assert "- changed files/Shared/Notes/note.md [rev=r1 date=2025-07-01 seat=S1] expected " in out
    assert "fix: Find why the world source no longer renders the frozen bytes" in out
    assert out.endswith("verify: fail\n")


def test_an_unfrozen_world_fails_and_says_how_to_freeze(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    world = WorldSpec().write(tmp_path / "worlds" / "mini")
    assert run(["verify", "--world", str(world), "--only", "revision-digests"]) == 1
    assert "no frozen manifests; run `worldkit freeze --world W` first" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        (["verify"], 2, "error: pass --world W to verify a world, or --workspace DIR to check a staged folder"),
        (["verify", "--workspace", "x", "--seeded"], 2, "error: --seeded and --mutations need --world W"),
        (["verify", "--world", "nowhere-world"], 2, "error: unknown world 'nowhere-world'"),
    ],
)
def test_usage_errors(argv: list[str], code: int, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(argv) == code
    assert capsys.readouterr().err.startswith(message)


def test_unknown_check_lists_the_valid_ones(mini: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["verify", "--world", str(mini), "--only", "nope"]) == 2
    assert capsys.readouterr().err.startswith("error: unknown check nope; valid checks: revision-digests, ")


def test_an_invalid_world_exits_3(mini: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (mini / "data" / "all.yaml").write_text("people: [{id: P1}]\n")
    assert run(["verify", "--world", str(mini)]) == 3
    assert "required field is missing" in capsys.readouterr().err


@pytest.fixture
def staged(tasks: tuple[Path, Path], tmp_path: Path) -> tuple[Path, list[str]]:
    """The cc1-report task applied into `staged/`, and the `--manifests` arguments of its frozen manifests."""
    _, overlays = tasks
    out = tmp_path / "staged"
    assert run(["overlay", "apply", str(overlays / "cc1-report.yaml"), "--out", str(out)]) == 0
    return out, ["--manifests", str(overlays.parent / "manifests" / "mini")]


def test_workspace_edit_of_one_byte_blocks_and_names_the_file(
    staged: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    out, frozen = staged
    capsys.readouterr()
    for folder in (out, out / "candidate"):
        assert run(["verify", "--workspace", str(folder), *frozen]) == 0
    capsys.readouterr()
    target = out / "candidate" / "request.md"
    data = bytearray(target.read_bytes())
    data[5] ^= 0x01
    target.write_bytes(bytes(data))
    assert run(["verify", "--workspace", str(out / "candidate"), "--json", *frozen]) == 1
    body = json.loads(capsys.readouterr().out)
    assert body["status"] == "fail" and "validation" not in body
    check, against_frozen = body["checks"]
    assert check["id"] == "staged-workspace" and check["status"] == "fail"
    assert [(i["kind"], i["path"]) for i in check["items"]] == [("changed", "request.md")]
    assert against_frozen["id"] == "frozen-workspace" and against_frozen["status"] == "pass"  # the manifest is frozen
    assert run(["verify", "--workspace", str(out), *frozen]) == 1
    assert "- changed candidate/request.md expected " in capsys.readouterr().out


def test_the_rehashed_package_is_refused_unless_trusted(
    tasks: tuple[Path, Path], staged: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    from worldkit.verify.inject import rehash_package

    out, frozen = staged
    rehash_package(out, "projection/files/Shared/smuggled.md", b"# smuggled\n")
    capsys.readouterr()
    assert run(["verify", "--workspace", str(out), *frozen]) == 1
    text = capsys.readouterr().out
    assert "PASS  staged-workspace" in text and "FAIL  frozen-workspace" in text
    assert "- unfrozen-file candidate/projection/files/Shared/smuggled.md" in text
    assert run(["verify", "--workspace", str(out), *frozen, "--trust-staged", "--json"]) == 0
    body = json.loads(capsys.readouterr().out)
    trusted = body["checks"][1]
    assert trusted["status"] == "skip" and trusted["counts"]["trusted_staged"] is True
    assert run(["verify", "--world", str(tasks[0]), "--trust-staged"]) == 2


def test_a_fifo_in_the_workspace_does_not_block_verify(tasks: tuple[Path, Path], tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    _, overlays = tasks
    out = tmp_path / "staged"
    assert run(["overlay", "apply", str(overlays / "cc1-report.yaml"), "--out", str(out)]) == 0
    os.mkfifo(out / "candidate" / "workspace" / "pipe")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "worldkit", "verify", "--workspace", str(out), "--manifests",
                           str(overlays.parent / "manifests" / "mini")], capture_output=True, text=True, env=env,
                          timeout=120)  # a guard against a hang, not a timing assertion
    assert done.returncode == 1
    assert "- fifo candidate/workspace/pipe" in done.stdout


@pytest.mark.slow
def test_seeded_json(tasks: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    world, overlays = tasks
    assert run(["verify", "--world", str(world), "--overlays", str(overlays), "--seeded", "--json"]) == 0
    body = json.loads(capsys.readouterr().out)
    seeded = body["seeded"]
    from worldkit.verify.seeded import CASES

    assert (seeded["attempted"], seeded["detected"]) == (len(CASES), len(CASES))
    assert all({"name", "expected_check", "detected_by", "detected"} <= c.keys() for c in seeded["cases"])
    assert body["validation"]["seeded_failures"] == {"attempted": len(CASES), "detected": len(CASES)}


@pytest.mark.slow
def test_mutations_json(mini: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["verify", "--world", str(mini), "--only", "revision-digests", "--mutations", "6", "--seed", "2",
                "--json"]) == 0
    mutations = json.loads(capsys.readouterr().out)["mutations"]
    assert mutations["attempted"] == 6
    assert {"attempted", "projection_changing", "detected", "rate"} <= mutations.keys()
    assert mutations["undetected_projection_changing"] == []


# -- the demo world, end to end (needs its frozen manifests under manifests/pharmaco_demo/) -------


@pytest.mark.slow
def test_demo_world_verifies(capsys: pytest.CaptureFixture[str]) -> None:
    if not (REPO / "manifests" / "pharmaco_demo" / "revisions.json").is_file():
        pytest.skip("the demo world is not frozen (run `worldkit freeze --world pharmaco_demo`)")
    code = run(["verify", "--world", "pharmaco_demo", "--json"])
    body = json.loads(capsys.readouterr().out)
    assert code == 0, [c for c in body["checks"] if c["status"] != "pass"]
    assert {c["status"] for c in body["checks"]} <= {"pass", "skip"}
    assert [c["id"] for c in body["checks"] if c["status"] == "skip"] == ["event-logs"]
    record = body["validation"]
    assert record["world_rebuilds"]["identical"] == 3
    assert record["seat_materializations"]["attempted"] == record["seat_materializations"]["identical"] == 18
    assert record["access_audit"]["unauthorized_exposures"] == 0


@pytest.mark.slow
def test_demo_staged_workspace_edit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from worldkit.verify.tasks import overlay_files

    overlays = overlay_files(REPO / "overlays" / "pharmaco_demo")
    if not overlays:
        pytest.skip("the demo world has no overlays yet")
    out = tmp_path / "staged"
    assert run(["overlay", "apply", str(overlays[0]), "--out", str(out), "--json"]) == 0
    capsys.readouterr()
    assert run(["verify", "--workspace", str(out / "candidate")]) == 0
    capsys.readouterr()
    victim = sorted(p for p in (out / "candidate" / "projection" / "files").rglob("*") if p.is_file())[0]
    raw = bytearray(victim.read_bytes())
    raw[len(raw) // 2] ^= 0x04
    victim.write_bytes(bytes(raw))
    assert run(["verify", "--workspace", str(out / "candidate")]) == 1
    rel = victim.relative_to(out / "candidate").as_posix()
    assert f"- changed {rel} expected " in capsys.readouterr().out

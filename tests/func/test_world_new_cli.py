"""`worldkit world new`: the scaffold is written from scratch, freezes, verifies, and grades right."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from worldkit._cli.main import run


def _json(capsys: pytest.CaptureFixture[str], argv: list[str], code: int = 0) -> dict:
    assert run(argv) == code, capsys.readouterr()
    return json.loads(capsys.readouterr().out)


@pytest.fixture(scope="module")
def scaffold(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """`world new` into an empty folder, then freeze the world and the overlay in one step."""
    root = tmp_path_factory.mktemp("project")
    assert run(["world", "new", "starter", "--out", str(root)]) == 0
    world, overlays = root / "worlds" / "starter", root / "overlays" / "starter"
    overlay = overlays / "first-task.yaml"
    assert run(["freeze", "--world", str(world), "--overlays"]) == 0  # the world's default_date is the task date
    assert (root / "manifests" / "starter" / "revisions.json").is_file()
    assert (root / "manifests" / "starter" / "overlays" / "first-task.json").is_file()
    return {"root": root, "world": world, "overlays": overlays, "overlay": overlay}


def test_new_writes_the_world_and_its_overlay(scaffold: dict, capsys: pytest.CaptureFixture[str]) -> None:
    world, overlay = scaffold["world"], scaffold["overlay"]
    assert {p.relative_to(world).as_posix() for p in world.rglob("*") if p.is_file()} == {
        "world.yaml", "data/org.yaml", "data/content.yaml", "data/records.yaml", "data/messages.yaml",
        "templates/memo.md.j2",
    }  # fmt: skip
    text = overlay.read_text()
    assert "world: ../../worlds/starter\n" in text and "__" not in text
    assert run(["overlay", "check", str(overlay)]) == 0
    assert capsys.readouterr().out.endswith("first-task: ok (0 error(s), 0 warning(s))\n")
    stats = _json(capsys, ["world", "stats", str(world), "--json"])
    assert tuple(stats["files_per_seat"]) == ("S1",) and stats["messages"] == 2 and stats["records"] == 2  # REQ-3 comes later


def test_new_world_verifies_at_once_and_catches_every_seeded_fault(
    scaffold: dict, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["verify", "--world", str(scaffold["world"]), "--overlays", str(scaffold["overlays"]),
            "--manifests", str(scaffold["root"] / "manifests" / "starter"), "--seeded", "--json"]  # fmt: skip
    body = _json(capsys, argv)
    assert body["status"] == "pass"
    skipped = {c["id"]: c["reason"] for c in body["checks"] if c["status"] == "skip"}
    assert set(skipped) == {"task-pairs-identical", "event-logs"}  # one task; no store given
    assert {c["status"] for c in body["checks"]} == {"pass", "skip"}
    dates = next(c for c in body["checks"] if c["id"] == "date-conformance")
    # REQ-1 is the seat's first record: its records tools appear that day, and that is no leak
    assert dates["counts"]["record"] == "REQ-1" and dates["counts"]["effective"] == "2025-04-01"
    assert [p.split(" on ")[0] for p in dates["counts"]["probes"]] == ["record REQ-1", "document D-LATER", "mail message M1"]
    assert next(c for c in body["checks"] if c["id"] == "reference-access")["status"] == "pass"
    from worldkit.verify.seeded import CASES

    seeded = body["seeded"]
    assert (seeded["attempted"], seeded["detected"], seeded["not_applicable"]) == (len(CASES), len(CASES), 0)


@pytest.mark.parametrize(("agent", "passed"), [("oracle", 5), ("noop", None)])
def test_oracle_passes_and_noop_fails(
    scaffold: dict, tmp_path: Path, capsys: pytest.CaptureFixture[str], agent: str, passed: int | None
) -> None:
    summary = _json(capsys, ["run", "--overlay", str(scaffold["overlay"]), "--agent", agent,
                             "--out", str(tmp_path / "runs"), "--store", f"sqlite:///{tmp_path / 's.db'}", "--json"])  # fmt: skip
    assert summary["deterministic_total"] == 5
    if agent == "oracle":
        assert summary["deterministic_passed"] == passed
        assert set(summary["criteria"].values()) == {"pass"}
        assert set(summary["access"].values()) == {"accessed"}, summary["access"]
    else:  # doing nothing writes no answer: C1 and C2 fail
        assert summary["criteria"]["C1"] == summary["criteria"]["C2"] == "fail"
        assert summary["deterministic_passed"] < summary["deterministic_total"]


def test_new_refuses_an_existing_world_and_a_bad_name(scaffold: dict, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["world", "new", "starter", "--out", str(scaffold["root"])]) == 2
    assert "exists and is not empty; pass --force to replace it" in capsys.readouterr().err
    assert run(["world", "new", "Bad Name", "--out", str(scaffold["root"])]) == 2
    assert "world name 'Bad Name' is not usable" in capsys.readouterr().err


def test_new_json_lists_the_next_steps(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = _json(capsys, ["world", "new", "other", "--out", str(tmp_path), "--json"])
    assert body["next"][0] == f"worldkit freeze --world {tmp_path / 'worlds' / 'other'} --overlays"
    assert len(body["fingerprint"]) == 64 and body["overlay"].endswith("overlays/other/first-task.yaml")

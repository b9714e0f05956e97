"""`worldkit export harbor --packet`: an InfoOrgBench packet as a Harbor task — the organizer's five
tools as the MCP sidecar (`worldkit infoorg serve --candidate-only`), the Structure Score as the reward."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.fixtures.jira_export import write_jira_export
from tests.harbor_sidecar import free_port, solve_through_sidecar, subprocess_env
from worldkit._cli.main import run as cli
from worldkit.infoorg.packets import build_packets, write_packets
from worldkit.infoorg.reference import load_reference
from worldkit.overlay.checks import CHECKS

pytestmark = pytest.mark.usefixtures("restore_check_registry")  # loading a packet registers a check


@pytest.fixture(scope="module")
def packet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("infoorg")
    write_packets(build_packets("thread", write_jira_export(root / "export"), 1), root / "packets")
    [packet] = sorted((root / "packets").iterdir())
    return packet


@pytest.fixture(scope="module")
def exported(packet: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("harbor")
    saved = dict(CHECKS)
    try:
        assert cli(["export", "harbor", "--packet", str(packet), "--out", str(out)]) == 0
    finally:
        CHECKS.clear()
        CHECKS.update(saved)
    [task] = list(out.iterdir())
    return task


def test_the_packet_task_declares_the_organizer_and_keeps_the_reference_under_tests(exported: Path, packet: Path) -> None:
    config = tomllib.loads((exported / "task.toml").read_text())
    assert config["environment"]["mcp_servers"] == [
        {"name": "worldkit-organizer", "transport": "streamable-http", "url": "http://organizer:8000/mcp"}]
    info = json.loads((packet / "packet.json").read_text())
    assert config["metadata"]["candidate_digest"] == info["candidate_digest"]
    assert config["metadata"]["verifier_digest"] == info["verifier_digest"]
    assert config["metadata"]["benchmark"] == "InfoOrgBench"
    assert not (exported / "environment" / "organizer" / "packet" / "verifier").exists()
    assert (exported / "tests" / "packet" / "verifier" / "reference.json").is_file()
    # no reference folder path (the answer) on the agent side; the tests side has them
    folders = {"/".join(p) for p in load_reference(packet).paths().values() if len(p) > 1}
    assert folders
    for path in [exported / "instruction.md", exported / "task.toml", *(exported / "environment").rglob("*")]:
        if path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace")
            assert not [f for f in folders if f in text], path
    actions = json.loads((exported / "solution" / "actions.json").read_text())
    assert {"/".join(a["args"]["destination"]) for a in actions} >= folders


def test_the_oracle_through_the_organizer_sidecar_scores_one(exported: Path, packet: Path, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    served = tmp_path / "packet"  # what the organizer image holds: the candidate side only
    shutil.copytree(exported / "environment" / "organizer" / "packet", served)
    volume = tmp_path / "volume"
    volume.mkdir()
    port = free_port()
    solved = solve_through_sidecar(
        [sys.executable, "-m", "worldkit", "infoorg", "serve", "--packet", str(served), "--candidate-only",
         "--workspace", str(volume / "workspace"), "--store", f"sqlite:///{volume / 'store.db'}",
         "--transport", "http", "--host", "127.0.0.1", "--port", str(port)],
        port, exported / "solution" / "solve.sh", tries=300)  # fmt: skip
    assert solved.returncode == 0, solved.stderr
    env = {**subprocess_env(), "WORLDKIT_RUN": str(volume), "WORLDKIT_TESTS": str(exported / "tests"), "WORLDKIT_LOGS": str(tmp_path / "logs")}
    done = subprocess.run(["bash", str(exported / "tests" / "test.sh")], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    reward = json.loads((tmp_path / "logs" / "reward.json").read_text())
    assert reward["reward"] == 1.0 and reward["valid"] == 1.0 and reward["f1_bal"] == 1.0
    # the same as `worldkit infoorg score` on the same tree
    capsys.readouterr()
    assert cli(["infoorg", "score", "--packet", str(packet), "--workspace", str(volume / "workspace"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["S"] == reward["reward"]


def test_an_untouched_inbox_scores_as_the_structure_score_says(exported: Path, packet: Path, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    volume = tmp_path / "volume"
    shutil.copytree(packet / "candidate" / "inbox", volume / "workspace" / "inbox")
    env = {**subprocess_env(), "WORLDKIT_RUN": str(volume), "WORLDKIT_TESTS": str(exported / "tests"), "WORLDKIT_LOGS": str(tmp_path / "logs")}
    done = subprocess.run(["bash", str(exported / "tests" / "test.sh")], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    reward = json.loads((tmp_path / "logs" / "reward.json").read_text())
    code = cli(["infoorg", "score", "--packet", str(packet), "--workspace", str(volume / "workspace"), "--json"])
    direct = json.loads(capsys.readouterr().out)
    assert reward["reward"] == (direct["S"] if code == 0 else 0.0) < 1.0


def test_candidate_only_serving_refuses_an_altered_inbox(exported: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    served = Path(shutil.copytree(exported / "environment" / "organizer" / "packet", tmp_path / "packet"))
    first = sorted((served / "candidate" / "inbox").iterdir())[0]
    first.write_text(first.read_text() + " (edited)")
    code = cli(["infoorg", "serve", "--packet", str(served), "--candidate-only", "--workspace", str(tmp_path / "ws"),
                "--store", f"sqlite:///{tmp_path / 's.db'}"])  # fmt: skip
    assert code == 1 and "differs from packet.json" in capsys.readouterr().err


def test_the_packet_task_validates_against_harbors_task_model_and_loader(exported: Path) -> None:
    from tests.harbor_env import validate_tasks

    [found] = validate_tasks([exported])
    assert found["ok"], found
    assert found["name"].startswith("worldkit/infoorg-") and found["mcp_servers"] == ["worldkit-organizer"]
    assert found["metadata"]["benchmark"] == "InfoOrgBench" and found["instruction"].strip()

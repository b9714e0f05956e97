"""`worldkit export harbor`: Harbor task directories whose seat sidecar, verifier step and oracle run
here without Docker — the sidecar's command over stdio or HTTP on the exported run folder, test.sh
and solve.sh as bash scripts with the container paths pointed at temporary folders."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import anyio
import pytest
import yaml
from mcp import Client, StdioServerParameters

from tests.fixtures.overlays.paths import TRIAGE
from tests.harbor_sidecar import free_port, solve_through_sidecar, subprocess_env
from worldkit._cli.main import run as cli
from worldkit.errors import CheckFailed, ExitCode
from worldkit.overlay import load_overlay

pytestmark = pytest.mark.usefixtures("fixture_overlays_on_path")

RIGHT = "# Triage\n\nSOP checked: SOP-001\nNeeds revision (yes/no): yes\n"
WRONG = "# Triage\n\nSOP checked: SOP-002\nNeeds revision (yes/no): no\n"


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("harbor")
    assert cli(["export", "harbor", "--overlay", str(TRIAGE), "--condition", "full", "--condition", "curated:minimal",
                "--out", str(out)]) == 0  # fmt: skip
    return out


def _volume(task: Path, into: Path) -> Path:
    """What Docker puts in the fresh named volume: the seat image's copy of environment/seat/run."""
    shutil.copytree(task / "environment" / "seat" / "run", into)
    return into


def _verify(task: Path, volume: Path, logs: Path) -> subprocess.CompletedProcess[str]:
    env = {**subprocess_env(), "WORLDKIT_RUN": str(volume), "WORLDKIT_TESTS": str(task / "tests"), "WORLDKIT_LOGS": str(logs)}
    return subprocess.run(["bash", str(task / "tests" / "test.sh")], env=env, capture_output=True, text=True, timeout=120)


def _agent(volume: Path, note: str, *, read_sop: bool) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "worldkit", "serve", "--run-folder", str(volume), "--trust-staged", "--store", f"sqlite:///{volume / 'store.db'}"],
        env={"PYTHONPATH": os.pathsep.join(sys.path)}, cwd=str(volume.parent),
    )  # fmt: skip

    async def act() -> None:
        async with Client(params) as client:
            if read_sop:
                assert not (await client.call_tool("read_file", {"path": "Shared/SOPs/SOP-001.md"})).is_error
            assert not (await client.call_tool("write_file", {"path": "triage.md", "content": note})).is_error

    anyio.run(act)


def test_one_task_directory_per_condition_with_harbors_layout(exported: Path) -> None:
    tasks = sorted(p.name for p in exported.iterdir())
    assert tasks == ["cc1-triage__curated-minimal", "cc1-triage__full"]
    for name in tasks:
        task = exported / name
        for rel in ("instruction.md", "task.toml", "environment/Dockerfile", "environment/docker-compose.yaml",
                    "environment/seat/Dockerfile", "environment/seat/run/run.json", "tests/test.sh",
                    "solution/solve.sh", "solution/actions.json"):  # fmt: skip
            assert (task / rel).is_file(), rel
        assert os.access(task / "tests" / "test.sh", os.X_OK) and os.access(task / "solution" / "solve.sh", os.X_OK)
        config = tomllib.loads((task / "task.toml").read_text())
        package = json.loads((task / "environment/seat/run/package/package.json").read_text())
        meta = config["metadata"]
        assert (meta["world"], meta["rev"], meta["date"], meta["seat"]) == ("mini", "r2", "2025-07-01", "S1")
        for key in ("fingerprint", "candidate_sha256", "verifier_sha256", "overlay_sha256", "condition"):
            assert meta[key] == package[key]
        assert config["task"]["name"] == f"worldkit/{name}"
        assert config["environment"]["mcp_servers"] == [
            {"name": "worldkit-seat", "transport": "streamable-http", "url": "http://seat:8000/mcp"}]
        compose = yaml.safe_load((task / "environment/docker-compose.yaml").read_text())
        assert compose["services"]["main"]["volumes"] == ["worldkit-run:/worldkit/run:ro"]
        assert "--run-folder" in (task / "environment/seat/Dockerfile").read_text()
        assert "--trust-staged" in (task / "environment/seat/Dockerfile").read_text()  # no frozen world in the sidecar
        # the verifier package and the overlay exist only under tests/
        assert not (task / "environment/seat/run/package/verifier").exists()
        assert (task / "tests/verifier/rubric.json").is_file()
        assert (task / "tests/overlay/mini/cc1-triage/overlay.yaml").is_file()
        assert (task / "tests/overlay/world/world.yaml").is_file()  # the world it names by path travels with it
        run = json.loads((task / "environment/seat/run/run.json").read_text())
        assert run["overlay_path"] == "" and run["store"] == "sqlite:////worldkit/run/store.db"


def test_the_images_install_worldkit_s_own_distribution_pinned(exported: Path) -> None:
    from worldkit import DISTRIBUTION, __version__

    for task in exported.iterdir():
        for dockerfile in (task / "environment/Dockerfile", task / "environment/seat/Dockerfile"):
            text = dockerfile.read_text()
            assert f'ARG WORLDKIT_REQUIREMENT="{DISTRIBUTION}=={__version__}"' in text
            assert '"worldkit==' not in text  # the PyPI project `worldkit` is another one
        config = tomllib.loads((task / "task.toml").read_text())
        assert config["verifier"]["env"] == {"WORLDKIT_JUDGE": "${WORLDKIT_JUDGE:-none}"}
        assert config["environment"]["healthcheck"]["retries"] == 30 and config["schema_version"] == "1.1"
        compose = yaml.safe_load((task / "environment/docker-compose.yaml").read_text())
        assert compose["services"]["main"]["depends_on"] == {
            "seat": {"condition": "service_healthy"}}
        assert compose["services"]["seat"]["healthcheck"]["test"][:2] == ["CMD", "python3"] and compose["volumes"] == {
            "worldkit-run": {}}


def test_no_rubric_reference_or_truth_text_on_the_agent_side(exported: Path) -> None:
    overlay = load_overlay(TRIAGE)
    secrets = [c.text for c in overlay.rubric] + [c.guidance for c in overlay.rubric if c.guidance]
    secrets += [json.dumps(c.check.model_dump(mode="json")) for c in overlay.rubric if c.check is not None]
    secrets += [a.args["content"] for a in overlay.reference.actions if "content" in a.args]
    secrets += [(TRIAGE.parent / "reference" / "expected.md").read_text().strip()]
    secrets += overlay.truth.facts + overlay.truth.unsafe_claims
    secrets = [s for s in secrets if s]
    assert len(secrets) >= 5
    for task in exported.iterdir():
        agent_side = [task / "instruction.md", task / "task.toml",
                      *(p for p in (task / "environment").rglob("*") if p.is_file())]  # fmt: skip
        for path in agent_side:
            text = path.read_text(encoding="utf-8", errors="replace")
            for secret in secrets:
                assert secret not in text, f"{secret[:40]!r} in {path}"
        # ...while the verifier side carries them (the grep can fail)
        rubric = (task / "tests/verifier/rubric.json").read_text()
        assert all(c.text in rubric for c in overlay.rubric)
        assert "SOP checked: SOP-001 (Shared/SOPs)" in (task / "solution/actions.json").read_text()


@pytest.mark.parametrize("where", ["instruction", "environment"])
def test_an_export_that_would_leak_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    from worldkit.interop import harbor

    overlay = load_overlay(TRIAGE)
    if where == "instruction":  # a criterion's text slipped into the instruction
        monkeypatch.setattr(harbor, "_instruction", lambda request, config: request + "\nHint: " + overlay.rubric[2].text + "\n")
    else:  # the reference deliverable baked into the agent's image
        content = next(a.args["content"] for a in overlay.reference.actions if a.tool == "write_file")
        monkeypatch.setattr(harbor, "_dockerfile", lambda: "FROM python:3.11-slim\n" + content)
    with pytest.raises(CheckFailed, match="verifier material on the agent side"):
        harbor.export_harbor_task(TRIAGE, tmp_path / "out")
    assert not (tmp_path / "out" / "cc1-triage__full").exists()


@pytest.mark.parametrize(("note", "read_sop", "expected"), [
    (RIGHT, True, {"reward": 1.0, "T1": 1.0, "T2": 1.0}),
    (WRONG, False, {"reward": 0.0, "T1": 0.0, "T2": 0.0}),
])
def test_the_verifier_step_writes_worldkit_grade_as_the_reward(
    exported: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], note: str, read_sop: bool, expected: dict
) -> None:
    task = exported / "cc1-triage__full"
    volume = _volume(task, tmp_path / "volume")
    _agent(volume, note, read_sop=read_sop)
    done = _verify(task, volume, tmp_path / "logs")
    assert done.returncode == 0, done.stderr
    reward = json.loads((tmp_path / "logs" / "reward.json").read_text())
    assert reward == expected  # T3 is semantic: ungraded without a judge, left out
    # the same as `worldkit grade` on the same workspace and log, run here directly
    capsys.readouterr()
    assert cli(["grade", "--overlay", str(TRIAGE), "--workspace", str(volume / "workspace"),
                "--log", "harbor.cc1-triage.full", "--store", f"sqlite:///{volume / 'store.db'}", "--json"]) == 0
    direct = json.loads(capsys.readouterr().out)
    graded = json.loads((tmp_path / "logs" / "grade.json").read_text())
    assert graded["criteria"] == direct["criteria"] and graded["access"] == direct["access"]
    assert {k: v for k, v in reward.items() if k != "reward"} == {
        c: float(v == "pass") for c, v in direct["criteria"].items() if v != "ungraded"}
    record = json.loads((tmp_path / "logs" / "execution-record.json").read_text())
    assert record["run_id"] == "harbor.cc1-triage.full"
    assert [e["tool"] for e in record["trajectory"]] == (["read_file"] if read_sop else []) + ["write_file"]


def test_a_workspace_changed_outside_the_tools_is_refused_without_a_reward(exported: Path, tmp_path: Path) -> None:
    task = exported / "cc1-triage__full"
    volume = _volume(task, tmp_path / "volume")
    _agent(volume, WRONG, read_sop=False)
    (volume / "workspace" / "triage.md").write_text(RIGHT)  # written behind the seat's back
    done = _verify(task, volume, tmp_path / "logs")
    assert done.returncode == int(ExitCode.CHECK_FAILED) and "is not what the run's logged writes produce" in done.stderr
    assert not (tmp_path / "logs" / "reward.json").exists()


def test_the_oracle_solution_through_the_http_sidecar_earns_full_reward(exported: Path, tmp_path: Path) -> None:
    task = exported / "cc1-triage__curated-minimal"
    volume = _volume(task, tmp_path / "volume")
    port = free_port()
    solved = solve_through_sidecar(  # the sidecar's own command (seat/Dockerfile CMD), on a local port
        [sys.executable, "-m", "worldkit", "serve", "--run-folder", str(volume), "--trust-staged", "--store", f"sqlite:///{volume / 'store.db'}",
         "--transport", "http", "--host", "127.0.0.1", "--port", str(port)],
        port, task / "solution" / "solve.sh", tries=200)  # fmt: skip
    assert solved.returncode == 0, solved.stderr
    assert "performed 3 reference actions: read_file, read_file, write_file" in solved.stderr
    done = _verify(task, volume, tmp_path / "logs")
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "logs" / "reward.json").read_text()) == {"reward": 1.0, "T1": 1.0, "T2": 1.0}
    assert json.loads((tmp_path / "logs" / "grade.json").read_text())["condition"] == "curated:minimal"


def test_every_exported_task_toml_validates_against_harbors_task_model(exported: Path, tmp_path: Path) -> None:
    from tests.harbor_env import validate_tasks

    tasks = sorted(exported.iterdir())
    assert [t.name for t in tasks] == ["cc1-triage__curated-minimal", "cc1-triage__full"]
    broken = tmp_path / "broken"  # the same task with a timeout harbor cannot read: harbor must refuse it
    shutil.copytree(tasks[0], broken)
    toml = (broken / "task.toml").read_text()
    assert "timeout_sec = " in toml
    (broken / "task.toml").write_text(re.sub(r"timeout_sec = [0-9.]+", 'timeout_sec = "soon"', toml, count=1))
    *results, refused = validate_tasks([*tasks, broken])
    for task, found in zip(tasks, results, strict=True):
        assert found["ok"], found
        assert found["name"] == f"worldkit/{task.name}"
        assert found["mcp_servers"] == ["worldkit-seat"]
        assert found["metadata"]["seat"] == "S1"
        assert "triage.md" in found["instruction"]  # harbor's own loader read the layout and the instruction
    assert not refused["ok"] and "timeout_sec" in refused["error"], refused


def test_export_refuses_an_existing_task_directory_and_bad_options(exported: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["export", "harbor", "--overlay", str(TRIAGE), "--out", str(exported)]) == 2
    assert "exists; export into a new folder" in capsys.readouterr().err
    assert cli(["export", "harbor", "--all", "--out", str(exported)]) == 2
    assert "--all needs --world W" in capsys.readouterr().err
    assert cli(["export", "harbor", "--overlay", str(TRIAGE), "--condition", "curated:nope", "--out", str(exported / "x")]) != 0


def test_export_all_writes_every_overlay_of_a_world_under_every_condition(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.fixtures.overlays.paths import FIXTURES
    from worldkit.overlay import find_overlays

    monkeypatch.setenv("WORLDKIT_OVERLAYS", str(FIXTURES))
    models = [load_overlay(p) for p in find_overlays("good")]
    expected = sorted(f"{m.id}__{c.replace(':', '-')}" for m in models for c in ["full", *(f"curated:{n}" for n in m.curated)])
    assert len(models) >= 2 and len(expected) > len(models)
    assert cli(["export", "harbor", "--all", "--world", "good", "--out", str(tmp_path / "all"), "--json"]) == 0
    tasks = json.loads(capsys.readouterr().out)["tasks"]
    assert sorted(Path(t["path"]).name for t in tasks) == expected == sorted(p.name for p in (tmp_path / "all").iterdir())


def test_an_export_depends_only_on_its_inputs(exported: Path, tmp_path: Path) -> None:
    assert cli(["export", "harbor", "--overlay", str(TRIAGE), "--out", str(tmp_path / "again")]) == 0

    def tree(root: Path) -> dict[str, bytes]:
        return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}

    first, second = tree(exported / "cc1-triage__full"), tree(tmp_path / "again" / "cc1-triage__full")
    assert first.keys() == second.keys() and [k for k in first if first[k] != second[k]] == []

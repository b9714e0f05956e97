"""worldkit tasks in inspect_ai: found through the `inspect_ai` entry point, the seat's tools reached
over MCP (`mcp_server_stdio` → `worldkit serve --run-folder`), scored by worldkit's grading. Offline:
inspect's mock model is scripted to call the tools and write the deliverable."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from tests.fixtures.overlays.paths import TRIAGE
from worldkit._cli.main import run as cli

inspect_ai = pytest.importorskip("inspect_ai", reason="inspect_ai is not installed (pip install worldkit-bench[inspect])")
from inspect_ai.model import ModelOutput, ModelUsage, get_model  # noqa: E402

pytestmark = pytest.mark.usefixtures("fixture_overlays_on_path")

REPO = Path(__file__).resolve().parents[2]
RIGHT = "# Triage\n\nSOP checked: SOP-001\nNeeds revision (yes/no): yes\n"
WRONG = "# Triage\n\nSOP checked: SOP-002\nNeeds revision (yes/no): no\n"


def declared_entry_point() -> str:
    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["entry-points"]["inspect_ai"]["worldkit"]


@pytest.fixture(scope="module")
def entry_point_path(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """sys.path entries under which the `inspect_ai` entry point pyproject.toml declares is installed:
    none when worldkit's installed metadata has it, else a folder holding that declaration (an older
    editable install predates it)."""
    if any(ep.name == "worldkit" and ep.value == declared_entry_point() for ep in entry_points(group="inspect_ai")):
        return []
    site = tmp_path_factory.mktemp("site")
    info = site / "worldkit_inspect_entry-0.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: worldkit-inspect-entry\nVersion: 0.0\n")
    (info / "entry_points.txt").write_text(f"[inspect_ai]\nworldkit = {declared_entry_point()}\n")
    return [str(site)]


def test_the_entry_point_names_the_module_that_registers_the_tasks() -> None:
    import importlib

    from inspect_ai._util.registry import registry_lookup

    module = importlib.import_module(declared_entry_point())
    for name in ("qualification_sweep", "ild_warning", "task", "infoorg", *(t.replace("-", "_") for t in module.SHIPPED)):
        assert registry_lookup("task", f"worldkit/{name}") is not None, name
    # every overlay of every shipped world is a task, once, under its own world, and nothing else
    on_disk = [(p.name, p.parent.name) for p in (REPO / "overlays").glob("*/*") if p.is_dir() or p.suffix == ".yaml"]
    assert sorted(module.SHIPPED.items()) == sorted(on_disk) and len(module.SHIPPED) == len(on_disk) >= 18


def test_the_shipped_tasks_module_is_current() -> None:
    from worldkit.interop.inspect_tasks import shipped_module_source

    import worldkit.interop

    path = Path(worldkit.interop.__file__).parent / "inspect_shipped.py"  # the checkout's, or an installed wheel's
    assert path.read_text(encoding="utf-8") == shipped_module_source(), (
        "worldkit/interop/inspect_shipped.py is stale: python -m worldkit.interop.inspect_tasks --write")


def test_inspect_list_tasks_shows_every_shipped_task() -> None:
    from inspect_ai._eval.list import list_tasks

    from worldkit.overlay.catalog import list_tasks as worldkit_tasks

    import worldkit

    listed = {t.name for t in list_tasks(["interop"], root_dir=Path(worldkit.__file__).parent)}
    shown = {t.inspect.split("/", 1)[1] for t in worldkit_tasks() if t.origin == "shipped"}
    assert len(shown) >= 18 and listed == shown | {"task", "infoorg"}  # never a Python function's name


def test_every_name_inspect_list_tasks_prints_is_a_task_inspect_finds() -> None:
    """`inspect list tasks` reads names from the source and prints `FILE.py@NAME`; `inspect eval` of that
    looks NAME up in the registry, as does `inspect eval worldkit/NAME` (in a checkout, an editable
    install of `worldkit-bench`, inspect adds no package prefix: both must still be found)."""
    from inspect_ai._eval.list import list_tasks
    from inspect_ai._util.registry import registry_info, registry_lookup

    import worldkit
    import worldkit.interop.inspect_shipped  # noqa: F401 - registers the tasks, as inspect's entry point does

    listed = list_tasks(["interop"], root_dir=Path(worldkit.__file__).parent)
    assert len(listed) >= 20
    for info in listed:
        for name in (info.name, f"worldkit/{info.name}"):
            found = registry_lookup("task", name)
            assert found is not None, f"{info.file}@{name}"
            assert registry_info(found).name in (info.name, f"worldkit/{info.name}")


def test_a_generic_task_is_shown_as_the_task_it_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`inspect eval FILE.py@task -T overlay=…` (the name `inspect list tasks` prints) runs, and the eval
    is shown under the overlay's id with its title, not as `task` or a Python function's name."""
    from worldkit.overlay import load_overlay

    import worldkit

    monkeypatch.chdir(tmp_path)
    spec = f"{Path(worldkit.__file__).parent / 'interop' / 'inspect_tasks.py'}@task"
    model = get_model("mockllm/model", custom_outputs=_scripted(RIGHT, True))
    [log] = inspect_ai.eval(spec, model=model, task_args={"overlay": str(TRIAGE), "runs": str(tmp_path / "runs")},
                            log_dir=str(tmp_path / "logs"), display="none")  # fmt: skip
    assert log.status == "success", log.error
    overlay = load_overlay(TRIAGE)
    assert (log.eval.task_display_name, log.eval.task_description) == ("cc1-triage", overlay.title)
    assert log.eval.metadata["title"] == overlay.title
    assert log.samples[0].scores["worldkit_scorer"].value["pass_fraction"] == 1.0


def test_a_task_of_another_world_runs_offline_from_the_inspect_command(tmp_path: Path, entry_point_path: list[str]) -> None:
    """`inspect eval worldkit/ild_warning --model mockllm/model` as a user types it: no token-count download
    (mockllm's outputs carry no usage here), the score in the log; a task that cannot be built exits 1."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*entry_point_path, *sys.path]),
           "TIKTOKEN_CACHE_DIR": str(tmp_path / "no-tiktoken-cache"), "HTTPS_PROXY": "http://127.0.0.1:9"}
    inspect = [sys.executable, "-c", "import sys; from inspect_ai._cli.main import main; sys.argv[0] = 'inspect'; main()"]
    done = subprocess.run([*inspect, "eval", "worldkit/ild_warning", "--model", "mockllm/model", "-T", f"runs={tmp_path / 'runs'}",
                           "--log-dir", str(tmp_path / "logs"), "--log-format", "json", "--display", "none"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    [log_file] = (tmp_path / "logs").glob("*.json")
    log = json.loads(log_file.read_text())
    assert log["status"] == "success", log.get("error")
    assert log["eval"]["task"] == "worldkit/ild_warning" and log["eval"]["task_display_name"] == "ild-warning"
    score = log["samples"][0]["scores"]["worldkit_scorer"]
    assert score["value"]["pass_fraction"] == 0.0 and score["metadata"]["execution_record"]["task"] == "ild-warning"
    refused = subprocess.run([*inspect, "eval", "worldkit/ild_warning", "--model", "mockllm/model", "-T", "condition=curated:nope",
                              "--log-dir", str(tmp_path / "logs2"), "--display", "none"],
                             cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert refused.returncode != 0 and "curated:nope" in refused.stderr


# inspect's mock provider counts tokens with tiktoken unless an output carries its usage, and tiktoken
# downloads its encoding on first use; offline, scripted outputs carry usage and the command-line run
# below swaps the counter for a length estimate.
USAGE = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
LAUNCH_OFFLINE = (
    "import sys, inspect_ai.model._model as m; m.count_text_tokens = lambda text: max(1, len(text) // 4); "
    "from inspect_ai._cli.main import main; sys.argv[0] = 'inspect'; main()"
)


def _scripted(note: str, read_sop: bool) -> list[ModelOutput]:
    calls = [ModelOutput.for_tool_call("mockllm/model", "read_file", {"path": "Shared/SOPs/SOP-001.md"})] if read_sop else []
    calls.append(ModelOutput.for_tool_call("mockllm/model", "write_file", {"path": "triage.md", "content": note}))
    outputs = [*calls, ModelOutput.from_content("mockllm/model", "Done: triage.md is filled in.")]
    for output in outputs:
        output.usage = USAGE
    return outputs


def _grade_directly(run_dir: Path) -> dict:
    """`worldkit grade` on the same workspace and log, with the overlay from its own file."""
    run = json.loads((run_dir / "run.json").read_text())
    code = cli(["grade", "--overlay", str(TRIAGE), "--workspace", str(run_dir / "workspace"), "--condition", run["condition"],
                "--log", run["run_id"], "--store", f"sqlite:///{run_dir / 'store.db'}", "--json"])  # fmt: skip
    assert code == 0
    return code


@pytest.mark.parametrize(("note", "read_sop", "value"), [
    (RIGHT, True, {"pass_fraction": 1.0, "T1": 1.0, "T2": 1.0}),
    (WRONG, False, {"pass_fraction": 0.0, "T1": 0.0, "T2": 0.0}),
])
def test_a_scripted_mock_model_is_scored_as_worldkit_grade_scores_the_workspace(
    tmp_path: Path, entry_point_path: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    note: str, read_sop: bool, value: dict,
) -> None:  # fmt: skip
    for entry in entry_point_path:
        monkeypatch.syspath_prepend(entry)
    model = get_model("mockllm/model", custom_outputs=_scripted(note, read_sop))
    [log] = inspect_ai.eval(
        "worldkit/task", model=model, task_args={"overlay": str(TRIAGE), "runs": str(tmp_path / "runs")},
        log_dir=str(tmp_path / "logs"), display="none",
    )  # fmt: skip
    assert log.status == "success", log.error
    [sample] = log.samples
    score = sample.scores["worldkit_scorer"]
    assert score.value == value
    run_dir = Path(score.metadata["run_dir"])
    calls = [m.tool_calls[0].function for m in sample.messages if getattr(m, "tool_calls", None)]
    assert calls == (["read_file"] if read_sop else []) + ["write_file"]
    assert (run_dir / "workspace" / "triage.md").read_text() == note
    capsys.readouterr()
    _grade_directly(run_dir)
    direct = json.loads(capsys.readouterr().out)
    assert score.metadata["criteria"] == direct["criteria"]  # T3 (semantic) ungraded in both
    assert score.metadata["access"] == direct["access"]
    assert score.metadata["access"]["T1"] == ("accessed" if read_sop else "not_accessed")
    record = score.metadata["execution_record"]
    assert record["task"] == "cc1-triage" and record["agent"] == "inspect:mockllm/model"
    assert [e["tool"] for e in record["trajectory"]] == calls
    assert (run_dir / "execution-record.json").is_file()


def test_inspect_eval_from_the_command_line_in_any_directory(tmp_path: Path, entry_point_path: list[str]) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*entry_point_path, *sys.path])}
    done = subprocess.run(
        [sys.executable, "-c", LAUNCH_OFFLINE, "eval", "worldkit/task", "--model", "mockllm/model", "-T", f"overlay={TRIAGE}",
         "-T", "condition=curated:minimal", "-T", f"runs={tmp_path / 'runs'}", "--log-dir", str(tmp_path / "logs"),
         "--log-format", "json", "--display", "none"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    [log_file] = (tmp_path / "logs").glob("*.json")
    log = json.loads(log_file.read_text())
    assert log["eval"]["task"] == "worldkit/task" and log["eval"]["task_args"]["condition"] == "curated:minimal"
    assert log["eval"]["task_display_name"] == "cc1-triage"
    score = log["samples"][0]["scores"]["worldkit_scorer"]
    # the unscripted mock model only answers in text: nothing written, every graded criterion fails
    assert score["value"] == {"pass_fraction": 0.0, "T1": 0.0, "T2": 0.0}
    assert score["metadata"]["execution_record"]["condition"] == "curated:minimal"


def test_an_unknown_condition_is_refused_before_anything_runs(tmp_path: Path, entry_point_path: list[str],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from worldkit.errors import UsageError

    for entry in entry_point_path:
        monkeypatch.syspath_prepend(entry)
    with pytest.raises(UsageError, match="curated:nope"):
        inspect_ai.eval("worldkit/task", model="mockllm/model", task_args={"overlay": str(TRIAGE), "condition": "curated:nope"},
                        log_dir=str(tmp_path / "logs"), display="none")  # fmt: skip


@pytest.fixture(scope="module")
def thread_packet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.fixtures.jira_export import write_jira_export
    from worldkit.infoorg.packets import build_packets, write_packets
    from worldkit.overlay.checks import CHECKS

    saved = dict(CHECKS)
    root = tmp_path_factory.mktemp("infoorg")
    write_packets(build_packets("thread", write_jira_export(root / "export"), 1), root / "packets")
    CHECKS.clear()
    CHECKS.update(saved)
    [packet] = sorted((root / "packets").iterdir())
    return packet


@pytest.mark.parametrize("filing", ["reference", "one-folder"])
def test_an_infoorg_packet_is_scored_with_the_structure_score(
    tmp_path: Path, thread_packet: Path, entry_point_path: list[str], capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch, filing: str,
) -> None:  # fmt: skip
    from worldkit.infoorg.reference import load_reference
    from worldkit.overlay.checks import CHECKS

    saved = dict(CHECKS)  # restored below: loading a packet registers a check
    for entry in entry_point_path:
        monkeypatch.syspath_prepend(entry)
    paths = load_reference(thread_packet).paths()
    if filing == "reference":
        folders: dict[tuple[str, ...], list[str]] = {}
        for record, path in paths.items():
            folders.setdefault(tuple(path), []).append(record)
    else:
        folders = {("everything",): sorted(paths)}
    outputs = [ModelOutput.for_tool_call("mockllm/model", "move_files", {"ids": ids, "destination": list(folder)})
               for folder, ids in sorted(folders.items())]  # fmt: skip
    outputs.append(ModelOutput.from_content("mockllm/model", '{"done": true}'))
    for output in outputs:
        output.usage = USAGE
    try:
        [log] = inspect_ai.eval(
            "worldkit/infoorg", model=get_model("mockllm/model", custom_outputs=outputs),
            task_args={"packet": str(thread_packet), "runs": str(tmp_path / "runs")}, log_dir=str(tmp_path / "logs"),
            display="none",
        )  # fmt: skip
        assert log.status == "success", log.error
        score = log.samples[0].scores["structure_scorer"]
        capsys.readouterr()
        workspace = Path(score.metadata["run_dir"]) / "workspace"
        code = cli(["infoorg", "score", "--packet", str(thread_packet), "--workspace", str(workspace), "--json"])
        direct = json.loads(capsys.readouterr().out)
    finally:
        CHECKS.clear()
        CHECKS.update(saved)
    assert code == 0 and direct["valid"] and score.value["valid"] == 1.0
    # the CLI's JSON carries its output envelope's schema_version; the score is the same result
    assert direct.pop("schema_version") == 1
    assert score.value["S"] == direct["S"] and score.metadata["structure_score"] == direct
    assert (score.value["S"] == 1.0) == (filing == "reference")

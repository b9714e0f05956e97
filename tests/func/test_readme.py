"""The README's quick start is true: two commands, and the demo output it shows is what runs print."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from worldkit._cli.main import run

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")


def test_quick_start_shows_exactly_two_commands() -> None:
    block = README.split("## Quick start", 1)[1].split("```console", 1)[1].split("```", 1)[0]
    commands = [line.split("#")[0].strip() for line in block.splitlines() if line.startswith("$ ")]
    assert commands == ["$ make demo", "$ make test"]


def test_demo_materialize_output_in_readme_is_current(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["materialize", "--world", "pharmaco_demo", "--rev", "r2", "--date", "2026-03-02",
            "--seat", "EMP-QC-001", "--out", str(tmp_path / "p")]
    assert run(argv) == 0
    printed = capsys.readouterr().out.splitlines()[1:]
    for line in printed:
        assert line in README, f"README's demo output is stale; expected the line {line!r}"


def test_demo_task_digests_in_readme_are_current(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    task = re.search(r"DEMO_TASK := (\S+)", (Path(__file__).resolve().parents[2] / "Makefile").read_text()).group(1)
    here = Path(__file__).resolve().parents[2]  # the Makefile's path is the checkout's
    assert run(["overlay", "apply", str(here / task), "--out", str(tmp_path / "t")]) == 0
    for line in capsys.readouterr().out.splitlines()[1:]:
        assert line in README, f"README's demo output is stale; expected the line {line!r}"


# --- every command and snippet the README shows ---------------------------------------------------

REPO = Path(__file__).resolve().parents[2]


def _blocks(kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", README, re.S)


def _worldkit_lines() -> list[str]:
    lines = [line for block in _blocks("console") for line in block.splitlines()]
    return [re.sub(r"\s+#.*$", "", line.split("$ ", 1)[1]).strip() for line in lines
            if re.match(r"^(\S+)?\$ worldkit ", line)]  # fmt: skip


def test_every_readme_command_and_option_exists() -> None:
    import typer

    from worldkit._cli.main import app

    root = typer.main.get_command(app)
    lines = _worldkit_lines()
    assert len(lines) >= 40
    for line in lines:
        words = line.split()[1:]
        commands = [root]
        for word in words:
            names = word.split("|")
            if not all(hasattr(c, "commands") and all(n in c.commands for n in names) for c in commands):
                break
            commands = [c.commands[n] for c in commands for n in names]
        assert all(c is not root and not hasattr(c, "commands") for c in commands), f"README names no command: {line}"
        options = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", line))
        for command in commands:
            known = {o for p in command.params for o in (*p.opts, *p.secondary_opts)}
            assert options <= known | {"--worlds", "--debug"}, f"{line}: {sorted(options - known)} unknown to {command.name}"


def test_the_readme_commands_without_placeholders_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    design = tmp_path / "design.yaml"
    design.write_text(_blocks("yaml")[0], encoding="utf-8")
    runnable = [
        "worldkit world show pharmaco_demo",
        "worldkit world stats pharmaco_demo --date 2026-03-02",
        "worldkit materialize --world pharmaco_demo --rev r2 --date 2026-03-02 --seat EMP-QC-001 --out out/qc",
        "worldkit schema --out schemas",
        "worldkit tasks list",
        "worldkit campaign plan design.yaml",
    ]
    lines = _worldkit_lines()
    for command in runnable:
        assert any(line.startswith(command) for line in lines), f"no longer in the README: {command}"
        assert run(command.split()[1:]) == 0, (command, capsys.readouterr().err[-800:])
    capsys.readouterr()


def test_the_readme_design_is_valid_for_its_schema_and_its_loader(tmp_path: Path) -> None:
    import json

    import jsonschema
    import yaml

    from worldkit.campaign.design import load_design

    [design] = _blocks("yaml")
    schema = json.loads((REPO / "schemas" / "campaign.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(yaml.safe_load(design), schema)
    (tmp_path / "design.yaml").write_text(design, encoding="utf-8")
    assert [a.agent for a in load_design(tmp_path / "design.yaml").agents] == ["oracle", "noop", "openai:gpt-x"]


def test_the_readme_toml_snippet_parses_and_names_an_entry_point_group_worldkit_reads() -> None:
    import tomllib

    for block in _blocks("toml"):
        parsed = tomllib.loads(block)
        assert set(parsed["project"]["entry-points"]) <= {"worldkit.agents", "worldkit.judges"}


def test_pip_and_inspect_lines_name_this_distribution_and_registered_tasks() -> None:
    import tomllib

    name = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["name"]
    lines = [line.split("$ ", 1)[1] for block in _blocks("console") for line in block.splitlines() if "$ " in line]
    pips = [line for line in lines if line.startswith("pip install")]
    assert pips and all(name in line.replace("_", "-") for line in pips)
    from worldkit.overlay.catalog import list_tasks

    names = {t.inspect for t in list_tasks()} | {"worldkit/task", "worldkit/infoorg"}
    for line in lines:
        if line.startswith("inspect eval "):
            assert line.split()[2] in names, line

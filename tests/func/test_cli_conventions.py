"""One CLI convention: readable help, global options anywhere, JSON errors, the README's exit codes."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path

import click
import pytest
import typer

from worldkit._cli.helpfmt import readable
from worldkit._cli.main import app, run

RAW_METAVAR = re.compile(r"<(str|bool|path|int|float|list\[\w+\])[^>]*>")
READABLE = re.compile(r"^([A-Z][A-Z0-9_.]*(\.\.\.)?|\[[A-Za-z0-9:|_.…-]+\])$")


def _commands(command: click.Command, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], click.Command]]:
    found = [(path, command)]
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        found += _commands(sub, (*path, name))
    return found


TREE = readable(typer.main.get_command(app))
COMMANDS = _commands(TREE)


def test_the_walk_reaches_every_command() -> None:
    names = {" ".join(path) for path, _ in COMMANDS}
    assert {"run", "serve", "verify", "log show", "infoorg build", "campaign status", "overlay check"} <= names


@pytest.mark.parametrize("path", [p for p, _ in COMMANDS], ids=lambda p: " ".join(p) or "worldkit")
def test_every_option_shows_its_type_or_choices(path: tuple[str, ...], capsys) -> None:
    assert run([*path, "--help"]) == 0
    shown = capsys.readouterr().out
    assert not RAW_METAVAR.search(shown), f"raw typer metavar in `worldkit {' '.join(path)} --help`"
    command = dict(COMMANDS)[path]
    ctx = click.Context(command)
    for param in command.params:
        if param.param_type_name != "option" or getattr(param, "is_flag", False) or not param.expose_value:
            continue
        metavar = param.display_type_rich(ctx)
        assert metavar and READABLE.match(metavar), f"{' '.join(path)} {param.opts[0]}: metavar {metavar!r}"
        assert param.opts[0] in shown


def test_fixed_choices_are_listed() -> None:
    tree = dict(COMMANDS)
    def metavar(path: tuple[str, ...], option: str) -> str:
        command = tree[path]
        param = next(p for p in command.params if option in p.opts)
        return param.display_type_rich(click.Context(command))
    assert metavar(("serve",), "--transport") == "[stdio|http]"
    assert metavar(("run",), "--agent").startswith("[noop|oracle|openai")
    assert metavar(("run",), "--judge").startswith("[none|facts|openai")
    assert metavar(("infoorg", "build"), "--family") == "[design|recap|thread]"


def test_completion_is_available(capsys) -> None:
    assert run(["--help"]) == 0
    assert "--install-completion" in capsys.readouterr().out


def test_debug_is_accepted_after_the_subcommand(capsys) -> None:
    with pytest.raises(Exception, match="unknown world 'nope'"):
        run(["world", "show", "nope", "--debug"])
    assert run(["world", "show", "nope"]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_errors_are_json_under_json(capsys) -> None:
    assert run(["verify", "--world", "nope", "--json"]) == 2
    captured = capsys.readouterr()
    error = json.loads(captured.out)
    assert error["exit_code"] == 2 and "unknown world 'nope'" in error["error"] and error["schema_version"] == 1
    assert run(["verify", "--no-such-option", "--json"]) == 2  # a click usage error, as JSON too
    assert json.loads(capsys.readouterr().out)["exit_code"] == 2
    assert run(["verify", "--world", "nope"]) == 2  # without --json: one line on stderr
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith("error: unknown world")


# Exit codes, one test per code of the README's table (0 ok, 1 check failed, 2 usage, 3 invalid input).

def test_exit_0_ok(capsys) -> None:
    assert run(["world", "show", "pharmaco_demo"]) == 0


def test_exit_2_for_a_missing_source(tmp_path: Path, capsys) -> None:
    argv = ["infoorg", "build", "--family", "design", "--source", str(tmp_path / "absent"), "--out", str(tmp_path / "o")]
    assert run(argv) == 2
    assert "absent" in capsys.readouterr().err


def test_exit_2_for_regrade_without_a_record(tmp_path: Path, capsys) -> None:
    assert run(["regrade", str(tmp_path)]) == 2
    assert "holds no execution-record.json" in capsys.readouterr().err


def test_exit_2_for_an_impossible_port(capsys) -> None:
    assert run(["serve", "--transport", "http", "--port", "99999"]) == 2
    err = capsys.readouterr().err
    assert "--port" in err and "Traceback" not in err


def test_exit_5_for_a_port_in_use_before_the_banner(capsys) -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen(1)
        port = held.getsockname()[1]
        code = run(["serve", "--world", "pharmaco_demo", "--rev", "r1", "--date", "2026-03-02", "--seat", "EMP-QC-001",
                    "--transport", "http", "--port", str(port)])
    err = capsys.readouterr().err
    assert code == 5  # the environment's, not the command line's
    assert f"cannot listen on 127.0.0.1:{port}" in err and "serving seat" not in err


def test_exit_3_for_an_overlay_that_is_not_yaml(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("id: [\n")
    assert run(["overlay", "check", str(bad)]) == 3
    assert "not valid YAML" in capsys.readouterr().err


def test_overlay_check_documents_its_exit_codes(capsys) -> None:
    assert run(["overlay", "check", "--help"]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert "1: the overlay has errors" in shown and "3: it cannot be read" in shown


def test_exit_1_for_an_overlay_with_errors(tmp_path: Path, capsys) -> None:
    import shutil

    from tests.fixtures.overlays.paths import GOOD

    shutil.copytree(GOOD.parent, tmp_path / "good")
    shutil.copytree(GOOD.parent.parent / "world", tmp_path / "world")
    stale = tmp_path / "good" / GOOD.name
    text = stale.read_text()
    assert "pinned_fingerprint:" in text
    stale.write_text(re.sub(r"(pinned_fingerprint:\s*)\S+", r"\g<1>" + "f" * 64, text, count=1))
    assert run(["overlay", "check", str(stale)]) == 1
    assert "FAILED" in capsys.readouterr().out

"""docs/authoring.md is a guide that works: its console commands run, in order, on a fresh folder.

Every `$ …` line of the guide's ```console blocks is run in one temporary project folder, in the
order the guide gives them: `worldkit …` lines through the CLI, any other line (an edit such as
`sed`) through the shell. Each must exit 0. A second test keeps the guide honest about what it
must walk through (the scaffold, freezing with overlays, verify, runs, an edit and the re-freeze).
"""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import pytest

from worldkit._cli.main import run

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "authoring.md"
_BLOCK = re.compile(r"^```console\n(.*?)^```", re.MULTILINE | re.DOTALL)


def guide_commands() -> list[str]:
    """The `$ ` lines of the guide's console blocks, in order, without the prompt."""
    text = GUIDE.read_text(encoding="utf-8")
    return [line[2:].strip() for block in _BLOCK.findall(text) for line in block.splitlines() if line.startswith("$ ")]


def test_the_guide_walks_the_whole_authoring_cycle() -> None:
    commands = guide_commands()
    firsts = [" ".join(shlex.split(c, comments=True)[:3]) for c in commands]
    assert firsts[:5] == ["worldkit world new", "worldkit freeze --world", "worldkit verify --world",
                          "worldkit run --overlay", "worldkit run --overlay"]  # fmt: skip
    edit = next(n for n, c in enumerate(commands) if not c.startswith("worldkit "))
    assert commands[edit + 1] == "worldkit freeze --world worlds/my_world --overlays"
    assert commands[edit + 2].startswith("worldkit verify --world my_world")  # by name, after one by path
    assert any(c.startswith("worldkit world show worlds/") for c in commands)


@pytest.mark.slow  # the scaffold frozen, verified twice, run twice (~15 s)
def test_the_guide_runs_in_order_on_a_fresh_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("WORLDKIT_STORE", f"sqlite:///{tmp_path / 'store.db'}")
    printed: dict[str, str] = {}
    for command in guide_commands():
        argv = shlex.split(command, comments=True)
        if argv[0] == "worldkit":
            code = run(argv[1:])
            out = capsys.readouterr()
            assert code == 0, f"`{command}` exited {code}:\n{out.out}\n{out.err}"
            printed[command] = out.out
        else:
            done = subprocess.run(["bash", "-c", command], cwd=tmp_path, capture_output=True, text=True, check=False)
            assert done.returncode == 0, f"`{command}` exited {done.returncode}: {done.stderr}"
    refreeze = printed["worldkit freeze --world worlds/my_world --overlays"]  # the same command twice: the last, after the edit
    assert re.search(r"^  revision   r1 +[0-9a-f]{12} → [0-9a-f]{12}$", refreeze, re.MULTILINE), refreeze
    assert re.search(r"^  pin        first-task +[0-9a-f]{12} → [0-9a-f]{12}$", refreeze, re.MULTILINE), refreeze
    assert re.search(r"^  lock       first-task +[0-9a-f]{12} → [0-9a-f]{12}$", refreeze, re.MULTILINE), refreeze
    assert printed["worldkit verify --world my_world"].endswith("verify: pass\n")

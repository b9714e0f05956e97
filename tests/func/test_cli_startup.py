"""The CLI starts at once: `--version` imports no library, each command only what it uses.

The budget is counted in modules imported (from `python -X importtime`), not in seconds, so it
holds on a loaded machine; `bench/startup.py` measures the seconds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
HEAVY = ("sqlalchemy", "networkx", "jinja2", "sklearn", "scipy", "numpy", "pydantic", "yaml", "mcp", "typer", "click")
VERSION_BUDGET = 60
"""Modules `python -X importtime -m worldkit --version` may import beyond a bare interpreter's."""


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def _imported(*argv: str) -> tuple[set[str], str]:
    """The modules loaded after running the CLI in a fresh interpreter with `argv`, and its stdout."""
    code = (
        "import io, json, sys, contextlib\n"
        "from worldkit._cli.main import run\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        "    try:\n"
        "        code = run(sys.argv[1:])\n"
        "    except SystemExit as done:\n"
        "        code = done.code\n"
        "print(json.dumps({'modules': sorted(sys.modules), 'out': out.getvalue(), 'code': code}))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, env=_env(), timeout=120)
    assert proc.returncode == 0, proc.stderr
    body = json.loads(proc.stdout.splitlines()[-1])
    assert body["code"] == 0, body
    return set(body["modules"]), body["out"]


def _importtime(*argv: str) -> list[str]:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", *argv], capture_output=True, text=True, env=_env(), timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    return [line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")]


def _top(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


def test_version_imports_no_heavy_library() -> None:
    modules, out = _imported("--version")
    assert out == "worldkit 0.1.0\n"
    assert not _top(modules) & set(HEAVY), sorted(_top(modules) & set(HEAVY))
    assert not [m for m in modules if m.startswith("worldkit.") and not m.startswith(("worldkit._cli", "worldkit.errors"))]


def test_version_through_python_m_stays_within_the_import_budget() -> None:
    bare = set(_importtime("-c", "pass"))
    modules = _importtime("-m", "worldkit", "--version")
    extra = [m for m in modules if m not in bare]
    assert "worldkit._cli.main" in extra
    assert len(extra) <= VERSION_BUDGET, f"{len(extra)} modules: {extra}"
    assert not _top(set(extra)) & set(HEAVY)


@pytest.mark.parametrize(
    ("argv", "absent"),
    [
        (["world", "--help"], {"sqlalchemy", "sklearn", "mcp"}),
        (["materialize", "--help"], {"sqlalchemy", "sklearn", "mcp", "networkx"}),
        (["verify", "--help"], {"sqlalchemy", "sklearn", "mcp", "jinja2", "networkx"}),
        (["schema", "--help"], {"sqlalchemy", "sklearn", "mcp"}),
    ],
)
def test_a_command_imports_only_what_it_uses(argv: list[str], absent: set[str]) -> None:
    modules, out = _imported(*argv)
    assert "Usage: worldkit " + argv[0] in out
    assert not _top(modules) & absent, sorted(_top(modules) & absent)


def test_help_still_lists_every_command_in_order() -> None:
    _, out = _imported("--help")
    names = ["materialize", "schema", "report", "serve", "verify", "freeze", "run", "regrade", "world", "log",
             "infoorg", "overlay"]  # fmt: skip
    positions = [out.find(f"\u2502 {name} ") for name in names]
    assert all(p > 0 for p in positions), out
    assert positions == sorted(positions)

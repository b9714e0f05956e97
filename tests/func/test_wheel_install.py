"""A non-editable wheel works anywhere: built, installed into a fresh venv, run from an empty folder.

The wheel ships `worlds/`, `overlays/` and `manifests/` as `worldkit/_shipped/` (setup.py); the
fresh venv reuses the running interpreter's site-packages for the dependencies through a `.pth`
line (a directory added that way does not run its own `.pth` files, so the checkout's editable
install stays out of sight), and the test checks that `worldkit` is imported from the venv.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def _sh(argv: list[str], cwd: Path, env: dict[str, str], timeout: int = 600) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{argv}: exit {proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    return proc


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    base = tmp_path_factory.mktemp("wheel")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "WORLDKIT_PATH", "WORLDKIT_WORLDS",
                                                            "WORLDKIT_OVERLAYS", "WORLDKIT_STORE", "WORLDKIT_CACHE")}
    # Built from a copy: an in-tree build leaves worldkit.egg-info in the checkout, which would shadow
    # the installed metadata for every other test run from it (e.g. inspect_ai's task namespace).
    source = base / "src"
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(
        ".git", ".venv", "out", "*.egg-info", "__pycache__", ".worldkit", "node_modules", ".pytest_cache", ".hypothesis",
    ))  # fmt: skip
    _sh([sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "-q", "-w", str(base / "dist")], base, env)
    (wheel,) = (base / "dist").glob("worldkit_bench-*.whl")
    venv = base / "venv"
    _sh([sys.executable, "-m", "venv", "--without-pip", str(venv)], base, env)
    python = venv / "bin" / "python"
    purelib = Path(_sh([str(python), "-c", "import sysconfig;print(sysconfig.get_paths()['purelib'])"], base, env)
                   .stdout.strip())
    (purelib / "_worldkit_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    _sh([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-q", str(wheel)], base, env)
    return venv, env


def test_the_installed_wheel_finds_the_shipped_worlds_from_an_empty_folder(installed, tmp_path: Path) -> None:
    venv, env = installed
    worldkit = str(venv / "bin" / "worldkit")
    empty = tmp_path / "empty"
    empty.mkdir()

    where = _sh([str(venv / "bin" / "python"), "-c", "import worldkit;print(worldkit.__file__)"], empty, env).stdout
    assert Path(where.strip()).is_relative_to(venv), where

    shown = _sh([worldkit, "world", "show", "pharmaco_demo"], empty, env).stdout
    assert "Riverbend Parenterals" in shown and "EMP-QC-001" in shown

    made = json.loads(_sh([worldkit, "materialize", "--world", "pharmaco_demo", "--rev", "r1", "--date", "2026-05-04",
                           "--seat", "EMP-QC-001", "--out", "proj", "--json"], empty, env).stdout)
    assert made["files"] > 100 and (empty / "proj" / "manifest.json").is_file()

    verified = json.loads(_sh([worldkit, "verify", "--world", "pharmaco_demo", "--only", "revision-digests", "--json"],
                              empty, env).stdout)
    assert verified["status"] == "pass"
    assert verified["checks"][0]["counts"]["matched"] == verified["checks"][0]["counts"]["revisions"] >= 2

    ran = json.loads(_sh([worldkit, "run", "--overlay", "pharmaco_demo/stability-update", "--agent", "oracle",
                          "--out", "runs", "--json"], empty, env).stdout)
    assert ran["status"] == "completed"
    assert ran["deterministic_passed"] == ran["deterministic_total"] > 0
    assert Path(ran["record"]).is_relative_to(empty.resolve())

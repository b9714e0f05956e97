"""Harbor's own task model, for validating exported Harbor tasks: a cached venv on a Python >= 3.12.

Harbor needs Python >= 3.12 and worldkit's venv may be older, so the check runs harbor in a venv of
its own: made once per pinned harbor version (the `harbor==` line of constraints.txt) and Python
minor version under `$WORLDKIT_HARBOR_CACHE` (default `~/.cache/worldkit`), then reused — by every
later test session too. (Not under `$WORLDKIT_CACHE`: the suite points that at a fresh folder per
session for the world cache, which made every session build this venv again.) Tests call
`validate_tasks(dirs)`, which runs `VALIDATE` in that venv through a subprocess and returns what
harbor's `TaskConfig` and `Task` loader made of each task directory. The only reason to skip is
that no Python >= 3.12 exists on the machine; a failing install fails the test.
"""

from __future__ import annotations

import fcntl
import glob
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# Run inside the harbor venv: argv = task directories; prints one JSON object per directory.
VALIDATE = r"""
import json, sys
from pathlib import Path
from harbor.models.task.config import TaskConfig
from harbor.models.task.task import Task

results = []
for folder in map(Path, sys.argv[1:]):
    found = {"dir": str(folder)}
    try:
        config = TaskConfig.model_validate_toml((folder / "task.toml").read_text())
        found.update(
            name=config.task.name if config.task is not None else None,
            mcp_servers=[server.name for server in config.environment.mcp_servers],
            metadata=config.metadata,
        )
        loaded = Task(folder)
        found["instruction"] = loaded.instruction
        found["ok"] = True
    except Exception as error:  # reported to the test, which decides
        found.update(ok=False, error=f"{type(error).__name__}: {error}")
    results.append(found)
print(json.dumps(results))
"""


def harbor_pin() -> str:
    """The harbor version pinned in constraints.txt."""
    text = (REPO / "constraints.txt").read_text(encoding="utf-8")
    found = re.search(r"^harbor==([^\s;]+)", text, re.MULTILINE)
    assert found, "constraints.txt pins no harbor version (a `harbor==X` line)"
    return found.group(1)


def _version(python: str) -> tuple[int, int] | None:
    try:
        done = subprocess.run([python, "-c", "import sys; print(*sys.version_info[:2])"],
                              capture_output=True, text=True, timeout=30)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    major, minor = map(int, done.stdout.split())
    return major, minor


def find_python312() -> str | None:
    """A Python >= 3.12: $WORLDKIT_PYTHON312, this interpreter, python3.1x on PATH, or a pyenv version."""
    candidates = [os.environ.get("WORLDKIT_PYTHON312", ""), sys.executable]
    candidates += [shutil.which(f"python3.{minor}") or "" for minor in range(20, 11, -1)]
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    candidates += sorted(glob.glob(str(pyenv / "3.1[2-9]*" / "bin" / "python3")), reverse=True)
    for python in filter(None, candidates):
        version = _version(python)
        if version is not None and version >= (3, 12):
            return python
    return None


def harbor_python() -> str:
    """The interpreter of the cached harbor venv, made on first use (skip only without Python >= 3.12)."""
    base = find_python312()
    if base is None:
        pytest.skip("harbor needs Python >= 3.12 and none was found (set WORLDKIT_PYTHON312 to one)")
    pin, (major, minor) = harbor_pin(), _version(base)  # type: ignore[misc]
    cache = Path(os.environ.get("WORLDKIT_HARBOR_CACHE") or Path.home() / ".cache" / "worldkit")
    venv = cache / f"harbor-{pin}-py{major}.{minor}"
    python = venv / "bin" / "python"
    if python.exists() and _has_harbor(python, pin):
        return str(python)
    cache.mkdir(parents=True, exist_ok=True)
    # One build at a time (xdist workers, parallel sessions): whoever waited finds it made.
    with open(cache / f"{venv.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if python.exists() and _has_harbor(python, pin):
            return str(python)
        _build(base, pin, venv)
    assert _has_harbor(python, pin), f"{venv} has no harbor {pin} after installing it"
    return str(python)


def _build(base: str, pin: str, venv: Path) -> None:
    building = venv.parent / f"{venv.name}.building-{os.getpid()}"
    shutil.rmtree(building, ignore_errors=True)
    subprocess.run([base, "-m", "venv", str(building)], check=True, capture_output=True, timeout=300)
    # --no-compile: of harbor and its dependencies only the task model is ever imported here, and
    # byte-compiling every installed module took half of the install's time
    done = subprocess.run([str(building / "bin" / "python"), "-m", "pip", "install", "-q", "--no-compile",
                           "--disable-pip-version-check", f"harbor=={pin}"],
                          capture_output=True, text=True, timeout=1500)  # fmt: skip
    assert done.returncode == 0, f"pip install harbor=={pin} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    try:
        building.rename(venv)  # another process may have finished first: keep theirs
    except OSError:
        shutil.rmtree(building, ignore_errors=True)


def _has_harbor(python: Path, pin: str) -> bool:
    done = subprocess.run([str(python), "-c", "import importlib.metadata as m; print(m.version('harbor'))"],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    return done.returncode == 0 and done.stdout.strip() == pin


def validate_tasks(folders: list[Path]) -> list[dict]:
    """What harbor's `TaskConfig` (task.toml) and `Task` (the directory layout) make of each folder."""
    done = subprocess.run([harbor_python(), "-c", VALIDATE, *map(str, folders)],
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)

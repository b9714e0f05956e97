"""Where worlds, overlays and frozen manifests are found: one search path for every command.

A *root* is a folder laid out like the repository: `worlds/<name>/world.yaml`, `overlays/<world>/`,
`manifests/<world>/`. Roots are searched in this order (the first match wins):

1. `--worlds DIR` (the command line, any number) and `$WORLDKIT_PATH` (os.pathsep-separated);
   `DIR` may be a root or a folder of worlds itself;
2. the current project: the nearest folder at or above the current directory holding `worlds/`
   or `overlays/`;
3. the worlds shipped with worldkit: `worldkit/_shipped/` in an installed wheel (the build copies
   `worlds/`, `overlays/` and `manifests/` there, see `setup.py`), else the source checkout
   holding this package (editable installs, running from the repository).

`$WORLDKIT_WORLDS` and `$WORLDKIT_OVERLAYS` name folders of worlds / of overlay folders directly
and come before every root (the verifier binds a scratch copy through them).

A world given by path brings its own project: its overlays (`overlays/<world>/`) and manifests
(`manifests/<world>/`) are looked for beside the `worlds/` folder holding it before any other root,
so a command given `worlds/permits` or `/elsewhere/worlds/permits` finds the same tasks as one
run inside that project and given the name.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

PATH_ENV_VAR = "WORLDKIT_PATH"
WORLDS_ENV_VAR = "WORLDKIT_WORLDS"
OVERLAYS_ENV_VAR = "WORLDKIT_OVERLAYS"
SHIPPED_DIR = "_shipped"
"""The folder of the installed package holding the shipped worlds, overlays and manifests."""

_extra: list[Path] = []
"""Roots given on the command line (`--worlds DIR`), searched first."""


def _env_paths(name: str) -> list[Path]:
    return [Path(p) for p in os.environ.get(name, "").split(os.pathsep) if p]


def _unique(paths: Iterable[Path]) -> list[Path]:
    seen: set[Path] = set()
    out: list[Path] = []
    for path in paths:
        key = path.resolve()
        if key not in seen:
            seen.add(key)
            out.append(path)
    return out


def shipped_root() -> Path | None:
    """The worlds shipped with worldkit: package data in a wheel, else the source checkout."""
    here = Path(__file__).resolve().parent
    packaged = here / SHIPPED_DIR
    if (packaged / "worlds").is_dir():
        return packaged
    checkout = here.parent
    if (checkout / "worlds").is_dir() and (checkout / "pyproject.toml").is_file():
        return checkout
    return None


def project_root(start: Path | None = None) -> Path | None:
    """The nearest folder at or above `start` (default: the current folder) with `worlds/` or `overlays/`."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "worlds").is_dir() or (folder / "overlays").is_dir():
            return folder
    return None


def search_roots() -> list[Path]:
    """Every root, in search order (command line, $WORLDKIT_PATH, project, shipped)."""
    roots = [*_extra, *_env_paths(PATH_ENV_VAR)]
    for root in (project_root(), shipped_root()):
        if root is not None:
            roots.append(root)
    return _unique(roots)


def world_dirs() -> list[Path]:
    """Folders holding `<name>/world.yaml`: $WORLDKIT_WORLDS, then each root's `worlds/` (or the root itself)."""
    folders = _env_paths(WORLDS_ENV_VAR)
    for root in search_roots():
        folders.append(root / "worlds" if (root / "worlds").is_dir() else root)
    return _unique(folders)


def overlay_dirs(world_root: Path | None = None) -> list[Path]:
    """Folders holding `<world>/` overlay folders: $WORLDKIT_OVERLAYS, then the `overlays/` beside the
    world at `world_root` (if given), then each root's `overlays/`."""
    folders = _env_paths(OVERLAYS_ENV_VAR)
    if world_root is not None:
        folders.append(world_project(world_root) / "overlays")
    folders += [root / "overlays" for root in search_roots()]
    return _unique(folders)


def world_project(world_root: Path) -> Path:
    """The project folder of a world folder: the parent of the `worlds/` folder holding it (or its parent)."""
    root = Path(world_root).absolute()
    return root.parent.parent if root.parent.name == "worlds" else root.parent


def manifest_dir(world_root: Path, world_id: str) -> Path:
    """`manifests/<world>/` beside the `worlds/` folder holding the world (or beside the world)."""
    return world_project(world_root) / "manifests" / world_id


def find_manifest(*parts: str) -> Path | None:
    """The first `manifests/<parts…>` that exists in a root, or None (e.g. `find_manifest("infoorg", "design.json")`)."""
    for root in search_roots():
        candidate = root.joinpath("manifests", *parts)
        if candidate.exists():
            return candidate
    return None


@contextmanager
def extra_roots(paths: Iterable[str | Path]) -> Iterator[None]:
    """Search `paths` first while the block runs (the CLI's `--worlds DIR`)."""
    added = [Path(p) for p in paths]
    _extra[:0] = added
    try:
        yield
    finally:
        del _extra[: len(added)]

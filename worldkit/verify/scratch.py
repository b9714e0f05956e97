"""Scratch space for verify: rebuilds, staged packages and seeded copies live here, never in the tree.

A tmpfs (`/dev/shm`) is preferred when present: rebuilds create thousands of small files and a
disk-backed temp dir can be an order of magnitude slower. `$WORLDKIT_SCRATCH` overrides.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def scratch_root() -> Path:
    """Where scratch directories are made: $WORLDKIT_SCRATCH, else /dev/shm if usable, else TMPDIR."""
    override = os.environ.get("WORLDKIT_SCRATCH")
    if override:
        return Path(override)
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK | os.X_OK):
        return shm
    return Path(tempfile.gettempdir())


@contextmanager
def scratch_dir(parent: Path | None = None, prefix: str = "worldkit-verify-") -> Iterator[Path]:
    """A fresh directory removed on exit (inside `parent` when given)."""
    base = parent if parent is not None else scratch_root()
    base.mkdir(parents=True, exist_ok=True)
    path = Path(tempfile.mkdtemp(prefix=prefix, dir=base))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def fresh_dir(parent: Path, prefix: str) -> Path:
    """A new, empty, uniquely named directory under `parent` (caller removes it)."""
    parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=prefix, dir=parent))


def copy_tree(src: Path, dst: Path) -> Path:
    """Copy a folder (symlinks kept as links, __pycache__ skipped)."""
    shutil.copytree(src, dst, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
    return dst


def link_tree(src: Path, dst: Path) -> Path:
    """`copy_tree` whose files are hard links to `src`'s: the same bytes, mode and times, for the
    cost of a link. Folders and symlinks are made anew (stats copied as `copy_tree` does). Writing a
    linked file in place writes `src`'s too: only for trees nothing writes into (see
    `tree_signature`, which tells whether anything did)."""
    os.makedirs(dst)
    with os.scandir(src) as entries:
        items = sorted(entries, key=lambda e: e.name)
    for entry in items:
        if entry.name == "__pycache__":
            continue
        target = os.path.join(dst, entry.name)
        if entry.is_symlink():
            os.symlink(os.readlink(entry.path), target)
            shutil.copystat(entry.path, target, follow_symlinks=False)
        elif entry.is_dir():
            link_tree(Path(entry.path), Path(target))
        else:
            os.link(entry.path, target)
    shutil.copystat(src, dst)
    return dst


def lend_tree(src: Path, dst: Path) -> Path:
    """`src` itself, lent to a run that only reads it, with a symbolic link to it at `dst` (where
    the run looks for the copy's files): no file is made. Anything written into the lent tree is
    written into `src` (see `tree_signature`, which tells whether anything was)."""
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    os.symlink(src, dst, target_is_directory=True)
    return src


def tree_signature(roots: list[Path]) -> dict[str, tuple[int, int, int, int]]:
    """path → (inode, size, mtime, mode) of every file and folder under `roots` (and the roots): a
    file written in place, chmod'ed, added or removed shows a different signature (hard links share
    the inode, so a write through a link shows; a folder's mtime moves when its entries change)."""
    found: dict[str, tuple[int, int, int, int]] = {}
    stack = [str(r) for r in roots]
    for root in stack:
        st = os.stat(root, follow_symlinks=False)
        found[root] = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_mode)
    while stack:
        folder = stack.pop()
        with os.scandir(folder) as entries:
            for entry in entries:
                st = entry.stat(follow_symlinks=False)
                found[entry.path] = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_mode)
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
    return found


class ScratchCopy:
    """A world, its frozen manifests and its overlays copied into `root`.

    The world and overlay folders keep their relative position (overlays may name their world by
    a relative path), under their common ancestor; the manifests go to `root/manifests/<world id>`.
    """

    def __init__(self, root: Path, world: Path, manifests: Path, overlays: Path | None) -> None:
        self.root = root
        self.world = world
        self.manifests = manifests
        self.overlays = overlays

    @classmethod
    def make(cls, root: Path, world: Path, world_id: str, manifests: Path, overlays: Path | None) -> ScratchCopy:
        world = world.resolve()
        overlays = overlays.resolve() if overlays is not None and overlays.is_dir() else None
        anchor = Path(os.path.commonpath([world, overlays])) if overlays else world.parent
        tree = root / "tree"
        copy_world = copy_tree(world, tree / world.relative_to(anchor))
        copy_overlays = copy_tree(overlays, tree / overlays.relative_to(anchor)) if overlays else None
        copy_manifests = root / "manifests" / world_id
        if manifests.is_dir():
            copy_tree(manifests, copy_manifests)
        return cls(root, copy_world, copy_manifests, copy_overlays)

    def clone(self, root: Path) -> ScratchCopy:
        """Another independent copy of this one under `root`."""
        copy_tree(self.root / "tree", root / "tree")
        manifests = root / "manifests" / self.manifests.name
        if self.manifests.is_dir():
            copy_tree(self.manifests, manifests)
        return ScratchCopy(
            root,
            root / self.world.relative_to(self.root),
            manifests,
            root / self.overlays.relative_to(self.root) if self.overlays else None,
        )

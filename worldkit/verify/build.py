"""Rebuild a projection from the world source into scratch space, for comparison with the frozen one.

A rebuild is the real `materialize` (same renderer, same atomic writer), into a fresh folder, so
what verify compares is exactly what a run would stage.
"""

from __future__ import annotations

import shutil
import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from worldkit.canon import sha256_json
from worldkit.materialize import materialize
from worldkit.materialize.manifest import Manifest, disk_stamps, scan_tree
from worldkit.verify.scratch import fresh_dir
from worldkit.world.load import WorldPackage


@dataclass
class Built:
    """One rebuilt projection on disk."""

    rev: str
    date: str
    seat: str
    manifest: Manifest
    root: Path
    memo: dict[str, Any] = field(default_factory=dict, repr=False)
    """Results computed from this (read-only) tree, kept for reuse: it never changes once built."""

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.rev, self.date, self.seat)

    def tree(self) -> dict[str, str]:
        """path → sha256 of what is actually on disk (manifest.json excluded), memoized."""
        if "tree" not in self.memo:
            self.memo["tree"] = scan_tree(self.root)
        return dict(self.memo["tree"])

    def stamps(self) -> dict[str, str]:
        """path → on-disk modification time (an `Entry.mtime` stamp) of every file in `tree()`, memoized."""
        if "stamps" not in self.memo:
            self.memo["stamps"] = disk_stamps(self.root, sorted(self.tree()))
        return dict(self.memo["stamps"])

    def tree_sha256(self) -> str:
        """One digest of the on-disk tree (paths, file digests and mtimes), independent of the manifest."""
        stamps = self.stamps()
        return sha256_json(sorted((p, d, stamps[p]) for p, d in self.tree().items()))

    def future_dates(self, day: dt.date) -> list[tuple[str, str]]:
        """Content on disk dated after `day` (see `worldkit.verify.audit.scan_dates`), memoized."""
        from worldkit.verify.audit import scan_dates

        key = f"future:{day.isoformat()}"
        if key not in self.memo:
            self.memo[key] = scan_dates(self.root, day)
        return self.memo[key]

    def read(self, path: str) -> bytes:
        return (self.root / path).read_bytes()

    def discard(self) -> None:
        shutil.rmtree(self.root.parent, ignore_errors=True)


def build_projection(package: WorldPackage, rev: str, date: str, seat: str, work: Path) -> Built:
    """Materialize (rev, date, seat) of `package` into a fresh folder under `work`."""
    holder = fresh_dir(work, f"build-{rev}-{date}-{seat}-")
    result = materialize(package, rev, date, seat, holder / "projection")
    return Built(rev=rev, date=date, seat=seat, manifest=result.manifest, root=result.out)

"""Staged-workspace scan benchmark: a FIFO, a directory symlink, a setuid file never slow verify down.

Stages the demo world's first overlay (or `--overlay`), then times `verify_workspace` and
`verify_frozen` on the clean package and after each attack, printing one JSON line per case:
seconds (median of `--repeats`), the status and the item kinds found. A FIFO whose write end is
never opened would block a scan that opened it forever; here it must cost what a clean scan costs.

    python bench/workspace.py [--overlay qualification-sweep] [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from worldkit.frozen.staged import verify_frozen
from worldkit.frozen.workspace import verify_workspace
from worldkit.overlay import apply_overlay
from worldkit.verify.inject import rehash_package

ATTACKS = {
    "clean": lambda pkg: None,
    "fifo": lambda pkg: os.mkfifo(pkg / "candidate" / "workspace" / "pipe"),
    "directory-symlink": lambda pkg: (pkg / "candidate" / "workspace" / "v").symlink_to(pkg / "verifier"),
    "setuid": lambda pkg: (pkg / "candidate" / "request.md").chmod(0o4777),
    "empty-directory": lambda pkg: (pkg / "candidate" / "projection" / "files" / "E").mkdir(),
    "rehashed-package": lambda pkg: rehash_package(pkg, "projection/files/smuggled.md", b"x\n"),
}


def _timed(call, repeats: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = call()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--overlay", default="qualification-sweep")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="worldkit-bench-ws-") as scratch:
        staged = apply_overlay(args.overlay, Path(scratch) / "staged").out
        for name, attack in ATTACKS.items():
            package = Path(scratch) / name
            shutil.copytree(staged, package, symlinks=True)
            attack(package)
            own_s, own = _timed(lambda: verify_workspace(package), args.repeats)
            frozen_s, frozen = _timed(lambda: verify_frozen(package), 1)
            print(json.dumps({
                "case": name, "files": own.counts.get("files"), "staged_workspace_s": round(own_s, 4),
                "staged_workspace": own.status, "frozen_workspace_s": round(frozen_s, 4), "frozen_workspace": frozen.status,
                "kinds": sorted({i.kind for i in [*own.items, *frozen.items]}),
            }))


if __name__ == "__main__":
    main()

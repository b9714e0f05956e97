"""Rebuild projections in a fresh interpreter: `python -m worldkit.verify.rebuild [--nice N] WORLD OUT`.

Reads a JSON list of [rev, date, seat] on stdin, materializes each under OUT, and prints one JSON
object `{"projections": {"rev|date|seat": {"fingerprint", "tree"}}, "revisions": {rev: digest}}`
where `tree` digests what is on disk. With `WORLDKIT_CACHE=off` the world is loaded from source. Used by
the `rebuild-repeat` check so that each rebuild runs under its own PYTHONHASHSEED.

With the render caches off (`WORLDKIT_RENDER_CACHE=off`, the rebuild that proves the format
libraries reproduce the frozen bytes) each distinct office file is rendered anew once in this
process (`worldkit.render.office.cache.once_each`): a document both revisions show unchanged is
one render, not two. `--nice N` lowers the process's priority by N first: verify runs these
rebuilds beside work that other checks wait for.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from worldkit.render.office.cache import once_each
from worldkit.verify.build import build_projection
from worldkit.world.load import load_world


def main(argv: list[str]) -> int:
    args = list(argv)
    if args[:1] == ["--nice"]:
        if int(args[1]):
            os.nice(int(args[1]))
        args = args[2:]
    world, out = args
    targets = json.loads(sys.stdin.read())
    package = load_world(Path(world))
    report: dict[str, dict[str, str]] = {}
    with once_each():
        for rev, date, seat in targets:
            built = build_projection(package, rev, date, seat, Path(out))
            report[f"{rev}|{date}|{seat}"] = {"fingerprint": built.manifest.fingerprint, "tree": built.tree_sha256()}
            built.discard()
    revisions = {name: package.revision(name).digest for name in package.revision_names}
    sys.stdout.write(json.dumps({"projections": report, "revisions": revisions}, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

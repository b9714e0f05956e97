"""A workspace starts as frozen: the seat's working copy, before a session, against the frozen seed.

A run folder's `workspace/` is served to the agent as its own. Before a session it must hold
exactly the candidate package's `workspace/` seed (whose manifest `worldkit.frozen.staged` has
already proved frozen): the same files with the same bytes, nothing else — so a copy of
`verifier/truth.json` placed there, or a hard link to it, is refused, not served. The only
latitude is what the task lets the seat write: a seed file the agent may write (the deliverable,
a path a `write_file` permission covers) may start absent, never different.

Entries are seen by `lstat` (`worldkit.materialize.scan`): links, FIFOs, devices, world-writable
or executable modes are refused, and a regular file with more than one hard link is refused too
(a write through it would change a file outside the workspace, and its bytes can change under the
grader). Nothing here follows a link or reads more than a file's digest needs.
"""

from __future__ import annotations

import fnmatch
import os
import stat
from pathlib import Path
from typing import Any

from worldkit.canon import strict_loads
from worldkit.errors import CheckFailed
from worldkit.materialize.manifest import MANIFEST_NAME
from worldkit.materialize.scan import mode_findings, read_regular, scan

__all__ = ["require_fresh_workspace", "workspace_differences"]

SEED = "workspace/"


def _writable(overlay: Any) -> tuple[set[str], list[str]]:
    """The paths (literal) and globs the task lets the seat write in its workspace."""
    from worldkit.overlay.toolconfig import WriteFiles

    literal: set[str] = {overlay.deliverable.path} if overlay is not None and overlay.deliverable.path else set()
    globs: list[str] = []
    for change in getattr(overlay, "permitted", []) or []:
        if isinstance(change, WriteFiles):
            for pattern in change.paths:
                (globs.append(pattern) if any(ch in pattern for ch in "*?[") else literal.add(pattern))
    return literal, globs


def _seed(candidate: Path) -> dict[str, str]:
    """path (relative to workspace/) → sha256 of the candidate's seed, from its manifest."""
    data = read_regular(candidate / MANIFEST_NAME)
    try:
        body = strict_loads(data if data is not None else b"")
        files = body["files"]
        return {str(e["path"])[len(SEED):]: str(e["sha256"]) for e in files if str(e["path"]).startswith(SEED)}
    except (ValueError, KeyError, TypeError) as error:
        raise CheckFailed(f"{candidate / MANIFEST_NAME} is unreadable ({error}); re-stage the package") from None


def workspace_differences(workspace: Path, candidate: Path, overlay: Any = None) -> list[str]:
    """One line per way `workspace` differs from the candidate's frozen seed (empty: it starts as frozen)."""
    seed = _seed(candidate)
    literal, globs = _writable(overlay)
    try:
        top = os.lstat(workspace)
    except OSError as error:
        return [f"{workspace}: cannot be read ({error.strerror})"]
    if not stat.S_ISDIR(top.st_mode):
        return [f"{workspace}: not a directory (a link or another kind of entry)"]
    lines = [f"workspace/: {f.detail}" for f in mode_findings(".", top, is_dir=True)]
    found = scan(workspace)
    lines += [f"{f.path}: {f.detail}" for f in found.findings]
    for path in sorted(found.files):
        try:
            links = os.lstat(workspace / path).st_nlink
        except OSError:
            links = 1
        if links > 1:
            lines.append(f"{path}: a file with {links} hard links (one is outside the workspace)")
        want = seed.get(path)
        if want is None:
            lines.append(f"{path}: not in the frozen seed (the workspace must start as staged)")
        elif want != found.files[path]:
            lines.append(f"{path}: differs from the frozen seed")
    for path in sorted(set(seed) - set(found.files) - set(found.special)):
        if path in literal or any(fnmatch.fnmatchcase(path, g) for g in globs):
            continue  # a file the seat may write may start absent
        lines.append(f"{path}: in the frozen seed, missing from the workspace")
    return lines


def require_fresh_workspace(workspace: Path, candidate: Path, overlay: Any = None, *, what: str = "workspace") -> None:
    """Raise CheckFailed (exit 1) unless `workspace` starts as the frozen seed (see the module doc)."""
    problems = workspace_differences(workspace, candidate, overlay)
    if problems:
        more = f" (+{len(problems) - 3} more)" if len(problems) > 3 else ""
        raise CheckFailed(f"{what} {workspace} does not start as frozen: {'; '.join(problems[:3])}{more}; "
                          "stage the run folder afresh (`worldkit serve --overlay T --out NEW_DIR`)")  # fmt: skip

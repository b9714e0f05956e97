"""Relative-path rules shared by overlay fields that name files (workspace, reference files)."""

from __future__ import annotations

import re
from pathlib import Path

from worldkit.errors import PathRefused


def relative_problem(value: str) -> str | None:
    """Why `value` is not a confined relative path (`a/b.md`), or None if it is one."""
    parts = value.replace("\\", "/").split("/")
    if not value:
        return "is empty"
    if value.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", value):
        return "is absolute"
    if ".." in parts:
        return "contains `..`"
    if "" in parts or "." in parts:
        return "has an empty or `.` part"
    return None


def check_relative(value: str, field: str) -> None:
    """Raise ValueError (for pydantic) if `value` is not a confined relative path."""
    problem = relative_problem(value)
    if problem:
        raise ValueError(f"`{field}` must be a relative path without `..` or empty parts; {value!r} {problem}")


def confined(root: Path, relative: str) -> Path:
    """`root / relative`, refusing anything that would leave `root` (.., absolute, symlinks)."""
    problem = relative_problem(relative)
    if problem:
        raise PathRefused(f"path {relative!r} {problem}; use a path relative to {root}")
    path = root / relative
    resolved_root = root.resolve()
    if resolved_root != path.resolve() and resolved_root not in path.resolve().parents:
        raise PathRefused(f"path {relative!r} leaves {root} (through a symlink?); use a plain relative path")
    return path


PATH_CONVENTIONS = (
    "paths follow three conventions: evidence, truth sources and curated packets use projection paths "
    "(`files/<mount>/…`, `records/<system>/<id>.json`, `mail/<id>.json`, `chat/<channel>.jsonl`); tool calls "
    "(`read_file` in reference.actions) use the drive path without `files/` (`<mount>/…`); deliverables, "
    "checks, `write_file` and counterfactual files use workspace-relative paths (`answer.md`, no `workspace/`)"
)
"""The one sentence every path error ends with, so each place names the other two forms."""

_PROJECTION_PREFIXES = ("files/", "records/", "mail/", "chat/")


def projection_hint(path: str, entries: object = ()) -> str:
    """For a path given where a projection path (`files/…`) belongs: a "did you mean" and the conventions."""
    guess = None
    if not path.startswith(_PROJECTION_PREFIXES) and f"files/{path}" in entries:  # type: ignore[operator]
        guess = f"files/{path}"
    return (f"did you mean {guess!r}? " if guess else "") + PATH_CONVENTIONS


def tool_hint(path: str, entries: object = ()) -> str:
    """For a `read_file` path: a "did you mean" (drop `files/`) and the conventions."""
    if path.startswith("files/") and path in entries:  # type: ignore[operator]
        return f"did you mean {path.removeprefix('files/')!r}? " + PATH_CONVENTIONS
    return PATH_CONVENTIONS


def workspace_hint(path: str) -> str:
    """For a deliverable, check or write_file path: a "did you mean" (drop `workspace/`) and the conventions."""
    if path.startswith("workspace/"):
        return f"did you mean {path.removeprefix('workspace/')!r}? " + PATH_CONVENTIONS
    if path.startswith(_PROJECTION_PREFIXES):
        return "a deliverable is written to the workspace, not the seat's projection; " + PATH_CONVENTIONS
    return PATH_CONVENTIONS

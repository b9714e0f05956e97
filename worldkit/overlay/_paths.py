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

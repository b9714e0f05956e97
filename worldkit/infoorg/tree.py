"""Record hierarchies as the scorer sees them: record id → folder path, names checked.

A hierarchy is a mapping from record id to the folder components above the record (no file name).
This module decides which folder names are allowed, reads the `{record_id: [folder, …]}` JSON
interchange format, and turns paths into small integer node ids that the scorer counts over.
It never looks at record bytes and never touches the filesystem except to read a JSON file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from itertools import chain
from pathlib import Path
from typing import NamedTuple

from worldkit.errors import ExitCode, WorldkitError

__all__ = [
    "InvalidHierarchy",
    "IndexedTree",
    "Paths",
    "folder_name_problem",
    "index_paths",
    "load_tree_file",
    "strip_wrapper",
]

Paths = dict[str, tuple[str, ...]]
"""record id → folder components (the file name `<id>.txt` is not part of the path)."""

_RECORD_ID_LOOKALIKE = re.compile(r"[A-Z][0-9]+")


class InvalidHierarchy(WorldkitError):
    """A hierarchy given to the scorer is malformed; the message names the file or record."""

    exit_code = ExitCode.INVALID_INPUT


def folder_name_problem(name: object) -> str | None:
    """Why `name` is not an allowed folder name, or None when it is allowed.

    The rule (paper §D.1, issue 7): non-empty; no `/` or `\\`; not `.` or `..`; not ending in
    `.txt`; not a record-id look-alike (`[A-Z][0-9]+`).
    """
    if not isinstance(name, str):
        return f"folder name {name!r} is not a string"
    if name == "":
        return "folder name is empty"
    if "/" in name or "\\" in name:
        return f"folder name {name!r} contains a path separator ('/' or '\\')"
    if name in (".", ".."):
        return f"folder name {name!r} is reserved"
    if name.endswith(".txt"):
        return f"folder name {name!r} ends in '.txt' and would look like a record file"
    if _RECORD_ID_LOOKALIKE.fullmatch(name):
        return f"folder name {name!r} looks like a record id (a capital letter followed by digits)"
    return None


def _shared_depth(paths: Sequence[Sequence[str]]) -> int:
    """How many leading folders every path in `paths` shares (the wrapper's depth)."""
    if not paths:
        return 0
    shortest = min(paths, key=len)
    depth = 0
    while depth < len(shortest) and all(path[depth] == shortest[depth] for path in paths):
        depth += 1
    return depth


def strip_wrapper(paths: Mapping[str, Sequence[str]]) -> Paths:
    """Drop the longest folder prefix shared by every record (a wrapper changes nothing)."""
    depth = _shared_depth(list(dict.fromkeys(map(tuple, paths.values()))))
    return {record: tuple(path)[depth:] for record, path in paths.items()}


class IndexedTree(NamedTuple):
    """The folders of a hierarchy, numbered: node 0 is the root, a parent precedes its children.

    Built from the distinct record paths, not from the records: records that share a folder are
    counted through the weights the scorer attaches to each folder (see `index_paths`).
    """

    parent: list[int]
    """`parent[k]`: node k's parent (-1 for the root)."""
    depth: list[int]
    """`depth[k]`: folders between the root and node k (the root has depth 0)."""
    chain: list[tuple[int, ...]]
    """`chain[k]`: the nodes from the root down to node k, both included."""
    subfolders: list[int]
    """`subfolders[k]`: node k's child folders (records in it are not counted)."""

    @property
    def node_count(self) -> int:
        return len(self.parent)


def index_paths(paths: Iterable[tuple[str, ...]]) -> tuple[IndexedTree, dict[tuple[str, ...], int]]:
    """Number the folders of the distinct `paths`, the shared wrapper dropped; also return a
    mapping from each path (and each of its prefixes below the wrapper) to its node."""
    distinct = list(dict.fromkeys(paths))
    skip = _shared_depth(distinct)
    node_of: dict[tuple[str, ...], int] = {distinct[0][:skip]: 0} if distinct else {}
    parent, depth, chain, subfolders = [-1], [0], [(0,)], [0]
    for path in distinct:
        missing = []
        while path not in node_of:  # climb to the nearest folder already numbered
            missing.append(path)
            path = path[:-1]
        node = node_of[path]
        for folder in reversed(missing):
            child = node_of[folder] = len(parent)
            parent.append(node)
            depth.append(depth[node] + 1)
            chain.append((*chain[node], child))
            subfolders.append(0)
            subfolders[node] += 1
            node = child
    return IndexedTree(parent, depth, chain, subfolders), node_of


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _reject_duplicate_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """`json.loads` hook: an object that repeats a key is an error (JSON would keep the last)."""
    result = dict(pairs)
    if len(result) < len(pairs):  # only then look for the first key given twice
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return result


def load_tree_file(path: Path) -> Paths:
    """Read a `{record_id: [folder, …]}` JSON file, rejecting anything else with a clear message.

    Folder names are not checked here (a bad name in an output is a validity failure, not a
    malformed file); see `folder_name_problem`. A record id given twice is an error naming it
    (plain JSON parsing would silently keep the last entry).
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InvalidHierarchy(f"{path}: file not found; pass the path of a hierarchy JSON file")
    except (OSError, UnicodeDecodeError) as error:
        raise InvalidHierarchy(f"{path}: cannot be read as UTF-8 text ({error}); pass a JSON file")
    try:
        data = json.loads(text, object_pairs_hook=_reject_duplicate_keys)
    except _DuplicateKey as duplicate:
        raise InvalidHierarchy(
            f"{path}: record {duplicate.key} is given more than once; "
            "a hierarchy lists each record id once — keep one entry for it"
        )
    except json.JSONDecodeError as error:
        raise InvalidHierarchy(
            f"{path}: not valid JSON (line {error.lineno}, column {error.colno}: {error.msg}); "
            'expected an object like {"F001": ["meeting", "section"]}'
        )
    if not isinstance(data, dict):
        raise InvalidHierarchy(
            f"{path}: the top level is a JSON {type(data).__name__}; expected an object mapping "
            'record ids to folder lists, like {"F001": ["meeting", "section"]}'
        )
    if not data:
        raise InvalidHierarchy(f"{path}: holds no records; add at least one record id")
    values = data.values()
    if (
        "" not in data
        and set(map(type, values)) == {list}
        and set(map(type, chain.from_iterable(values))) <= {str}
    ):  # every entry well formed, checked without a loop per record
        return dict(zip(data, map(tuple, values)))
    paths: Paths = {}
    for record, folders in data.items():  # find the first malformed entry, to name it
        if record == "":
            raise InvalidHierarchy(f"{path}: a record id is empty; give every record an id")
        if not isinstance(folders, list) or not all(isinstance(f, str) for f in folders):
            raise InvalidHierarchy(
                f"{path}: record {record}: the path must be a list of folder-name strings "
                f"(got {json.dumps(folders)[:80]}); write it like [\"meeting\", \"section\"]"
            )
        paths[record] = tuple(folders)
    return paths

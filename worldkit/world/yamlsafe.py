"""The one YAML loader for world and overlay files: safe, and strict where YAML is silently lossy.

PyYAML keeps the last of two equal keys in a mapping and drops the other without a word (a second
`documents:` would lose every document above it), and turns an impossible date (`2025-02-30`) into
a bare `ValueError`. `StrictLoader` refuses both as YAML errors carrying the line and column, so
callers report them like any other syntax error: file, key and fix.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.constructor import ConstructorError, SafeConstructor

_Base: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MERGE = "tag:yaml.org,2002:merge"


class StrictLoader(_Base):  # type: ignore[misc, valid-type]
    """`yaml.CSafeLoader` that refuses duplicate mapping keys and impossible dates."""


def _mapping(loader: Any, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    seen: dict[Any, yaml.Node] = {}
    for key_node, _ in node.value:
        if key_node.tag == _MERGE:
            continue  # `<<:` merges may be overridden on purpose
        key = loader.construct_object(key_node, deep=True)
        try:
            first = seen.get(key)
        except TypeError:  # an unhashable key: the base constructor reports it
            continue
        if first is not None:
            raise ConstructorError(
                "while constructing a mapping", node.start_mark,
                f"duplicate key {key!r} (first at line {first.start_mark.line + 1}); YAML would silently keep only "
                "the last one — merge the two entries or rename one",
                key_node.start_mark,
            )
        seen[key] = key_node
    return SafeConstructor.construct_mapping(loader, node, deep=deep)


def _timestamp(loader: Any, node: yaml.ScalarNode) -> Any:
    try:
        return SafeConstructor.construct_yaml_timestamp(loader, node)
    except ValueError as error:
        raise ConstructorError(
            None, None, f"impossible date or time {node.value!r} ({error}); use a real date, YYYY-MM-DD",
            node.start_mark,
        ) from None


StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)
StrictLoader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp)


def problem_text(error: yaml.YAMLError) -> str:
    """`at line L, column C: <problem>` for a YAML error (the first line of it otherwise)."""
    mark = getattr(error, "problem_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
    problem = getattr(error, "problem", None) or str(error).splitlines()[0]
    return f"{where}: {problem}"

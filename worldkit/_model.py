"""The configuration worldkit's models share, and a one-parse reading of their field docstrings.

Every worldkit model is frozen, forbids unknown fields and takes each field's description from
the docstring written under it (`FROZEN`: pydantic's `use_attribute_docstrings`). Descriptions are
not decoration: they are in the MCP tools' input schemas, whose digest is part of every
projection's fingerprint.

pydantic finds a class's docstrings by finding the class's source: before Python 3.13 it walks the
interpreter's frames up from the class statement, asking `inspect.getmodule` of each, then
tokenizes the class block and parses it twice. That costs about 1.7 ms a class, some 70 ms of every
command's start-up here. Importing this module replaces that lookup, for classes defined in
worldkit's own modules, by one `ast.parse` per module: each class's node is found by its qualified
name, and pydantic's own visitor (`DocstringVisitor`) reads its docstrings, so the descriptions are
the same (`tests/unit/test_model_docs.py` compares them for every model class). Any other class,
a class defined in a function, or a qualified name that two class statements in one module share,
is left to pydantic's lookup.
"""

from __future__ import annotations

import ast
import linecache
import sys
from functools import cache
from typing import Any

from pydantic import ConfigDict
from pydantic._internal import _docs_extraction, _fields

FROZEN = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True, defer_build=True)
"""A worldkit model: immutable, no unknown fields, each field described by its docstring."""

_pydantic_lookup = _docs_extraction.extract_docstrings_from_cls


@cache
def _class_nodes(filename: str) -> dict[str, ast.ClassDef | None]:
    """Qualified name → class statement, for every class of the module in `filename` not nested in a
    function (None where two statements define one qualified name)."""
    nodes: dict[str, ast.ClassDef | None] = {}
    source = "".join(linecache.getlines(filename))
    if not source:
        return nodes

    def walk(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                name = prefix + node.name
                nodes[name] = None if name in nodes else node
                walk(node.body, name + ".")

    walk(ast.parse(source, filename).body, "")
    return nodes


def attribute_docstrings(cls: type[Any], use_inspect: bool = False) -> dict[str, str]:
    """Field name → docstring of `cls`, as pydantic's `extract_docstrings_from_cls` returns them."""
    module = sys.modules.get(cls.__module__)
    filename = getattr(module, "__file__", None)
    if cls.__module__.partition(".")[0] == "worldkit" and filename and "<locals>" not in cls.__qualname__:
        node = _class_nodes(filename).get(cls.__qualname__)
        if node is not None:
            visitor = _docs_extraction.DocstringVisitor()
            visitor.generic_visit(node)
            return visitor.attrs
    return _pydantic_lookup(cls, use_inspect)


# pydantic's field collection calls the name bound in `_fields`; a pydantic without it keeps its own lookup.
if getattr(_fields, "extract_docstrings_from_cls", None) is _pydantic_lookup:
    _fields.extract_docstrings_from_cls = attribute_docstrings

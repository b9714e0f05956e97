"""The base every worldkit model shares: `Model`.

A worldkit model is frozen, forbids unknown fields and takes each field's description from the
docstring written under it. Descriptions are not decoration: they are in the MCP tools' input
schemas, whose digest is part of every projection's fingerprint.

The descriptions are read by the visitor pydantic's `use_attribute_docstrings` runs (the string
statement right after a field's annotation, `inspect.cleandoc`-ed; an explicit description wins),
on one parse of each module rather than from the source of each class found anew by walking
the import's frames and tokenizing (about 2 ms a class, a fifth of a CLI command's start-up); and
a model's validator and schema are built on first use (`defer_build`), which a command that only
imports the model never pays for.
"""

from __future__ import annotations

import ast
import sys
from functools import cache

from pydantic import BaseModel, ConfigDict
# pydantic's own reading of a class body (private: pydantic is pinned in constraints.txt, and
# tests/unit/test_model_docs.py compares every model's descriptions with pydantic's reading).
from pydantic._internal._docs_extraction import DocstringVisitor

FROZEN = ConfigDict(frozen=True, extra="forbid", defer_build=True)
"""A worldkit model's configuration: immutable, no unknown fields, built on first use."""


class Model(BaseModel):
    """A worldkit model: immutable, no unknown fields, each field described by its docstring."""

    model_config = FROZEN

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: object) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        documented = attribute_docstrings(cls)
        described = False
        for name, field in cls.model_fields.items():
            if field.description is None and name in documented:
                field.description = documented[name]
                described = True
        if described and cls.__pydantic_complete__:  # a subclass that builds at once: built without them
            cls.model_rebuild(force=True)


def attribute_docstrings(cls: type) -> dict[str, str]:
    """{attribute: docstring} of the annotated attributes `cls`'s own body documents (as pydantic's
    `use_attribute_docstrings` finds them); empty where its source cannot be found."""
    module = sys.modules.get(cls.__module__)
    source_file = getattr(module, "__file__", None)
    if not source_file:
        return {}
    classes = _class_docstrings(source_file)
    _, local, path = cls.__qualname__.rpartition("<locals>.")
    return classes.get(local + path, {})


def _documented(node: ast.ClassDef) -> dict[str, str]:
    """{attribute: docstring} of one class body, read by pydantic's own visitor (what
    `use_attribute_docstrings` runs on the source it finds for a class)."""
    visitor = DocstringVisitor()
    visitor.generic_visit(node)
    return visitor.attrs


_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")
"""The fields of a statement (or an except handler, a match case) that hold statements."""


@cache
def _class_docstrings(source_file: str) -> dict[str, dict[str, str]]:
    """{qualified name: {attribute: docstring}} of every class in a module's source, one parse.

    A class inside a function is keyed `<locals>.` and its path below the innermost function (as its
    `__qualname__` ends); where two such keys are alike, which class is meant is unknown: neither is
    described."""
    try:
        with open(source_file, encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
    except (OSError, SyntaxError, UnicodeDecodeError):
        return {}
    found: dict[str, dict[str, str]] = {}
    twice: set[str] = set()

    def walk(nodes: list[ast.AST], prefix: str) -> None:  # statements (a class is defined by one)
        for node in nodes:
            if isinstance(node, ast.ClassDef):
                name = prefix + node.name
                if name in found:
                    twice.add(name)
                found[name] = _documented(node)
                walk(node.body, name + ".")
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                walk(node.body, "<locals>.")
            else:  # if, for, while, with, try (and its handlers), match (and its cases)
                for field in _BLOCKS:
                    walk(getattr(node, field, ()), prefix)

    walk(tree.body, "")
    for name in twice:
        del found[name]
    return found


def fields_at(model: type[BaseModel], loc: tuple[object, ...]) -> list[str]:
    """The field names (aliases where set) a model accepts at `loc`, following its annotations through
    lists, dicts and unions; [] where `loc` leaves the models."""
    import typing

    current: object = model
    for part in loc:
        if not (isinstance(current, type) and issubclass(current, BaseModel)) or not isinstance(part, str):
            if isinstance(part, int) or not isinstance(current, type):
                continue
            return []
        info = current.model_fields.get(part) or next(
            (f for f in current.model_fields.values() if f.alias == part), None)  # fmt: skip
        if info is None:
            return []
        found: list[object] = [info.annotation]
        current = None
        while found:
            candidate = found.pop()
            if isinstance(candidate, type) and issubclass(candidate, BaseModel):
                current = candidate
                break
            found.extend(typing.get_args(candidate))
        if current is None:
            return []
    if isinstance(current, type) and issubclass(current, BaseModel):
        return sorted(f.alias or name for name, f in current.model_fields.items())
    return []


def unknown_key_message(model: type[BaseModel], loc: tuple[object, ...]) -> str:
    """`unknown key `x`` with a did-you-mean (difflib) among the fields the model accepts there."""
    import difflib

    key = str(loc[-1]) if loc else ""
    known = fields_at(model, tuple(loc[:-1]))
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    hint = f"did you mean `{close[0]}`?" if close else (f"known keys: {', '.join(known)}" if known else "remove it")
    return f"unknown key `{key}`; {hint}"

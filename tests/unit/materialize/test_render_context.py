"""A render's context is made from the template's globals read once (`worldkit.render.env._Compiled`):
what a template sees and writes must be what jinja's own `Template.render` gives it."""

from __future__ import annotations

import pytest

from worldkit.render.env import _bounded, _Compiled, build_environment

TEMPLATES = {
    "globals.md.j2": "{% for i in range(3) %}{{ i }}{% endfor %} {{ dict(a=1)['a'] }} "
    "{% set ns = namespace(n=0) %}{% for x in doc.vars.nums %}{% set ns.n = ns.n + x %}{% endfor %}{{ ns.n }}",
    "blocks.md.j2": "{% block head %}# {{ doc.title }}{% endblock %}\n{{ self.head() }}\n{% block body %}{{ world.name }}{% endblock %}",
    "base.md.j2": "<{% block main %}base{% endblock %}>",
    "child.md.j2": "{% extends 'base.md.j2' %}{% block main %}{{ super() }}+{{ doc.title | upper }}{% endblock %}",
    "macro.md.j2": "{% macro item(x) %}- {{ x }}{% endmacro %}{% for x in doc.vars.nums %}{{ item(x) }}\n{% endfor %}",
    "undefined.md.j2": "{{ doc.missing }}",
}
VARIABLES = {"doc": {"title": "Batch record", "vars": {"nums": [1, 2, 4]}}, "world": {"name": "PharmaCo"}}


@pytest.mark.parametrize("name", sorted(set(TEMPLATES) - {"undefined.md.j2"}))
def test_a_render_equals_jinjas_own(name: str) -> None:
    env = build_environment(TEMPLATES)
    template = env.get_template(name)
    assert _bounded(_Compiled(template), dict(VARIABLES)) == template.render(**VARIABLES)


def test_the_globals_are_read_once_and_not_written() -> None:
    env = build_environment(TEMPLATES)
    compiled = _Compiled(env.get_template("globals.md.j2"))
    before = dict(compiled.globals)
    first = _bounded(compiled, dict(VARIABLES))
    assert _bounded(compiled, dict(VARIABLES)) == first == "012 1 7"
    assert compiled.globals == before and "doc" not in compiled.globals and "ns" not in compiled.globals


def test_an_undefined_name_still_fails() -> None:
    env = build_environment(TEMPLATES)
    with pytest.raises(Exception, match="missing"):
        _bounded(_Compiled(env.get_template("undefined.md.j2")), dict(VARIABLES))


class _Sub(dict):
    title = "attribute"


@pytest.mark.parametrize(
    ("obj", "name"),
    [
        ({"title": "T"}, "title"),
        ({"title": "T"}, "missing"),
        ({"items": [1]}, "items"),  # a key named like a dict method: the method, as jinja gives it
        ({"keys": 1}, "keys"),
        ({}, "__class__"),  # unsafe: undefined with a SecurityError
        ({}, "__dict__"),
        ({"__dict__": 1}, "__dict__"),
        ({"_private": 1}, "_private"),
        (_Sub(title="item"), "title"),  # a subclass's own attribute
        ("text", "upper"),
        (["a"], "missing"),
    ],
)
def test_attribute_lookup_is_the_sandboxs(obj: object, name: str) -> None:
    from jinja2 import StrictUndefined, Undefined
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    env = build_environment(TEMPLATES)
    sandbox = ImmutableSandboxedEnvironment(undefined=StrictUndefined)
    ours, theirs = env.getattr(obj, name), sandbox.getattr(obj, name)
    if isinstance(theirs, Undefined):
        assert type(ours) is type(theirs)
        assert ours._undefined_name == theirs._undefined_name and ours._undefined_obj is theirs._undefined_obj
        assert ours._undefined_exception is theirs._undefined_exception
        assert ours._undefined_hint == theirs._undefined_hint
    elif callable(theirs):
        assert ours == theirs
    else:
        assert ours is theirs


def _wrappers() -> list[object]:
    """One of each mapping a render hands templates (`worldkit.render.dated.ITEM_FIRST`)."""
    import datetime as dt

    from worldkit.render.dated import DateLog, _Collection, _RecordView, _World

    log = DateLog(dt.date(2025, 1, 1))
    data = {"title": "T", "keys": 1, "_data": "item", "__len__": 2, "get": 3}
    return [
        _RecordView(dict(data), dt.date(2025, 2, 1), dt.date(2025, 1, 1), log),
        _Collection(dict(data), lambda key, value: value, None, log),
        _World(dict(data), None, log),  # type: ignore[arg-type] - no snapshot needed for these keys
    ]


@pytest.mark.parametrize("index", range(3))
@pytest.mark.parametrize("name", ["title", "missing", "keys", "get", "_data", "__len__", "__class__", "_log", "items"])
def test_attribute_lookup_on_the_renders_mappings_is_the_sandboxs(index: int, name: str) -> None:
    from worldkit.render.dated import ITEM_FIRST

    obj = _wrappers()[index]
    assert type(obj) in ITEM_FIRST and not hasattr(obj, "__dict__")  # no attribute but its type's
    test_attribute_lookup_is_the_sandboxs(obj, name)


def test_every_mapping_a_render_hands_templates_is_covered() -> None:
    from worldkit.render.dated import ITEM_FIRST

    assert sorted(type(w).__name__ for w in _wrappers()) == sorted(c.__name__ for c in ITEM_FIRST)

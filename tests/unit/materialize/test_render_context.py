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
    from jinja2.sandbox import ImmutableSandboxedEnvironment
    from jinja2 import StrictUndefined, Undefined

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

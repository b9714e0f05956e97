"""worldkit._model reads field docstrings with one parse per module; the descriptions are pydantic's own."""

from __future__ import annotations

import importlib
import inspect
import json
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pydantic
import pytest
from pydantic._internal import _fields

import worldkit
from worldkit import _model


_DUMP = """
import json, sys
from pathlib import Path
import importlib, pydantic
if sys.argv[1] == "pydantic":
    from pydantic._internal import _fields
    import worldkit._model
    _fields.extract_docstrings_from_cls = worldkit._model._pydantic_lookup
described = {}
for name in sys.argv[2:]:
    module = importlib.import_module(name)
    todo = [c for c in vars(module).values() if isinstance(c, type) and c.__module__ == name]
    while todo:
        cls = todo.pop()
        todo.extend(c for c in vars(cls).values() if isinstance(c, type) and c.__module__ == name)
        if issubclass(cls, pydantic.BaseModel):
            described[name + ":" + cls.__qualname__] = {f: i.description for f, i in cls.model_fields.items()}
print(json.dumps(described, sort_keys=True))
"""


def _modules_using_frozen() -> list[str]:
    root = Path(worldkit.__file__).parent
    return sorted(
        "worldkit." + ".".join(path.relative_to(root).with_suffix("").parts)
        for path in root.rglob("*.py")
        if "from worldkit._model import FROZEN" in path.read_text(encoding="utf-8")
    )


def _descriptions(lookup: str, modules: list[str]) -> dict[str, dict[str, str | None]]:
    done = subprocess.run([sys.executable, "-c", _DUMP, lookup, *modules], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def test_the_lookup_is_installed_on_the_pinned_pydantic():
    assert _fields.extract_docstrings_from_cls is _model.attribute_docstrings


def test_every_field_of_every_model_is_described_as_pydantic_describes_it():
    modules = _modules_using_frozen()
    assert len(modules) >= 25
    ours, theirs = _descriptions("worldkit", modules), _descriptions("pydantic", modules)
    assert ours == theirs
    assert len(ours) > 150
    assert sum(doc is not None for fields in ours.values() for doc in fields.values()) > 500


def test_tool_input_schemas_carry_the_field_docstrings():
    from worldkit.tools.specs import TOOLS

    descriptions = [
        prop.get("description") for tool in TOOLS for prop in tool.as_json()["input_schema"]["properties"].values()
    ]
    assert len(descriptions) > 20 and all(descriptions), "a tool argument lost its description"


def _module_from(source: str, name: str) -> types.ModuleType:
    """A module `name` executed from `source`, with a file linecache can read."""
    module = types.ModuleType(name)
    module.__file__ = f"<{name}>"
    import linecache

    linecache.cache[module.__file__] = (len(source), None, source.splitlines(True), module.__file__)
    sys.modules[name] = module
    try:
        exec(compile(source, module.__file__, "exec"), module.__dict__)
    finally:
        del sys.modules[name]
    return module


SOURCE = textwrap.dedent(
    '''
    from pydantic import BaseModel
    from worldkit._model import FROZEN

    class Outer(BaseModel):
        model_config = FROZEN
        a: int = 1
        """Outer's a."""

        class Inner(BaseModel):
            model_config = FROZEN
            b: str
            """Inner's b."""

    class Twice(BaseModel):
        model_config = FROZEN
        first: int
        """The first definition."""

    FIRST = Twice

    class Twice(BaseModel):
        model_config = FROZEN
        second: int
        """The second definition."""
    '''
)


def test_nested_classes_are_found_by_qualified_name_and_a_shared_name_is_left_to_pydantic(monkeypatch):
    asked: list[str] = []

    def pydantic_lookup(cls, use_inspect=False):
        asked.append(cls.__qualname__)
        return {"second": "from pydantic"}

    monkeypatch.setattr(_model, "_pydantic_lookup", pydantic_lookup)
    module = _module_from(SOURCE, "worldkit._test_docs_module")
    assert module.Outer.model_fields["a"].description == "Outer's a."
    assert module.Outer.Inner.model_fields["b"].description == "Inner's b."
    # two statements define `Twice`: which one a class is cannot be told from its name
    assert asked == ["Twice", "Twice"]
    assert module.Twice.model_fields["second"].description == "from pydantic"


def test_classes_outside_worldkit_and_in_functions_are_left_to_pydantic(monkeypatch):
    asked: list[str] = []
    real = _model._pydantic_lookup

    def pydantic_lookup(cls, use_inspect=False):
        asked.append(cls.__qualname__)
        return real(cls, use_inspect)

    monkeypatch.setattr(_model, "_pydantic_lookup", pydantic_lookup)
    _module_from(SOURCE, "elsewhere_docs_module")
    assert asked == ["Outer.Inner", "Outer", "Twice", "Twice"]

    asked.clear()

    def make():
        class Local(pydantic.BaseModel):
            model_config = _model.FROZEN
            c: int
            """Local's c."""

        return Local

    assert make().model_fields["c"].description == "Local's c."
    assert asked == ["test_classes_outside_worldkit_and_in_functions_are_left_to_pydantic.<locals>.make.<locals>.Local"]


@pytest.mark.parametrize("module", ["worldkit.world.models", "worldkit.materialize.manifest", "worldkit.tools.specs"])
def test_a_module_is_parsed_once(module):
    filename = inspect.getfile(importlib.import_module(module))
    _model._class_nodes.cache_clear()
    cls = next(c for c in vars(importlib.import_module(module)).values() if isinstance(c, type) and issubclass(c, pydantic.BaseModel) and c.__module__ == module)
    _model.attribute_docstrings(cls)
    _model.attribute_docstrings(cls)
    assert _model._class_nodes.cache_info().misses == 1
    assert inspect.getfile(cls) == filename

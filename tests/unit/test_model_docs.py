"""worldkit's models share one base (`worldkit._model.Model`): frozen, no unknown fields, built on
first use, descriptions from field docstrings read as pydantic's `use_attribute_docstrings` reads them."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import pydantic
import pytest
from pydantic._internal._docs_extraction import extract_docstrings_from_cls

import worldkit
from worldkit._model import Model, attribute_docstrings


def _every_model() -> list[type[Model]]:
    for module in pkgutil.walk_packages(worldkit.__path__, "worldkit."):
        if not module.name.endswith(".__main__"):
            importlib.import_module(module.name)
    found, todo = [], [Model]
    while todo:
        for sub in todo.pop().__subclasses__():
            found.append(sub)
            todo.append(sub)
    return found


def test_tool_input_schemas_carry_the_field_docstrings():
    from worldkit.tools.specs import TOOLS

    descriptions = [
        prop.get("description") for tool in TOOLS for prop in tool.as_json()["input_schema"]["properties"].values()
    ]
    assert len(descriptions) > 20 and all(descriptions), "a tool argument lost its description"


def test_every_model_reads_its_field_docstrings_as_pydantic_does():
    models = [m for m in _every_model() if m.__module__.startswith("worldkit.")]
    assert len(models) > 100
    described = 0
    for model in models:
        reference = extract_docstrings_from_cls(model, use_inspect=True)  # pydantic's own reading
        assert attribute_docstrings(model) == reference, model.__qualname__
        for name, doc in reference.items():
            field = model.model_fields.get(name)
            if field is None:  # a documented ClassVar
                continue
            assert field.description is not None, f"{model.__qualname__}.{name} lost its description"
            described += field.description == doc
    assert described > 500


def test_a_frozen_model_is_immutable_refuses_unknown_fields_and_is_described():
    class Example(Model):
        size: int
        """Bytes."""
        colour: str = pydantic.Field("red", description="Said so.")
        """Not this."""

    class Later(Example):
        """Inherits `size`'s description; its own field has its own."""

        depth: int = 0
        """Metres.

            Indented lines are cleaned as `inspect.cleandoc` cleans them."""

    assert Example.model_json_schema()["properties"]["size"]["description"] == "Bytes."
    assert Example.model_json_schema()["properties"]["colour"]["description"] == "Said so."
    later = Later.model_json_schema()["properties"]
    assert later["size"]["description"] == "Bytes."
    assert later["depth"]["description"] == "Metres.\n\nIndented lines are cleaned as `inspect.cleandoc` cleans them."
    with pytest.raises(pydantic.ValidationError):
        Example(size=1, weight=2)
    with pytest.raises(pydantic.ValidationError):
        Example(size=1).size = 2  # type: ignore[misc]


def test_a_model_that_builds_at_once_is_rebuilt_with_its_descriptions():
    class AtOnce(Model):
        model_config = pydantic.ConfigDict(defer_build=False)
        size: int
        """Bytes."""

    assert AtOnce.model_json_schema()["properties"]["size"]["description"] == "Bytes."


def test_a_class_name_defined_in_two_functions_is_not_guessed():
    def first() -> type[Model]:
        class Twin(Model):
            size: int
            """First."""

        return Twin

    def second() -> type[Model]:
        class Twin(Model):
            size: int
            """Second."""

        return Twin

    assert first().model_fields["size"].description is None
    assert second().model_fields["size"].description is None


def test_no_module_spells_the_configuration_again():
    root = Path(worldkit.__file__).parent
    again = [str(path.relative_to(root)) for path in root.rglob("*.py")
             if "use_attribute_docstrings" in path.read_text(encoding="utf-8") and path.name != "_model.py"]
    assert again == []

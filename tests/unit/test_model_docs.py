"""worldkit's models share one configuration (`worldkit._model.FROZEN`): frozen, no unknown fields,
descriptions from field docstrings."""

from __future__ import annotations

from pathlib import Path

import pydantic
import pytest

import worldkit
from worldkit._model import FROZEN


def test_tool_input_schemas_carry_the_field_docstrings():
    from worldkit.tools.specs import TOOLS

    descriptions = [
        prop.get("description") for tool in TOOLS for prop in tool.as_json()["input_schema"]["properties"].values()
    ]
    assert len(descriptions) > 20 and all(descriptions), "a tool argument lost its description"


def test_a_frozen_model_is_immutable_refuses_unknown_fields_and_is_described():
    class Example(pydantic.BaseModel):
        model_config = FROZEN
        size: int
        """Bytes."""

    assert Example.model_json_schema()["properties"]["size"]["description"] == "Bytes."
    with pytest.raises(pydantic.ValidationError):
        Example(size=1, colour="red")
    with pytest.raises(pydantic.ValidationError):
        Example(size=1).size = 2  # type: ignore[misc]


def test_no_module_spells_the_configuration_again():
    root = Path(worldkit.__file__).parent
    again = [str(path.relative_to(root)) for path in root.rglob("*.py")
             if "use_attribute_docstrings" in path.read_text(encoding="utf-8") and path.name != "_model.py"]
    assert again == []

"""The published output schemas say what pydantic's do, with nullable scalars as type lists."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema.validators import validator_for

from worldkit.mcp import results
from worldkit.mcp.results import FileText, SearchResult, output_schema

MODELS = [getattr(results, name) for name in results.__all__ if name != "output_schema"]


def _as_type_lists(schema: Any) -> Any:
    """pydantic's schema with each `anyOf: [{type: T}, {type: null}]` written as `type: [T, null]`."""
    if isinstance(schema, list):
        return [_as_type_lists(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    options = schema.get("anyOf")
    if (isinstance(options, list) and len(options) == 2 and options[1] == {"type": "null"}
            and set(options[0]) == {"type"} and isinstance(options[0]["type"], str)):
        rest = {k: _as_type_lists(v) for k, v in schema.items() if k != "anyOf"}
        return {**rest, "type": [options[0]["type"], "null"]}
    return {k: _as_type_lists(v) for k, v in schema.items()}


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_only_nullable_scalars_are_written_differently(model: Any) -> None:
    assert output_schema(model) == _as_type_lists(model.model_json_schema())


def test_a_nullable_accepts_null_and_its_type_and_nothing_else() -> None:
    schema = output_schema(FileText)
    check = validator_for(schema)(schema)
    text = {"path": "a.md", "offset": 0, "text": "x", "next_offset": None, "total_chars": 1, "sha256": "0" * 64}
    assert check.is_valid(text) and check.is_valid({**text, "next_offset": 1})
    assert not check.is_valid({**text, "next_offset": "1"}) and not check.is_valid({**text, "next_offset": 1.5})
    nested = output_schema(SearchResult)
    match = {"path": "a.md", "line": None, "snippet": "s", "score": 0.5}
    check = validator_for(nested)(nested)
    assert check.is_valid({"query": "q", "mode": "ranked", "matches": [match], "truncated": False})
    assert not check.is_valid({"query": "q", "mode": "ranked", "matches": [{**match, "score": "high"}], "truncated": False})


def test_every_server_publishes_the_schemas_the_models_give_in_copies_of_its_own() -> None:
    """The argument model and both schemas are made once per process; each server's tools carry
    exactly what the spec's models give, and no server shares a schema object with another."""
    from worldkit.mcp.server import _RESULTS, _shapes
    from worldkit.tools.specs import TOOLS

    for spec in TOOLS:
        model, parameters, produces = _shapes(spec)
        again = _shapes(spec)
        assert parameters == spec.args.model_json_schema()
        assert produces == output_schema(_RESULTS[spec.name])
        assert again[0] is model and issubclass(model, spec.args)
        assert again[1] == parameters and again[1] is not parameters
        assert again[2] == produces and again[2] is not produces

"""JSON Schemas of overlay files and of the candidate tool configuration (`worldkit schema`).

A rubric criterion's `check` is parsed through the check registry at load time; here it is
spelled out as a `oneOf` over every registered check type, so editors can complete it.
"""

from __future__ import annotations

from typing import Annotated, Any, Union

from pydantic import Field, TypeAdapter

from worldkit.overlay.checks import CHECKS
from worldkit.overlay.models import Overlay
from worldkit.overlay.toolconfig import ToolConfig


def overlay_schema() -> dict[str, Any]:
    schema = Overlay.model_json_schema()
    union = Annotated[Union[tuple(CHECKS[name] for name in sorted(CHECKS))], Field(discriminator="type")]  # noqa: UP007
    checks = TypeAdapter(union).json_schema(ref_template="#/$defs/{model}")
    defs = schema.setdefault("$defs", {})
    defs.update(checks.pop("$defs", {}))
    defs["BaseCheck"] = {**checks, "title": "Check", "description": "A deterministic check, selected by `type`."}
    claim = defs.get("Claim")
    if claim is not None:  # a claim may be written as its terms alone: one term, or a list of them
        term = claim["properties"]["all"]["items"]
        defs["Claim"] = {"anyOf": [claim, {"type": "string"}, {"type": "number"},
                                   {"type": "array", "minItems": 1, "items": term}]}  # fmt: skip
    return schema


def schemas() -> dict[str, dict[str, Any]]:
    """File name → JSON Schema, for `worldkit schema`."""
    return {
        "overlay.schema.json": overlay_schema(),
        "tool-config.schema.json": ToolConfig.model_json_schema(),
    }

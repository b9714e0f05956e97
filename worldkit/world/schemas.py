"""JSON Schemas of the world files, for editor support (`worldkit schema`)."""

from __future__ import annotations

from typing import Any

from worldkit.world.models import Entities, WorldFile


def world_schemas() -> dict[str, dict[str, Any]]:
    return {
        "world.schema.json": WorldFile.model_json_schema(),
        "world-data.schema.json": Entities.model_json_schema(),
    }

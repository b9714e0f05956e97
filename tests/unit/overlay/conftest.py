"""Overlay test fixtures: in-memory variants of the good fixture overlay."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.fixtures.overlays.paths import GOOD, good_raw
from worldkit.overlay import Overlay
from worldkit.overlay.load import parse_overlay


@pytest.fixture()
def mutated() -> Callable[[Callable[[dict[str, Any]], Any]], Overlay]:
    """The good overlay with an in-memory change, resolved as if it sat beside the good file."""

    def build(change: Callable[[dict[str, Any]], Any]) -> Overlay:
        raw = good_raw()
        change(raw)
        return parse_overlay(raw, GOOD.parent / "in-memory.yaml")

    return build

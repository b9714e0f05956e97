"""`pretty_json` (every record, tool bundle and seat card a projection holds) is byte for byte what
`json.dumps(..., sort_keys=True, indent=2, ensure_ascii=False)` gives, whatever the value."""

from __future__ import annotations

import json
import math
import random
from enum import Enum
from typing import Any

import pytest

from worldkit.canon import pretty_json


def _reference(value: Any) -> str:
    return json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


_TEXT = ["", "a", "é", "\u2028", '"', "\\", "\n\t", "\x00\x1f", "😀", "<&>", "ü" * 3, "key with space"]


def _value(rng: random.Random, depth: int) -> Any:
    pick = rng.randrange(10 if depth < 4 else 6)
    if pick == 0:
        return rng.choice(_TEXT) + str(rng.randrange(100))
    if pick == 1:
        return rng.choice([0, -1, 7, 2**70, -(2**65)])
    if pick == 2:
        return rng.choice([0.0, -0.0, 1.5, 1e100, 1e-300, 3.141592653589793, -2.5e-7])
    if pick == 3:
        return rng.choice([True, False, None])
    if pick in (4, 5):
        return rng.choice(_TEXT)
    if pick in (6, 7):
        return {rng.choice(_TEXT) + str(n): _value(rng, depth + 1) for n in range(rng.randrange(5))}
    items = [_value(rng, depth + 1) for _ in range(rng.randrange(5))]
    return tuple(items) if pick == 8 else items


@pytest.mark.parametrize("seed", range(40))
def test_random_values_match_json(seed: int) -> None:
    value = _value(random.Random(seed), 0)
    assert pretty_json(value) == _reference(value)


class Colour(str, Enum):
    RED = "red"


@pytest.mark.parametrize(
    "value",
    [{}, [], (), {"a": {}, "b": []}, {1: "int key"}, {None: 1}, {"x": Colour.RED}, Colour.RED, {"b": True, "a": 1},
     math.nan, math.inf, -math.inf, {"n": [math.nan, math.inf]}, 1 << 80, "plain"],
)
def test_edge_values_match_json(value: Any) -> None:
    assert pretty_json(value) == _reference(value)


def test_what_json_refuses_is_refused_alike() -> None:
    for value in ({"a": 1, 2: 3}, {"s": {1, 2}}, object()):
        with pytest.raises(TypeError):
            _reference(value)
        with pytest.raises(TypeError):
            pretty_json(value)

"""Bulk background content of the PharmaCo demo world (Riverbend Parenterals).

The loader calls `generate(world, rng)`; this file only wires the parts under `gen/` together.
Each part reads its phrase banks from `gen/banks/*.yaml` and adds raw entities (documents,
records, messages) to a shared context. Determinism: every part draws from its own
`random.Random` seeded from the world's fixed seed and the part's name, so editing one part
never reshuffles another; nothing reads the clock, the environment or unordered collections.
The hand-written entities the tasks rest on live in `data/`; the parts only read their ids
(to keep sequence numbers free) and never change them.
"""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent

# Order matters only where a part uses what an earlier part produced (e.g. minutes list the
# change controls raised by the SOP and quality parts).
PARTS = (
    "sops",
    "equipment",
    "batches",
    "quality",
    "stability",
    "suppliers",
    "meetings",
    "site",
    "library",
    "departments",
    "people_files",
    "comms",
)


def _module(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"_pharmaco_demo_gen_{name}", HERE / "gen" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def generate(world: Any, rng: random.Random) -> dict[str, list[dict[str, Any]]]:
    core = _module("core")
    ctx = core.Context(world=world, root=HERE, seed=rng.getrandbits(64))
    for name in PARTS:
        part = _module(name)
        part.build(ctx, core)
    return ctx.result()

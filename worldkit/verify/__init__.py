"""`worldkit verify`: prove the world, its projections and the staged tasks are what was frozen.

Checks (one class each, `worldkit.verify.checks`) run over a `VerifyContext`; `verify_world` runs
them all, `freeze_world` writes the frozen manifests, `run_seeded` injects the known faults into a
scratch copy, and `run_mutations` runs a random mutation campaign. The checks of one staged folder
(the gate of `run` and `serve`) and the frozen index they read are in `worldkit.frozen`; what a
check reports is `worldkit.check_result.CheckResult`. Nothing here writes outside
its scratch folder except `freeze_world`, which writes `manifests/<world>/`.

The names below are imported on first use: verify's fresh-process rebuilds
(`python -m worldkit.verify.rebuild`) need none of the checks, and would otherwise import them all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from worldkit.verify.frozen import FreezeResult, freeze_world
    from worldkit.verify.runner import VerifyReport, open_context, verify_world

_WHERE = {
    "FreezeResult": "worldkit.verify.frozen",
    "freeze_world": "worldkit.verify.frozen",
    "VerifyReport": "worldkit.verify.runner",
    "open_context": "worldkit.verify.runner",
    "verify_world": "worldkit.verify.runner",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "FreezeResult",
    "VerifyReport",
    "freeze_world",
    "open_context",
    "verify_world",
]

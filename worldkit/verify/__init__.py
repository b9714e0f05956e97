"""`worldkit verify`: prove the world, its projections and the staged tasks are what was frozen.

Checks (one class each, `worldkit.verify.checks`) run over a `VerifyContext`; `verify_world` runs
them all, `freeze_world` writes the frozen manifests, `run_seeded` injects the known faults into a
scratch copy, and `run_mutations` runs a random mutation campaign. The checks of one staged folder
(the gate of `run` and `serve`) and the frozen index they read are in `worldkit.frozen`; what a
check reports is `worldkit.check_result.CheckResult`. Nothing here writes outside
its scratch folder except `freeze_world`, which writes `manifests/<world>/`.
"""

from worldkit.verify.frozen import FreezeResult, freeze_world
from worldkit.verify.runner import VerifyReport, open_context, verify_world

__all__ = [
    "FreezeResult",
    "VerifyReport",
    "freeze_world",
    "open_context",
    "verify_world",
]

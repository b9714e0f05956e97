"""`worldkit verify`: prove the world, its projections and the staged tasks are what was frozen.

Checks (one class each, `worldkit.verify.checks`) run over a `VerifyContext`; `verify_world` runs
them all, `verify_workspace` checks one staged folder against its manifest (the run command's
gate), `freeze_world` writes the frozen manifests, `run_seeded` injects the known faults into a
scratch copy, and `run_mutations` runs a random mutation campaign. Nothing here writes outside
its scratch folder except `freeze_world`, which writes `manifests/<world>/`.
"""

from worldkit.check_result import CheckResult, Item
from worldkit.frozen.index import FrozenIndex, default_manifest_dir, read_index
from worldkit.frozen.workspace import verify_workspace
from worldkit.verify.frozen import FreezeResult, freeze_world
from worldkit.verify.runner import VerifyReport, open_context, verify_world

__all__ = [
    "CheckResult",
    "FreezeResult",
    "FrozenIndex",
    "Item",
    "VerifyReport",
    "default_manifest_dir",
    "freeze_world",
    "open_context",
    "read_index",
    "verify_workspace",
    "verify_world",
]

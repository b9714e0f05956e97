"""Task overlays: laid on a fixed projection, split into sealed candidate and verifier packages.

Library first; `worldkit overlay new|check|apply|freeze|pin` are thin adapters over these
functions, and `run`, `verify` and `serve` call them too. Nothing here changes a projection.
"""

from worldkit.overlay.apply import (
    CandidateManifest,
    PackageResult,
    PackageSummary,
    VerifierManifest,
    apply_overlay,
    diff_candidate,
)
from worldkit.overlay.author import (
    FreezeResult,
    OverlayLock,
    PinResult,
    freeze_overlay,
    new_overlay,
    pin_overlay,
    read_lock,
)
from worldkit.overlay.changes import Change, ChangeSpec, ProhibitedChange, observed_changes
from worldkit.overlay.checks import CHECKS, BaseCheck, Check, register_check
from worldkit.overlay.context import CheckResult, GradingContext
from worldkit.overlay.errors import OverlayProblems, StaleFingerprint
from worldkit.overlay.grading import evaluate_rubric, replay_actions
from worldkit.overlay.leaks import LEAK_MIN_CHARS, Leak, find_leaks, verifier_items
from worldkit.overlay.load import (
    find_overlays,
    load_overlay,
    overlay_digest,
    overlay_search_path,
    overlay_world,
    reference_bytes,
    resolve_overlay,
)
from worldkit.overlay.models import (
    Criterion,
    Curation,
    Deliverable,
    EvidenceItem,
    OracleAction,
    Overlay,
    PacketItem,
    ReferenceFile,
    ReferenceSolution,
    ReviewedOverlap,
    SeedFile,
    SourcePointer,
    Truth,
)
from worldkit.overlay.problems import CheckReport, Problem, check_overlay
from worldkit.overlay.toolconfig import PermittedChange, SendMessages, ToolConfig, UpdateRecords, WriteFiles
from worldkit.overlay.view import ProjectionView, ResolvedItem

__all__ = [
    "CHECKS",
    "LEAK_MIN_CHARS",
    "BaseCheck",
    "CandidateManifest",
    "Change",
    "ChangeSpec",
    "Check",
    "CheckReport",
    "CheckResult",
    "Criterion",
    "Curation",
    "Deliverable",
    "EvidenceItem",
    "FreezeResult",
    "GradingContext",
    "Leak",
    "OracleAction",
    "Overlay",
    "OverlayLock",
    "OverlayProblems",
    "PackageResult",
    "PackageSummary",
    "PacketItem",
    "PermittedChange",
    "PinResult",
    "Problem",
    "ProhibitedChange",
    "ProjectionView",
    "ReferenceFile",
    "ReferenceSolution",
    "ResolvedItem",
    "ReviewedOverlap",
    "SeedFile",
    "SendMessages",
    "SourcePointer",
    "StaleFingerprint",
    "ToolConfig",
    "Truth",
    "UpdateRecords",
    "VerifierManifest",
    "WriteFiles",
    "apply_overlay",
    "check_overlay",
    "diff_candidate",
    "evaluate_rubric",
    "find_leaks",
    "find_overlays",
    "freeze_overlay",
    "load_overlay",
    "new_overlay",
    "observed_changes",
    "overlay_digest",
    "overlay_search_path",
    "overlay_world",
    "pin_overlay",
    "read_lock",
    "reference_bytes",
    "register_check",
    "replay_actions",
    "resolve_overlay",
    "verifier_items",
]

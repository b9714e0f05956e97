"""(world, rev, date, seat) → a digested projection on disk."""

from worldkit.materialize.manifest import Entry, Manifest, TreeDiff, diff_tree, read_manifest
from worldkit.materialize.project import PlannedFile, Projection, plan_projection
from worldkit.materialize.write import ProjectionResult, materialize, parse_date

__all__ = [
    "Entry",
    "Manifest",
    "PlannedFile",
    "Projection",
    "ProjectionResult",
    "TreeDiff",
    "diff_tree",
    "materialize",
    "parse_date",
    "plan_projection",
    "read_manifest",
]

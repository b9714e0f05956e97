"""Campaigns: a designed experiment (tasks × agents × conditions × repeats) run exactly once.

`design` parses the YAML design, `plan` expands it into the seeded, interleaved schedule,
`claims` keeps who runs what in the store, `executor` runs the plan with worker processes
(resumable after kill -9, shareable across hosts through PostgreSQL) and `status` reports it.
May import `run`, `agents`, `grade`, `record` and below; never `analysis`, `report`, `verify`,
`interop` or the CLI.
"""

from worldkit.campaign.design import (
    AgentEntry,
    CampaignDesign,
    Conditions,
    InvalidDesign,
    JudgeEntry,
    load_design,
)
from worldkit.campaign.plan import (
    CampaignPlan,
    PlannedRun,
    PlannedTask,
    expand,
    plan_bytes,
)

__all__ = [
    "AgentEntry",
    "CampaignDesign",
    "CampaignPlan",
    "Conditions",
    "InvalidDesign",
    "JudgeEntry",
    "PlannedRun",
    "PlannedTask",
    "expand",
    "load_design",
    "plan_bytes",
]

"""One run: an agent working a task through the seat's tools, captured, graded and recorded.

- `runner`: `worldkit run` — stage a task (after `verify`), serve the seat, run the agent, capture,
  grade (`worldkit.grade`), write the execution record (`worldkit.record`);
- `infoorg_packet`: the same for an InfoOrgBench packet (the organizer served, the tree scored);
- `folder`: the run folder a run leaves on disk, and what `worldkit grade RUN_DIR` reads;
- `regrade`: grading without running an agent (a workspace, a run folder, a finished run again);
- `batch`: judging the semantic criteria of many finished runs in one blinded batch;
- `logcheck`: a finished run's event log checked against its anchor;
- `answer_key`: the answer key gated by evidence that the runner gives the `searcher` agent;
- `wrong_answers`: the reference deliverable with a criterion spoiled (its wrong answers).

May import `agents`, `grade`, `record`, `mcp` and below; never `campaign`, `analysis`, `report`,
`verify`, `interop` or the CLI.

Modules that lived here before the layout split (agents, grading, analysis, campaigns, reports)
are still importable under their old names for one release, with a `DeprecationWarning` naming
the new one (`_MOVED`).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from types import ModuleType

# old module name -> where it lives now (worldkit 0.1 → 0.2; the aliases go in 0.3)
_MOVED: dict[str, str] = {
    "worldkit.run.access": "worldkit.grade.access",
    "worldkit.run.agents": "worldkit.agents.registry",
    "worldkit.run.analysis": "worldkit.analysis",
    "worldkit.run.analysis.analyze": "worldkit.analysis.analyze",
    "worldkit.run.analysis.bootstrap": "worldkit.analysis.bootstrap",
    "worldkit.run.analysis.executions": "worldkit.analysis.executions",
    "worldkit.run.analysis.gee": "worldkit.analysis.gee",
    "worldkit.run.analysis.models": "worldkit.analysis.models",
    "worldkit.run.analysis.overlay_packets": "worldkit.analysis.overlay_packets",
    "worldkit.run.analysis.packets": "worldkit.analysis.packets",
    "worldkit.run.analysis.raw": "worldkit.analysis.raw",
    "worldkit.run.analysis.refit": "worldkit.analysis.refit",
    "worldkit.run.analysis_tables": "worldkit.report.analysis_tables",
    "worldkit.run.campaign": "worldkit.campaign",
    "worldkit.run.campaign.claims": "worldkit.campaign.claims",
    "worldkit.run.campaign.design": "worldkit.campaign.design",
    "worldkit.run.campaign.executor": "worldkit.campaign.executor",
    "worldkit.run.campaign.plan": "worldkit.campaign.plan",
    "worldkit.run.campaign.status": "worldkit.campaign.status",
    "worldkit.run.campaign.worker": "worldkit.campaign.worker",
    "worldkit.run.chat": "worldkit.chat",
    "worldkit.run.export_ledgers": "worldkit.analysis.export",
    "worldkit.run.figures": "worldkit.report.figures",
    "worldkit.run.grade": "worldkit.run.regrade",
    "worldkit.run.grading": "worldkit.grade.grading",
    "worldkit.run.infoorg_agent": "worldkit.agents.infoorg",
    "worldkit.run.infoorg_report": "worldkit.report.infoorg",
    "worldkit.run.judge": "worldkit.grade.judge",
    "worldkit.run.ledgers": "worldkit.analysis.ledgers",
    "worldkit.run.llm_judge": "worldkit.grade.llm_judge",
    "worldkit.run.openai_agent": "worldkit.agents.openai_agent",
    "worldkit.run.provenance": "worldkit.report.provenance",
    "worldkit.run.record": "worldkit.record.execution",
    "worldkit.run.report": "worldkit.report.build",
    "worldkit.run.report_html": "worldkit.report.html",
    "worldkit.run.results": "worldkit.record.results",
    "worldkit.run.session": "worldkit.agents.session",
    "worldkit.run.stored_records": "worldkit.report.records",
}


class _MovedLoader(importlib.abc.Loader):
    def __init__(self, new: str) -> None:
        self.new = new

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        warnings.warn(f"{spec.name} moved to {self.new}; import it from there (the old name goes "
                      "in worldkit 0.3)", DeprecationWarning, stacklevel=2)
        return importlib.import_module(self.new)

    def exec_module(self, module: ModuleType) -> None:
        """The module is the new one, already executed."""


class _MovedFinder(importlib.abc.MetaPathFinder):
    """Finds an old module name and hands back the module under its new name (one object)."""

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> importlib.machinery.ModuleSpec | None:
        new = _MOVED.get(fullname)
        if new is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _MovedLoader(new), is_package=fullname in _PACKAGES)


_PACKAGES = {"worldkit.run.analysis", "worldkit.run.campaign"}

if not any(isinstance(finder, _MovedFinder) for finder in sys.meta_path):
    sys.meta_path.insert(0, _MovedFinder())

"""Write worldkit runs as a WorkWorlds ledger release (`criterion_results.csv`,
`run_ledger.csv`, `task_mapping.csv`), so the study's own analysis code can read them.

Columns are the public artifact's. Conditions take the study's names (`full` → `world_first`,
`curated:NAME` → `task_first` with environment `task-first NAME`); every row carries the
SHA-256 of its own string values (sorted keys, compact JSON, `*_sha256` fields left out), as
the release does, so `worldkit report --ledgers` verifies the files it reads back. A run of a
campaign (its record under a folder holding the campaign's `plan.json`, or read from a store
holding the campaign's plan; its run id the plan's) gets its collection `block` and
`scheduled_order_within_task_agent` from the plan, whose digest is checked; a record whose task, agent or condition differs from its planned run is refused.
What a worldkit run does not record is left empty (the schedule of runs made outside a
campaign, the model version), never invented; an unknown access label's reason is `other`.
Failed runs (no verdicts) are left out. Writes only into a new or empty directory.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from pathlib import Path

from worldkit.analysis.ledgers import CRITERION_FILE, RUN_FILE, TASK_FILE
from worldkit.campaign.plan import DIGEST_FILE, PLAN_FILE, CampaignPlan, PlannedRun
from worldkit.canon import sha256_bytes
from worldkit.errors import UsageError
from worldkit.record.execution import ExecutionRecord, LoadedRecord, check_unique
from worldkit.record.results import InvalidResults

__all__ = ["CRITERION_COLUMNS", "RUN_COLUMNS", "export_ledgers"]

CRITERION_COLUMNS = ("run_id", "task_id", "agent_id", "condition", "environment_instance",
                     "criterion_id", "access_label", "access_unknown_reason", "pass",
                     "grader_error", "grading_route", "criterion_record_sha256")
RUN_COLUMNS = ("run_id", "task_id", "agent_id", "condition", "environment_instance", "block",
               "scheduled_order_within_task_agent", "status", "criterion_count",
               "accessed_count", "not_accessed_count", "unknown_count", "pass_count",
               "model_version_string", "files_inspected", "tool_calls",
               "tool_calls_before_first_access", "run_record_sha256")


def _digest(row: dict[str, str]) -> str:
    body = {key: value for key, value in row.items() if not key.endswith("_sha256")}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _condition(record: ExecutionRecord) -> tuple[str, str]:
    kind, _, packet = record.condition.partition(":")
    if kind == "full":
        return "world_first", "world-first"
    return "task_first", f"task-first {packet}" if packet else "task-first"


def _number(value: int | None) -> str:
    return "" if value is None else str(value)


def _model(record: ExecutionRecord) -> str:
    config = getattr(record, "agent_config", None) or {}
    for value in (config.get("model") if isinstance(config, dict) else None,
                  record.agent_result.get("model")):
        if value:
            return str(value)
    return ""


class _Plans:
    """The campaign plan each record's folder belongs to (read once per campaign folder)."""

    def __init__(self) -> None:
        self._plans: dict[Path, CampaignPlan | None] = {}
        self._stored: dict[bytes, CampaignPlan] = {}

    def _plan(self, folder: Path) -> CampaignPlan | None:
        if folder not in self._plans:
            plan = None
            if (folder / PLAN_FILE).is_file():
                data = (folder / PLAN_FILE).read_bytes()
                try:
                    recorded = (folder / DIGEST_FILE).read_text(encoding="utf-8").split()[0]
                except (FileNotFoundError, IndexError):
                    recorded = ""
                if sha256_bytes(data) != recorded:
                    raise InvalidResults(
                        f"the campaign plan does not match its digest ({DIGEST_FILE}); it was "
                        "modified — export from the campaign folder as `worldkit campaign run` "
                        "left it", file=folder / PLAN_FILE)
                plan = CampaignPlan.model_validate_json(data)
            self._plans[folder] = plan
        return self._plans[folder]

    def planned(self, loaded: LoadedRecord) -> PlannedRun | None:
        """The planned run the record executes, if its folder is inside a campaign's (or the
        store it came from holds its campaign's plan)."""
        if loaded.path is None:
            if loaded.campaign_plan is None:
                return None
            data = loaded.campaign_plan
            if data not in self._stored:
                self._stored[data] = CampaignPlan.model_validate_json(data)
            return _planned_run(self._stored[data], loaded)
        for folder in loaded.path.resolve().parents:
            plan = self._plan(folder)
            if plan is not None:
                return _planned_run(plan, loaded)
        return None


def _planned_run(plan: CampaignPlan, loaded: LoadedRecord) -> PlannedRun | None:
    record = loaded.record
    found = re.match(rf"{re.escape(plan.campaign_id)}-(\d+)\.", record.run_id)
    if found is None:
        return None  # a run of its own, kept in a campaign folder
    seq = int(found.group(1))
    run = plan.runs[seq - 1] if 1 <= seq <= len(plan.runs) else None
    if run is None or (run.task, run.agent, run.condition) != (
            record.task, record.agent, record.condition):
        raise InvalidResults(
            f"run {record.run_id} is not campaign {plan.campaign_id}'s planned run "
            f"{seq} ({'no such run' if run is None else f'{run.task}, {run.agent}, {run.condition}'}); "
            "remove the record or export it apart from the campaign",
            file=loaded.path or loaded.origin, field="run_id")
    return run


def _rows(record: ExecutionRecord, planned: PlannedRun | None = None
          ) -> tuple[list[dict[str, str]], dict[str, str]]:
    condition, environment = _condition(record)
    key = {"run_id": record.run_id, "task_id": record.task, "agent_id": record.agent,
           "condition": condition, "environment_instance": environment}
    criteria = []
    for criterion in sorted(record.criteria, key=lambda c: c.id):
        row = {
            **key,
            "criterion_id": criterion.id,
            "access_label": criterion.access,
            "access_unknown_reason": "other" if criterion.access == "unknown" else "",
            "pass": str(criterion.result == "pass"),
            # Anything without a verdict reads back as ungraded: the release's only way to
            # carry "no verdict" is a grading error.
            "grader_error": str(criterion.result not in ("pass", "fail")),
            "grading_route": criterion.route,
        }
        row["criterion_record_sha256"] = _digest(row)
        criteria.append(row)
    labels = [c.access for c in record.criteria]
    run = {
        **key,
        "block": "" if planned is None else str(planned.block),
        "scheduled_order_within_task_agent": "" if planned is None else str(planned.order),
        "status": "completed",
        "criterion_count": str(len(record.criteria)),
        "accessed_count": str(labels.count("accessed")),
        "not_accessed_count": str(labels.count("not_accessed")),
        "unknown_count": str(labels.count("unknown")),
        "pass_count": str(sum(c.result == "pass" for c in record.criteria)),
        "model_version_string": _model(record),
        "files_inspected": _number(record.stats.inspections),
        "tool_calls": _number(record.stats.tool_calls),
        "tool_calls_before_first_access": _number(record.stats.tool_calls_before_first_access),
    }
    run["run_record_sha256"] = _digest(run)
    return criteria, run


def _csv(columns: tuple[str, ...], rows: list[dict[str, str]]) -> bytes:
    out = io.StringIO(newline="")
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\r\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue().encode("utf-8")


def export_ledgers(records: list[LoadedRecord], out: Path,
                   task_labels: dict[str, str] | None = None) -> dict[str, int]:
    """Write the records as ledgers in `out`; returns rows written per file."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UsageError(f"{out} exists and is not an empty directory; pass --out a new "
                         "directory (the export never overwrites)")
    criteria: list[dict[str, str]] = []
    runs_out: list[dict[str, str]] = []
    plans = _Plans()
    for loaded in check_unique(records):
        record = loaded.record
        if getattr(record, "status", "completed") != "completed":
            continue
        rows, run = _rows(record, plans.planned(loaded))
        criteria += rows
        runs_out.append(run)
    runs_out.sort(key=lambda r: r["run_id"])
    criteria.sort(key=lambda r: (r["run_id"], r["criterion_id"]))
    out.mkdir(parents=True, exist_ok=True)
    (out / CRITERION_FILE).write_bytes(_csv(CRITERION_COLUMNS, criteria))
    (out / RUN_FILE).write_bytes(_csv(RUN_COLUMNS, runs_out))
    written = {CRITERION_FILE: len(criteria), RUN_FILE: len(runs_out)}
    tasks = sorted({r["task_id"] for r in runs_out})
    labels = task_labels or {}
    if tasks and all(task in labels for task in tasks):
        (out / TASK_FILE).write_bytes(_csv(("task_id", "task_label"),
                                           [{"task_id": t, "task_label": labels[t]} for t in tasks]))
        written[TASK_FILE] = len(tasks)
    return written

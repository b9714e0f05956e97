"""Grading without running an agent: a workspace against a task, a run folder, a finished run again.

- `grade_workspace`: any workspace folder against a task (`worldkit grade --overlay T --workspace
  DIR`). The task is staged afresh; with a log (`--log RUN_ID`), its state changes and evidence
  access are read from the store; without one, mail and record changes are unknown (none) and
  every access label is `unknown`.
- `grade_folder`: a run folder (`worldkit grade RUN_DIR`, see `worldkit.run.folder`) into an
  execution record written beside it.
- `regrade_run`: a finished run again from its folder and record (`worldkit regrade`); without a
  judge, the recorded semantic verdicts are kept, with one they are judged again.

All three use `worldkit.grade.grading`, as `worldkit run` does. None trusts the folder: its task is
resolved by id and digest on worldkit's own path (never from a path it names, never by running
code it carries), the staged package must pass its workspace check, the log's
chain must be intact and the workspace must be what its logged writes produce.
"""

from __future__ import annotations

import tempfile
import uuid
from pathlib import Path
from typing import Any

from worldkit.errors import CheckFailed, LogTampered, UsageError
from worldkit.grade.grading import Grades, build_record, capture, grade_captured
from worldkit.grade.judge import Judge
from worldkit.overlay import apply_overlay, load_overlay, resolve_overlay
from worldkit.overlay.models import Overlay
from worldkit.record.execution import ExecutionRecord, read_record, write_record
from worldkit.run.folder import RunFolder, RunPaths, read_run_folder, resolve_run_task

__all__ = ["grade_folder", "grade_workspace", "load_run_overlay", "read_log", "record_claims", "regrade_run"]


def read_log(store_url: str | None, run_id: str, seat: str, *, expected_head: str | None = None) -> list[dict[str, Any]]:
    """A run's events from the store after checking its chain; the run must act as `seat`."""
    from worldkit.store import Store, read_events
    from worldkit.store.chain import require_intact

    if store_url is not None and "***" in store_url:
        raise UsageError(f"the store URL {store_url} has its password masked; pass --store with the full URL")
    with Store.open(store_url, create=False) as store:
        report = require_intact(store, run_id, expected_head=expected_head)
        if report.seat != seat:
            raise CheckFailed(f"log run {run_id} acts as seat {report.seat}, but the task is for seat {seat}; "
                              "pass the run id of a session on this task")  # fmt: skip
        return [e.model_dump(mode="json") for e in read_events(store, run_id)]


def load_run_overlay(root: Path, named: dict[str, Any], where: Path | None = None) -> Overlay:
    """The overlay a run folder was staged from, resolved by id and digest on worldkit's own path;
    refused (one line naming what differs) if what `named` or package.json claims does not match it.
    No path the folder carries is opened (`worldkit.run.folder.resolve_run_task`)."""
    return resolve_run_task(root, named, where).overlay


def _require_settled(workspace: Path, run_id: str | None) -> None:
    """Refuse a workspace a killed seat server left a staged write in: only its log can settle it."""
    from worldkit.mcp.confine import leftover_temp_files

    left = leftover_temp_files(workspace)
    if left:
        run = run_id or "RUN"
        raise UsageError(
            f"workspace {workspace} holds {len(left)} staged write(s) of a killed seat server ({', '.join(left[:3])}"
            f"{', …' if len(left) > 3 else ''}); settle them with the run's log first: "
            f"`worldkit log recover {run} --workspace {workspace} --store URL`, then grade again"
        )


def grade_workspace(
    overlay_ref: str | Path | Overlay,
    workspace: Path,
    *,
    condition: str = "full",
    log: str | None = None,
    store_url: str | None = None,
    judge: Judge | None = None,
) -> ExecutionRecord:
    """Grade `workspace` against the task (see module doc); the record is returned, not written."""
    overlay = overlay_ref if isinstance(overlay_ref, Overlay) else load_overlay(resolve_overlay(overlay_ref))
    workspace = Path(workspace)
    if not workspace.is_dir():
        raise UsageError(f"--workspace {workspace} is not a folder; pass the folder holding the deliverables")
    _require_settled(workspace, log)
    events = read_log(store_url, log, overlay.seat) if log else None
    with tempfile.TemporaryDirectory(prefix="worldkit-grade-") as tmp:
        package = apply_overlay(overlay, Path(tmp) / "package", condition)
        captured = capture(overlay, package.candidate, workspace, events)
        grades = grade_captured(captured, judge)
        return build_record(
            captured, grades, run_id=log or f"grade-{uuid.uuid4().hex[:12]}", agent="external", condition=condition,
            agent_config={"id": "external"}, package_summary=package.summary(),
        )  # fmt: skip


def grade_folder(
    run_dir: Path,
    *,
    judge: Judge | None = None,
    store_url: str | None = None,
    force: bool = False,
) -> ExecutionRecord:
    """Grade a run folder into `RUN_DIR/execution-record.json` (refusing to replace one unless `force`)."""
    from worldkit.run.runner import check_staged

    paths = RunPaths(Path(run_dir).absolute())
    folder: RunFolder = read_run_folder(paths.root)
    if paths.record.exists() and not force:
        raise UsageError(f"{paths.record} exists: the run is graded already; `worldkit regrade {paths.root}` grades it again")
    overlay = load_run_overlay(paths.root, _claims(folder))
    check_staged(paths.candidate, overlay=overlay)
    _require_settled(paths.workspace, folder.run_id)
    store = store_url or folder.store
    events = read_log(store, folder.run_id, folder.seat) if store else None
    anchor = _folder_anchor(paths.root, folder.run_id, events) if events is not None else None
    captured = capture(overlay, paths.candidate, paths.workspace, events)
    grades = grade_captured(captured, judge)
    # What the agent reported is not graded; a replaced record keeps it.
    previous = read_record(paths.record).agent_result if paths.record.exists() else {}
    record = build_record(captured, grades, run_id=folder.run_id, agent=folder.agent, condition=folder.condition,
                          agent_config=folder.agent_config or {"id": folder.agent},
                          agent_result=previous)  # fmt: skip
    if anchor is not None:
        record = record.model_copy(update={"log_anchor": anchor.model_dump(mode="json", exclude_none=True)})
    write_record(record, paths.record)
    return record


def _claims(folder: RunFolder) -> dict[str, Any]:
    """What run.json says about the task (each must equal package.json's and the resolved overlay's)."""
    return {"overlay": folder.overlay, "overlay_sha256": folder.overlay_sha256, "seat": folder.seat,
            "condition": folder.condition}  # fmt: skip


def record_claims(record: ExecutionRecord) -> dict[str, Any]:
    """What an execution record says about its task."""
    return {"overlay": record.task, "overlay_sha256": str(record.inputs.get("overlay_sha256") or ""),
            "seat": record.inputs.get("seat"), "condition": record.condition}  # fmt: skip


def _folder_anchor(root: Path, run_id: str, events: list[dict[str, Any]]) -> Any:
    """The run folder's log anchor, checked against the stored events: a graded log must end
    at the head the server anchored (a log cut short or rewritten after the session is refused)."""
    from worldkit.store import ANCHOR_FILENAME, read_anchor, verify_exported

    anchor_file = root / ANCHOR_FILENAME
    if not anchor_file.exists():
        raise LogTampered(
            f"run folder {root} has no {ANCHOR_FILENAME}: the log's head cannot be checked; "
            "serve the session with `worldkit serve --overlay T --out DIR`, which anchors it there"
        )
    anchor = read_anchor(anchor_file)
    if anchor.run_id != run_id:
        raise LogTampered(f"{anchor_file} anchors run {anchor.run_id}, but the run folder is run {run_id}")
    report = verify_exported(events, anchor)
    if not report.ok:
        raise LogTampered(f"the stored log of run {run_id} against {anchor_file}: {report.message}")
    return anchor


def regrade_run(
    run_dir: Path, judge: Judge | None = None, *, store_url: str | None = None
) -> tuple[ExecutionRecord, Grades]:
    """Grade a finished run again from disk: its record's trajectory replayed onto the staged
    pre-task package, the workspace as captured. Returns the record and the new grades.

    The log is checked first (`worldkit.run.logcheck`): the trajectory against the run folder's
    anchor and, with `store_url`, the stored log too; a log cut short, rewritten or recomputed
    is refused (`LogTampered`)."""
    from worldkit.mcp.state import scan_workspace
    from worldkit.run.logcheck import check_run_log

    paths = RunPaths(Path(run_dir))
    record = read_record(paths.record)
    if record.status == "failed":
        raise UsageError(f"run {record.run_id} failed ({record.error}); there is nothing to grade — re-run the task")
    if scan_workspace(paths.workspace) != record.workspace_after:
        raise CheckFailed(f"workspace {paths.workspace} no longer matches the execution record; it was modified after the run")
    overlay = load_run_overlay(paths.root, record_claims(record), paths.record)
    trajectory = check_run_log(paths.root, record, store_url)
    captured = capture(overlay, paths.candidate, paths.workspace, trajectory)
    kept = {c.id: c for c in record.criteria if c.route == "semantic"} if judge is None else None
    return record, grade_captured(captured, judge, keep_semantic=kept)

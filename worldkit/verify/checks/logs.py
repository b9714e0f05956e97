"""Event-log integrity: every run of this world's seats in the store has an intact hash chain,
and every run whose anchor is given (`--runs DIR`) ends exactly where its anchor says."""

from __future__ import annotations

from pathlib import Path

from worldkit.check_result import CheckResult, Item
from worldkit.errors import WorldkitError
from worldkit.verify.checks import BaseCheck, register
from worldkit.verify.context import VerifyContext


@register
class EventLogs(BaseCheck):
    id = "event-logs"
    purpose = (
        "Every run logged for this world's seats has an intact, gapless hash chain (append-only log), "
        "and each anchored run (log-anchor.json under --runs) holds its anchored head, signed if a key is set."
    )
    fix = (
        "The named run's log was edited, reordered, cut short or recomputed: do not grade it; re-run the task "
        "(`worldkit log verify RUN --run-dir DIR` shows the event)."
    )
    cost = 1

    def run(self, ctx: VerifyContext) -> CheckResult:
        if ctx.store is None:
            return self.skip("no store given; pass --store URL to check the runs' event logs")
        from worldkit.store import Store, list_runs, verify_chain

        seats = {seat for rev in ctx.package.revision_names for seat in ctx.package.revision(rev).seats}
        items: list[Item] = []
        checked = anchored = 0
        with Store.open(ctx.store, create=False) as store:
            stored = {run.run_id: run for run in list_runs(store)}
            anchors = _anchors(getattr(ctx, "runs", None), items, store)
            for run in stored.values():
                if run.seat not in seats:
                    continue
                checked += 1
                anchor = anchors.get(run.run_id)
                anchored += anchor is not None
                report = verify_chain(store, run.run_id, anchor=anchor)
                if not report.ok:
                    problem = report.problem
                    items.append(Item(kind=problem.kind if problem else "broken", seat=run.seat,
                                      path=f"run {run.run_id} event {problem.seq if problem else '?'}",
                                      detail=report.message))
        for run_id, anchor in sorted(anchors.items()):
            if run_id not in stored and anchor.seat in seats:
                items.append(Item(kind="missing", seat=anchor.seat, path=f"run {run_id}",
                                  detail=f"the {anchor.describe()} names a run this store does not hold: "
                                         "its log was removed, or this is not the run's store"))
        return self.outcome(items, runs=checked, anchored=anchored)


def _run_folders(runs: Path) -> list[Path]:
    """Every folder under `runs` that a run wrote: it holds run.json, a record or an anchor."""
    from worldkit.record.execution import RECORD_FILENAME
    from worldkit.run.folder import RUN_FILE
    from worldkit.store import ANCHOR_FILENAME

    found = {p.parent for name in (ANCHOR_FILENAME, RECORD_FILENAME, RUN_FILE) for p in Path(runs).rglob(name)}
    return sorted(found)


def _anchors(runs: Path | None, items: list[Item], store: object) -> dict[str, object]:
    """The anchor of each run folder under `runs`, looked for everywhere it was written (the
    folder, its record, the anchors folder, the record stored with the log: see
    `worldkit.run.logcheck.anchor_copies`); every problem with the copies is an item."""
    from worldkit.canon import strict_loads
    from worldkit.mcp.session import default_anchor
    from worldkit.run.logcheck import anchor_copies
    from worldkit.store import read_records

    found: dict[str, object] = {}
    if runs is None:
        return found
    try:
        stored = {r.run_id: strict_loads(r.record_json) for r in read_records(store)}  # type: ignore[arg-type]
    except (WorldkitError, ValueError):
        stored = {}  # a tampered stored record is the report's to refuse; the logs are checked here
    anchors_dir = default_anchor("RUN", None).parent
    for folder in _run_folders(runs):
        try:
            copies = anchor_copies(folder, anchors_dir=anchors_dir, stored=stored)
        except WorldkitError as error:
            items.append(Item(kind="anchor_invalid", path=str(folder), detail=error.message))
            continue
        for problem in copies.problems:
            items.append(Item(kind="anchor_missing" if "gone" in problem or "no log anchor" in problem else "anchor_invalid",
                              path=str(folder), detail=problem))  # fmt: skip
        anchor = copies.anchor()
        if anchor is not None:
            found[anchor.run_id] = anchor
    return found

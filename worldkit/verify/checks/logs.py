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
        anchors = _anchors(getattr(ctx, "runs", None), items)
        checked = anchored = 0
        with Store.open(ctx.store, create=False) as store:
            stored = {run.run_id: run for run in list_runs(store)}
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


def _anchors(runs: Path | None, items: list[Item]) -> dict[str, object]:
    """Anchors by run id from every run folder under `runs` (its record's copy must agree)."""
    from worldkit.record.execution import RECORD_FILENAME, read_record
    from worldkit.run.logcheck import run_anchor
    from worldkit.store import ANCHOR_FILENAME, read_anchor

    found: dict[str, object] = {}
    if runs is None:
        return found
    for path in sorted(Path(runs).rglob(ANCHOR_FILENAME)):
        try:
            record = path.parent / RECORD_FILENAME
            anchor = run_anchor(path.parent, read_record(record)) if record.is_file() else read_anchor(path)
        except WorldkitError as error:
            items.append(Item(kind="anchor_invalid", path=str(path), detail=error.message))
            continue
        found[anchor.run_id] = anchor
    return found

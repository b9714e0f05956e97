"""Event-log integrity: every run of this world's seats in the store has an intact hash chain."""

from __future__ import annotations

from worldkit.verify.checks import BaseCheck, register
from worldkit.verify.context import VerifyContext
from worldkit.verify.result import CheckResult, Item


@register
class EventLogs(BaseCheck):
    id = "event-logs"
    purpose = "Every run logged for this world's seats has an intact, gapless hash chain (append-only log)."
    fix = "The named run's log was edited, reordered or cut: do not grade it; re-run the task (`worldkit log verify RUN` shows the event)."
    cost = 1

    def run(self, ctx: VerifyContext) -> CheckResult:
        if ctx.store is None:
            return self.skip("no store given; pass --store URL to check the runs' event logs")
        from worldkit.store import Store, list_runs, verify_chain

        seats = {seat for rev in ctx.package.revision_names for seat in ctx.package.revision(rev).seats}
        items: list[Item] = []
        checked = 0
        with Store.open(ctx.store, create=False) as store:
            for run in list_runs(store):
                if run.seat not in seats:
                    continue
                checked += 1
                report = verify_chain(store, run.run_id)
                if not report.ok:
                    problem = report.problem
                    items.append(Item(kind=problem.kind if problem else "broken", seat=run.seat,
                                      path=f"run {run.run_id} event {problem.seq if problem else '?'}",
                                      detail=report.message))
        return self.outcome(items, runs=checked)

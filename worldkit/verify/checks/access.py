"""The access audit over every frozen projection and every staged candidate projection."""

from __future__ import annotations

import datetime as dt

from worldkit.check_result import CheckResult, Item
from worldkit.errors import WorldkitError
from worldkit.verify.audit import EXPOSURES, Auditor, AuditReport, scan_dates
from worldkit.verify.checks import BaseCheck, register
from worldkit.verify.context import ComponentMissing, VerifyContext


@register
class AccessAudit(BaseCheck):
    id = "access-audit"
    cost = 1
    purpose = (
        "Every item the policy grants is present; no private, cross-function, future-dated, "
        "verifier-only or otherwise unauthorized item is present."
    )
    fix = (
        "An exposure means a projection holds what its seat may not see: rebuild it from the world and re-freeze, "
        "or fix the permission rule named in the detail; a missing item means the projection is stale: re-freeze."
    )

    def run(self, ctx: VerifyContext) -> CheckResult:
        report = AuditReport()
        auditors: dict[str, Auditor] = {}
        audited = 0

        def auditor(rev: str) -> Auditor:
            if rev not in auditors:
                auditors[rev] = Auditor.shared(ctx.package.revision(rev))
            return auditors[rev]

        for (rev, date, seat), manifest in sorted(ctx.readable.items()):
            if rev not in ctx.package.revision_names or seat not in ctx.package.revision(rev).seats:
                continue  # reported by revision-digests / manifest-integrity
            day = dt.date.fromisoformat(date)
            auditor(rev).audit(manifest.files, day, seat, rev=rev, where=f"frozen {rev}/{date}/{seat}", report=report)
            audited += 1
            try:
                built = ctx.rebuild((rev, date, seat))
            except WorldkitError:
                continue  # reported by projection-rebuild
            for path, when in built.future_dates(day):
                report.add(Item(kind="future-dated", path=path, rev=rev, date=date, seat=seat, actual=when,
                                where="rebuild", detail="content dated after the projection date"))
        staged = 0
        try:
            tasks = ctx.tasks
        except ComponentMissing:
            tasks = []
        for task in tasks:
            manifest = task.projection_manifest
            if manifest is None or task.rev not in ctx.package.revision_names:
                continue
            day = dt.date.fromisoformat(task.date)
            auditor(task.rev).audit(manifest.files, day, task.seat, rev=task.rev, where=f"staged {task.label}",
                                    subset=task.curated, report=report)
            for path, when in scan_dates(task.projection_root, day):
                report.add(Item(kind="future-dated", path=path, rev=task.rev, date=task.date, seat=task.seat,
                                actual=when, where=f"staged {task.label}", detail="content dated after the projection date"))
            staged += 1
        exposures = {k: report.kinds.get(k, 0) for k in EXPOSURES}
        return self.outcome(
            report.items,
            projections=audited,
            staged_projections=staged,
            expected_authorized=report.expected,
            retained_authorized=report.present,
            unauthorized_exposures=sum(exposures.values()),
            by_kind={k: v for k, v in sorted(report.kinds.items())},
        )

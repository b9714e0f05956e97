"""Render verify results: the text report, and the validation record (WorkWorlds Table D1 in spirit).

The validation record is deterministic JSON (no times, sorted keys) built only from check counts,
so the same world and manifests always give the same record.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from worldkit.check_result import CheckResult

if TYPE_CHECKING:
    from worldkit.verify.runner import VerifyReport

VALIDATION_SCHEMA = "worldkit-validation/v1"
_MARK = {"pass": "PASS ", "fail": "FAIL ", "skip": "SKIP ", "error": "ERROR"}
_SHOWN_ITEMS = 20


def _counts(report: VerifyReport, check_id: str) -> dict[str, Any]:
    found = next((c for c in report.checks if c.id == check_id), None)
    if found is None or found.status in ("skip", "error"):
        return {}
    return dict(found.counts, status=found.status)


def validation_record(report: VerifyReport) -> dict[str, Any]:
    """The construction-validation record: rebuilds, seat materializations, tasks, audit, seeded."""
    rebuild = _counts(report, "rebuild-repeat")
    seats = _counts(report, "seat-repeat")
    pairs = _counts(report, "task-pairs-identical")
    staged = _counts(report, "staged-workspaces")
    audit = _counts(report, "access-audit")
    separation = _counts(report, "separation")
    evidence = _counts(report, "evidence-sufficiency")
    distinct = _counts(report, "seat-views-distinct")
    record: dict[str, Any] = {
        "schema": VALIDATION_SCHEMA,
        "world": report.world,
        "checks": {
            "total": len(report.checks),
            "passed": sum(c.status == "pass" for c in report.checks),
            "failed": sum(c.status == "fail" for c in report.checks),
            "skipped": sorted(c.id for c in report.checks if c.status == "skip"),
            "errors": sorted(c.id for c in report.checks if c.status == "error"),
        },
        "world_rebuilds": {
            "attempted": rebuild.get("attempted", 0),
            "identical": rebuild.get("identical", 0),
            "manifest_mismatches": rebuild.get("manifest_mismatches", 0),
            "fingerprints": rebuild.get("fingerprints", []),
            "frozen_fingerprint": rebuild.get("frozen_fingerprint"),
        },
        "seat_materializations": {
            "attempted": seats.get("attempted", 0),
            "identical": seats.get("identical", 0),
            "per_seat": seats.get("per_seat", 0),
            "fingerprints": seats.get("seats", {}),
        },
        "distinct_seat_fingerprints": distinct.get("distinct_fingerprints", {}),
        "task_independence": {
            "pairs_tested": pairs.get("pairs_tested", 0),
            "pairs_identical": pairs.get("pairs_identical", 0),
            "staged_tasks_tested": staged.get("staged_tasks_tested", 0),
            "staged_tasks_identical": staged.get("staged_tasks_identical", 0),
        },
        "access_audit": {
            "projections": audit.get("projections", 0),
            "staged_projections": audit.get("staged_projections", 0),
            "expected_authorized": audit.get("expected_authorized", 0),
            "retained_authorized": audit.get("retained_authorized", 0),
            "unauthorized_exposures": audit.get("unauthorized_exposures", 0),
            "verifier_overlaps_unreviewed": separation.get("unreviewed_overlaps", 0),
            "reviewed_overlaps": separation.get("reviewed_overlaps", 0),
        },
        "evidence_map": {
            "criteria": evidence.get("criteria", 0),
            "criteria_solvable": evidence.get("criteria_solvable", 0),
            "packets": evidence.get("packets", 0),
            "packet_gaps_flagged": len(evidence.get("packet_gaps_flagged", [])),
        },
    }
    if report.seeded is not None:
        record["seeded_failures"] = {"attempted": report.seeded["attempted"], "detected": report.seeded["detected"]}
    if report.mutations is not None:
        record["mutations"] = {k: report.mutations[k] for k in ("attempted", "projection_changing", "detected", "rate")}
    return record


def check_lines(result: CheckResult) -> list[str]:
    lines = [f"{_MARK[result.status]} {result.id:<22} {result.purpose}"]
    if result.status == "skip" or result.status == "error":
        lines.append(f"       {result.reason}")
        return lines
    for item in result.items[:_SHOWN_ITEMS]:
        lines.append(f"       - {item.line()}")
    hidden = int(result.counts.get("items_total", len(result.items))) - min(len(result.items), _SHOWN_ITEMS)
    if hidden > 0:
        lines.append(f"       … and {hidden} more (use --json for all)")
    if result.fix:
        lines.append(f"       fix: {result.fix}")
    flagged = result.counts.get("packet_gaps_flagged")
    if flagged:
        lines.append(f"       flagged: {len(flagged)} curated packet/criterion pairs without a complete evidence set")
    return lines


def render_text(report: VerifyReport) -> str:
    lines: list[str] = []
    if report.world:
        lines.append(f"verify {report.world}")
    for result in report.checks:
        lines += check_lines(result)
    tally = {s: sum(c.status == s for c in report.checks) for s in ("pass", "fail", "skip", "error")}
    lines.append(
        f"{tally['pass']} passed, {tally['fail']} failed, {tally['skip']} skipped, {tally['error']} errors"
    )
    if report.seeded is not None:
        lines.append("seeded violations:")
        for case in report.seeded["cases"]:
            if not case.get("applicable", True):
                lines.append(f"  n/a     {case['name']:<30} not applicable: {case.get('reason', '')}")
                continue
            mark = "caught " if case["detected"] else "MISSED "
            by = ", ".join(case["detected_by"]) or "nothing"
            lines.append(f"  {mark} {case['name']:<30} expected {case['expected_check']:<22} failed: {by}")
        skipped = sum(not c.get("applicable", True) for c in report.seeded["cases"])
        lines.append(f"seeded: attempted {report.seeded['attempted']} / detected {report.seeded['detected']}"
                     + (f" ({skipped} not applicable)" if skipped else ""))
    if report.mutations is not None:
        m = report.mutations
        lines.append(
            f"mutations (seed {m['seed']}): attempted {m['attempted']}, detected {m['detected']} "
            f"(rate {m['rate']:.3f}); projection-changing {m['projection_changing']}, "
            f"detected {m['projection_changing_detected']}"
        )
        for kind, row in sorted(m["by_kind"].items()):
            lines.append(
                f"  {kind:<24} {row['attempted']:>4} attempted  {row['detected']:>4} detected  "
                f"{row['projection_changing']:>4} projection-changing"
            )
        for miss in m["undetected_projection_changing"]:
            lines.append(f"  UNDETECTED projection-changing mutation: {miss}")
        for benign in m["undetected_benign"]:
            lines.append(f"  undetected, no seat-visible change: {benign}")
        if m.get("no_change_redrawn"):
            lines.append(f"  {len(m['no_change_redrawn'])} drawn mutation(s) changed nothing and were drawn again "
                         "(not counted)")
    lines.append(f"verify: {report.status}")
    return "\n".join(lines) + "\n"

"""Department drives: MSAT technical reports and CPV data, manufacturing handover logs and
campaign plans, QC test methods, pull calendars and lab investigations, QA disposition logs,
regulatory change assessments, supply-chain reports and engineering maintenance reports.
"""

from __future__ import annotations

import datetime as dt
import statistics
from typing import Any

LINE_ISSUES = [
    "Stopper bowl jam cleared twice on the night shift; feed rail cleaned.",
    "Capping head 3 torque alarm; head adjusted by maintenance, 40 vials rejected and reconciled.",
    "Camera reject rate on PK-1 normal (0.3 %).",
    "RABS glove port 4 glove changed after the integrity test showed a pinhole; EM informed.",
    "Nitrogen supply switched to the backup bank during the day shift; no impact on sparging.",
    "Visual inspection: two inspectors absent, backlog carried over to Saturday.",
    "Lyophiliser LYO-1 unloading delayed 2 h waiting for QA line clearance.",
    "Vial washer temperature alarm acknowledged; water temperature back within 10 min.",
    "Label printer ribbon changed; first-label check repeated and signed.",
    "Planned maintenance on the compounding vessel agitator completed on time.",
    "No issues; smooth week.",
    "Line speed reduced to 130 vials/min for 3 h after stopper misfeeds; back to 150 after bowl cleaning.",
]
HANDOVERS_FROM = dt.date(2025, 7, 18)
"""Older weekly handovers were archived to the MES when the shift log moved there."""
FILL_WEIGHTS_FROM = dt.date(2025, 1, 1)
"""IPC weight exports of batches filled before this day are in the CPV archive, not on the drive."""
RA_TOPICS = [
    ("NMA guideline on variations — summary of the revised classification", "The revised guideline moves several quality changes from Type IB to Type IA_IN. For our products the relevant changes are batch size changes within 10-fold and minor changes to in-process limits."),
    ("ICH Q1 (revised draft) — what changes for our stability programmes", "The consolidated draft replaces Q1A–Q1E. Main impacts: risk-based reduced designs, stability of combination products and modelling. No immediate change to our commitments."),
    ("ICH Q12 established conditions — gap assessment for Zelvara", "We have not registered established conditions. A post-approval change management protocol (PACMP) could cover the planned shelf-life extensions and component changes."),
    ("Pharmacopoeia update — elastomeric closures chapter", "The revised chapter on rubber closures tightens the fragmentation and self-sealing test description. The WB-1320 qualification already follows the revised text."),
    ("NMA expectations for container closure changes", "For a change of stopper supplier the NMA expects E&L comparison, CCI data, functional tests per the pharmacopoeia and stability data on at least one batch (3 months accelerated and long-term at submission, commitment for the rest)."),
    ("Renewal planning — Tamsorel marketing authorisation", "The renewal is due next year. Quality overall summary and an addendum with the last five years of stability and batch data will be needed."),
]


def build(ctx: Any, core: Any) -> None:
    rng = ctx.rng("departments")
    _msat_reports(ctx, core)
    _cpv(ctx, core, rng)
    _handover(ctx, core, rng)
    _campaigns(ctx, core, rng)
    _qc(ctx, core, rng)
    _qa(ctx, core, rng)
    _ra(ctx, core, rng)
    _sc(ctx, core, rng)
    _eng(ctx, core, rng)


def _msat_reports(ctx: Any, core: Any) -> None:
    for n, r in enumerate(ctx.bank("reports")["msat"], start=1):
        day = dt.date.fromisoformat(r["date"])
        rid = f"TR-MSAT-{day.year}-{n:03d}"
        ctx.doc(id=f"DOC-{rid}", system="msat-drive", path=f"Technical Reports/{day.year}/{rid} {r['title'].replace('/', '-')}.md",
                title=f"{rid} {r['title']}", template="msat/tech_report.md.j2",
                vars={"id": rid, "title": r["title"], "author": ctx.name(r["author"]), "objective": r["objective"],
                      "method": r["method"], "results": r["results"], "conclusion": r["conclusion"],
                      "approver": ctx.name("jlindqvist" if r["author"] != "jlindqvist" else "rmendes")},
                department=r["dept"], visible_from=day)


def _cpv(ctx: Any, core: Any, rng: Any) -> None:
    by_month: dict[tuple[int, int], list[dict]] = {}
    for b in ctx.shared["batches"]:
        if b["product"] != "PRD-ZLV-VIAL" or not b["released"]:
            continue
        weights = [round(rng.gauss(b["fw_mean"], b["fw_sd"]), 4) for _ in range(8 * 12)]
        remarks = core.notes(ctx, "fill_weight", b["batch"], 1, 3)
        at = dict(zip(ctx.rng(f"fw-rows:{b['batch']}").sample(range(len(weights)), k=len(remarks)), remarks))
        text = "time,needle,weight_g,comment\n" + "".join(
            f"{8 + (i // 8) // 4:02d}:{((i // 8) % 4) * 15:02d},{i % 8 + 1},{w:.4f},{at.get(i, '')}\n" for i, w in enumerate(weights))
        if b["fill"] >= FILL_WEIGHTS_FROM:
            ctx.doc(id=f"DOC-FW-{b['batch']}", system="msat-drive", path=f"CPV/Zelvara vial/Fill weight data/{b['batch']} IPC fill weights.csv",
                    title=f"{b['batch']} IPC fill weights", text=text, department="MSAT-PV", visible_from=b["packed"])
        mean, sd = statistics.fmean(weights), statistics.pstdev(weights)
        cpk = min(1.065 - mean, mean - 1.025) / (3 * sd)
        by_month.setdefault((b["fill"].year, b["fill"].month), []).append({"batch": b["batch"], "mean": mean, "sd": sd, "cpk": cpk})
    for (year, month), rows in sorted(by_month.items()):
        day = core.add_workdays(core.add_months(dt.date(year, month, 1), 1), 6)
        if day > core.WORLD_END:
            continue
        ctx.doc(id=f"DOC-CPV-ZV-{year}-{month:02d}", system="msat-drive", path=f"CPV/Zelvara vial/{year}-{month:02d} CPV monthly report.md",
                title=f"CPV monthly report Zelvara vial {year}-{month:02d}", template="msat/cpv_monthly.md.j2",
                vars={"month": dt.date(year, month, 1).strftime("%B %Y"),
                      "rows": [[r["batch"], f"{r['mean']:.4f}", f"{r['sd']:.4f}", f"{r['cpk']:.2f}"] for r in rows],
                      "author": ctx.name("tharlow"), "notes": core.notes(ctx, "cpv", f"{year}-{month:02d}", 1, 3),
                      "signal": "No CPV signal." if all(r["cpk"] >= 1.33 for r in rows) else "Cpk below 1.33 on at least one batch: assessed per SOP-MSAT-002."},
                department="MSAT-PV", visible_from=day)


def _handover(ctx: Any, core: Any, rng: Any) -> None:
    batches = ctx.shared["batches"]
    for week in core.weekdays(core.HISTORY_START, core.WORLD_END, 4):  # Fridays
        start = week - dt.timedelta(days=4)
        filled = [b["batch"] for b in batches if start <= b["fill"] <= week]
        issues = rng.sample(LINE_ISSUES, k=rng.randint(1, 3))
        carried = rng.random() < 0.3, rng.choice(['lmartin', 'ajohnson'])
        if week < HANDOVERS_FROM:
            continue
        text = (f"FILL-FINISH WEEKLY HANDOVER — week ending {week.isoformat()}\n\n"
                f"Batches filled on FL-1: {', '.join(filled) if filled else 'none (changeover/maintenance)'}\n"
                f"FL-2: {'PFS campaign per plan' if carried[0] else 'no production; isolator in standby'}\n\n"
                "Notes:\n" + "".join(f"- {i}\n" for i in issues) +
                f"\nHanded over by {ctx.name(carried[1])}.\n")
        ctx.doc(id=f"DOC-HANDOVER-{week.isoformat()}", system="mfg-drive",
                path=f"Shift handover/{week.year}/{week.isoformat()} fill-finish weekly handover.txt",
                title=f"Fill-finish handover {week.isoformat()}", text=text, department="MFG-FILL", visible_from=week)


def _campaigns(ctx: Any, core: Any, rng: Any) -> None:
    batches = ctx.shared["batches"]
    for month in core.month_starts(core.HISTORY_START, core.WORLD_END):
        issue = core.add_workdays(month, -3) if month > core.HISTORY_START else month
        nxt = core.add_months(month, 1)
        planned = [b for b in batches if month <= b["begin"] < nxt]
        lines = ["batch,product,line,planned_week,status_at_issue,planning_note"]
        for b in planned:
            note = "; ".join(core.notes(ctx, "campaign", b["batch"], 0, 1))
            lines.append(f"{b['batch']},{ctx.products[b['product']].attributes['brand']},FL-1,{b['begin'].isocalendar()[0]}-W{b['begin'].isocalendar()[1]:02d},planned,{note}")
        ctx.doc(id=f"DOC-CAMPAIGN-{month.year}-{month.month:02d}", system="mfg-drive",
                path=f"Planning/Campaign plan {month.year}-{month.month:02d}.csv", title=f"Campaign plan {month.strftime('%B %Y')}",
                text="\n".join(lines) + "\n", department="MFG", visible_from=issue)


def _qc(ctx: Any, core: Any, rng: Any) -> None:
    for number, title, version in ctx.bank("reports")["qc_methods"]:
        day = dt.date(2019 + version, 2 + version, 3 + version * 2)
        ctx.doc(id=f"DOC-{number}", system="qc-drive", path=f"Methods/{number} v{version} {title}.md", title=f"{number} {title}",
                template="lab/test_method.md.j2",
                vars={"number": number, "title": title, "version": version, "author": ctx.name(rng.choice(["mlopez", "efischer", "rsingh"])),
                      "principle": rng.choice(["Instrumental measurement against a qualified reference.", "Comparison against the specification by a trained analyst under defined conditions.",
                                               "Chromatographic separation with UV detection and external standard quantitation."]),
                      "suitability": rng.choice(["Replicate standard RSD ≤ 2.0 %.", "Reference sample within its control limits.", "Blank free of interfering peaks; resolution ≥ 2.0."])},
                department="QC-CHEM", visible_from=day)
    for month in core.month_starts(core.HISTORY_START, core.WORLD_END):
        text = "area,samples_received,samples_completed,median_turnaround_days,remarks\n" + "".join(
                    f"{a},{rng.randint(40, 160)},{rng.randint(40, 160)},{rng.randint(3, 10)},{'; '.join(core.notes(ctx, 'workload', f'{month:%Y-%m}:{a}', 0, 2))}\n"
                    for a in ("chemistry", "microbiology", "stability"))
        if month.month % 3 != 1:  # QC management files the quarter's first month; the others stay in the LIMS dashboard
            continue
        ctx.doc(id=f"DOC-QC-BACKLOG-{month.year}-{month.month:02d}", system="qc-drive",
                path=f"Management/Workload/{month.year}-{month.month:02d} QC workload.csv", title=f"QC workload {month.strftime('%B %Y')}",
                text=text, department="QC", classification="confidential", visible_from=core.add_workdays(month, 2))


def _qa(ctx: Any, core: Any, rng: Any) -> None:
    batches = ctx.shared["batches"]
    for month in core.month_starts(core.HISTORY_START, core.WORLD_END):
        nxt = core.add_months(month, 1)
        rows = [b for b in batches if b["released"] and month <= b["released"] < nxt]
        if nxt > core.WORLD_END:
            continue
        text = "batch,product,packaging_completed,disposition,decision_date,days_to_disposition\n" + "".join(
            f"{b['batch']},{ctx.products[b['product']].attributes['brand']},{b['packed'].isoformat()},{b['status']},{b['released'].isoformat()},{(b['released'] - b['packed']).days}\n"
            for b in sorted(rows, key=lambda b: b["released"]))
        ctx.doc(id=f"DOC-DISPO-{month.year}-{month.month:02d}", system="qa-drive", path=f"Batch Disposition/{month.year}/Disposition log {month.year}-{month.month:02d}.csv",
                title=f"Disposition log {month.strftime('%B %Y')}", text=text, department="QA-OPS", visible_from=nxt)


def _ra(ctx: Any, core: Any, rng: Any) -> None:
    for k, (title, text) in enumerate(RA_TOPICS):
        day = core.workday(dt.date(2025, 1 + 2 * k, 12))
        ctx.doc(id=f"DOC-RA-NOTE-{k + 1:02d}", system="ra-drive", path=f"Intelligence/{day.isoformat()} {title}.md", title=title,
                text=f"# {title}\n\n{text}\n\nPrepared by {ctx.name(rng.choice(['cbernard', 'moyelaran']))} for the Regulatory CMC review.\n",
                department="RA", visible_from=day)
    for cc in ctx.shared["ccs"]:
        if cc["kind"] == "document":
            continue
        day = core.add_workdays(cc["created"], rng.randint(4, 9))
        ctx.doc(id=f"DOC-RAA-{cc['id']}", system="ra-drive", path=f"Change Assessments/{cc['created'].year}/{cc['id']} regulatory assessment.md",
                title=f"Regulatory assessment {cc['id']}", template="ra/change_assessment.md.j2",
                vars={"cc": cc["id"], "title": cc["title"], "summary": cc["summary"], "author": ctx.name("cbernard"),
                      "approver": ctx.name("moyelaran")},
                department="RA", visible_from=day)


def _sc(ctx: Any, core: Any, rng: Any) -> None:
    for month in core.month_starts(core.HISTORY_START, core.WORLD_END):
        issue = core.add_workdays(month, 1)
        text = "material,description,on_hand,unit,weeks_of_cover,status\n" + "".join(
            f"{m},{d},{rng.randint(lo, hi)},{u},{rng.uniform(3, 14):.1f},{s}\n" for m, d, lo, hi, u, s in (
                ("1000421", "Zelvotide acetate API", 8, 30, "kg", "released"),
                ("2000113", "2R vial Type I", 120000, 480000, "pcs", "released"),
                ("2000140", "Stopper 13 mm ES-13 (Elastoseal)", 90000, 400000, "pcs", "released"),
                ("2000188", "COP syringe 1 mL long, nested", 8000, 60000, "pcs", "released"),
                ("2000201", "Overwrap pouch FP-120", 6000, 40000, "pcs", "released"),
                ("1000530", "Tamsorelin API", 2, 9, "kg", "released"),
                ("2000160", "10R vial Type I", 30000, 90000, "pcs", "released")))
        ctx.doc(id=f"DOC-INV-{month.year}-{month.month:02d}", system="sc-drive", path=f"Inventory/{month.year}/Inventory {month.year}-{month.month:02d}.csv",
                title=f"Inventory report {month.strftime('%B %Y')}", text=text, department="SC", visible_from=issue)


def _eng(ctx: Any, core: Any, rng: Any) -> None:
    for month in core.month_starts(core.HISTORY_START, core.WORLD_END):
        nxt = core.add_months(month, 1)
        if nxt > core.WORLD_END:
            continue
        planned = rng.randint(70, 110)
        done = planned - rng.randint(0, 6)
        text = (f"# Preventive maintenance report {month.strftime('%B %Y')}\n\nWork orders planned: {planned}; completed in tolerance: {done}; "
                f"carried over: {planned - done}.\n\nNotable: {rng.choice(LINE_ISSUES)}\n\nPrepared by {ctx.name('rbarnes')}.\n")
        ctx.doc(id=f"DOC-PM-{month.year}-{month.month:02d}", system="eng-drive", path=f"Maintenance/PM reports/{month.year}-{month.month:02d} PM report.md",
                title=f"PM report {month.strftime('%B %Y')}", text=text, department="ENG", visible_from=core.add_workdays(nxt, 2))

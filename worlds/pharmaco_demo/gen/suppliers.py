"""Supplier management background: the other suppliers' records and files, quarterly scorecards,
incoming inspections of routine material lots, and the approved supplier list (ASL) revisions.

The ASL lists every supplier with its status as of the revision date, folded from the supplier
records (hand-written ones included). Revisions are issued quarterly until November 2025; the
revision due in February 2026 was never issued (Supplier Quality's backlog), which the
supplier-change audit should notice.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

SUPPLIERS = [
    # id, name, site, materials, risk, material code prefix for incoming lots, lots per quarter
    ("SUP-PEPTICA", "Peptica Bio AG", "Basel", "zelvotide acetate (drug substance)", "critical", "ZEL-API", 1),
    ("SUP-SYNTHORA", "Synthora Fine Chemicals", "Lyon", "tamsorelin (drug substance)", "critical", "TAM-API", 1),
    ("SUP-VETRAGLASS", "Vetraglass S.p.A.", "Vicenza", "2R and 10R Type I glass vials", "critical", "VL2R", 2),
    ("SUP-ALUCAP", "Alucap Closures Ltd.", "Leeds", "13 mm and 20 mm aluminium flip-off seals", "major", "AS13", 1),
    ("SUP-POLYCLEAR", "Polyclear Medical Inc.", "Dublin", "1 mL long COP syringes, nested, staked needle", "critical", "COP1L", 1),
    ("SUP-PLUNGERTEC", "Plungertec GmbH", "Graz", "bromobutyl plungers for 1 mL long syringes", "critical", "PL1L", 1),
    ("SUP-MANNOCHEM", "Mannochem BV", "Rotterdam", "mannitol, sodium acetate trihydrate", "major", "MAN", 1),
    ("SUP-SURFACTA", "Surfacta Ltd.", "Runcorn", "polysorbate 20", "major", "PS20", 1),
    ("SUP-MEMBRANA", "Membrana Filtration", "Göttingen", "0.22 µm PES sterilising filters", "critical", "FLT", 1),
    ("SUP-PRINTPAK", "Printpak Ltd.", "Riverbend", "cartons, labels and leaflets", "major", "CRT", 1),
    ("SUP-COLDHARBOUR", "Coldharbour Analytical", "Oxford", "contract testing (peptide mapping, E&L)", "major", None, 0),
    ("SUP-MERIDIAN", "Meridian Calibration Services", "Riverbend", "calibration services", "minor", None, 0),
    ("SUP-GASPRO", "GasPro Industrial Gases", "Riverbend", "nitrogen (pharmaceutical grade), CO2", "major", "N2", 0),
    ("SUP-IRRADIA", "Irradia Sterilisation", "Swindon", "gamma irradiation of tubing sets", "critical", "TUB", 1),
]
KEY_IN_ASL = ["SUP-ELASTOSEAL", "SUP-WESTBROOK", "SUP-FOILCRAFT", "SUP-CLEARBAR"]
ASL_DATES = [dt.date(2024, 11, 11), dt.date(2025, 2, 10), dt.date(2025, 5, 12), dt.date(2025, 8, 11), dt.date(2025, 11, 10)]


def _status_on(record: dict[str, Any], day: dt.date) -> tuple[str | None, dict[str, Any]]:
    status, fields = None, {}
    for event in record["events"]:
        when = event["date"] if isinstance(event["date"], dt.date) else dt.date.fromisoformat(str(event["date"]))
        if when > day:
            break
        status = event.get("status") or status
        fields.update(event.get("fields", {}))
    return status, fields


def build(ctx: Any, core: Any) -> None:
    rng = ctx.rng("suppliers")
    generated: dict[str, dict[str, Any]] = {}
    for sid, name, site, materials, risk, prefix, per_quarter in SUPPLIERS:
        audit = core.workday(dt.date(2023 + rng.randint(0, 2), rng.randint(1, 11), rng.randint(3, 25)))
        if audit > dt.date(2025, 12, 1):
            audit = dt.date(2025, 9, 16)
        events = [{"date": dt.date(2023, 12, 1), "kind": "created", "by": rng.choice(["vsantos", "kmurphy"]), "status": "approved",
                   "note": "Migrated from the legacy supplier database.",
                   "fields": {"supplier": name, "manufacturing_sites": [site], "materials": [materials], "risk_class": risk,
                              "quality_agreement": f"QAG-{sid[4:8]}-{2020 + rng.randint(0, 3)}-01", "permitted_use": "all GMP use"}}]
        if audit > dt.date(2023, 12, 1):
            events.append({"date": audit, "kind": "update", "by": "vsantos",
                           "fields": {"last_audit": f"{audit.isoformat()} ({rng.choice(['acceptable', 'acceptable with minor observations'])})"}})
        for quarter in core.month_starts(dt.date(2025, 1, 1), core.TASK_DATE)[::3]:
            day = core.add_workdays(quarter, 10)
            if day <= core.WORLD_END:
                events.append({"date": day, "kind": "update", "by": "vsantos",
                               "fields": {"last_scorecard": f"{day.year} Q{(quarter.month - 1) // 3 + 1}: {rng.randint(78, 98)} %"}})
        record = ctx.record(id=sid, system="qms", type="supplier", title=f"{name} — {site}", events=events, department="SQ",
                            owner="vsantos")
        generated[sid] = record
        if audit > dt.date(2023, 12, 1):
            ctx.doc(id=f"DOC-SQ-AUDIT-{sid}", system="sq-drive", path=f"Supplier Files/{name.rstrip('.')}/{audit.isoformat()} audit report {name.rstrip('.')}.md",
                    title=f"Supplier audit report {name}", template="supplier/audit_report.md.j2",
                    vars={"name": name, "site": site, "materials": materials, "date": audit.isoformat(),
                          "lead": ctx.name(rng.choice(["vsantos", "hdahl"])),
                          "observations": rng.sample([
                              "minor: deviation trending not reviewed monthly", "minor: two expired reagents in the QC laboratory",
                              "minor: training matrix not updated for a new operator", "minor: pest control records incomplete for one month",
                              "minor: customer complaint response exceeded the agreed 30 days", "observation: consider electronic batch records",
                              "minor: change control for a new packaging line not linked to customer notification"], k=rng.randint(1, 3)),
                          "outcome": "acceptable"},
                    department="SQ", classification="restricted", visible_from=core.add_workdays(audit, 6))
        ctx.doc(id=f"DOC-SQ-QAG-{sid}", system="sq-drive", path=f"Supplier Files/{name.rstrip('.')}/Quality agreement summary.md",
                title=f"Quality agreement summary {name}",
                text=(f"# Quality agreement summary — {name}\n\nMaterial/service: {materials}\nSite: {site}\nRisk class: {risk}\n"
                      f"Change notification: {rng.choice(['6 months for major changes', '3 months for major changes', '6 months'])}\n"
                      f"Audit rights: yes, 30 days' notice\nReview: every {rng.choice([2, 3])} years\n"),
                department="SQ", classification="confidential", visible_from=dt.date(2024, 2, 12))
        if prefix:
            _incoming(ctx, core, rng, sid, name, prefix, per_quarter)
    _incoming_es13(ctx, core, rng)
    _asl(ctx, core, generated)
    _scorecards(ctx, core, rng)


def _incoming(ctx: Any, core: Any, rng: Any, sid: str, name: str, prefix: str, per_quarter: int) -> None:
    for quarter in core.month_starts(dt.date(2025, 1, 1), core.WORLD_END)[::3]:
        for k in range(per_quarter):
            day = core.workday(quarter + dt.timedelta(days=rng.randint(3, 80)))
            if day > core.WORLD_END:
                continue
            lot = f"{prefix}-{day.strftime('%y%m')}-{rng.randint(10, 99)}"
            iid = ctx.next_id("IT", day.year, day=day)
            analyst = rng.choice(["lhoffmann", "cwalsh", "efischer", "rsingh"] if day < dt.date(2026, 1, 5) else ["cwalsh", "efischer", "rsingh"])
            test = core.add_workdays(day, rng.randint(2, 6))
            events = [{"date": day, "kind": "created", "by": "kmurphy", "status": "sampled",
                       "fields": {"material": f"{prefix} ({name})", "lot": lot, "testing_level": rng.choice(["full", "reduced (identity + CoA)", "reduced (identity + CoA)"])}}]
            if test <= core.WORLD_END:
                events.append({"date": test, "kind": "update", "by": analyst, "status": "reported",
                               "fields": {"identity": "conforms", "coa_check": "CoA verified", "analyst": analyst}})
                rel = core.add_workdays(test, 1)
                if rel <= core.WORLD_END:
                    events.append({"date": rel, "kind": "approval", "by": "mlopez", "status": "released", "note": "Released."})
            ctx.record(id=iid, system="lims", type="incoming_inspection", title=f"{lot} ({name}) — incoming inspection",
                       events=events, department="QC-CHEM", owner=analyst)


def _incoming_es13(ctx: Any, core: Any, rng: Any) -> None:
    for month in core.month_starts(dt.date(2025, 1, 1), core.WORLD_END):
        day = core.workday(month + dt.timedelta(days=rng.randint(5, 20)))
        if day > core.WORLD_END:
            continue
        lot = f"ES13-{day.strftime('%y%m')}-{rng.randint(10, 99)}"
        iid = ctx.next_id("IT", day.year, day=day)
        test = core.add_workdays(day, 2)
        events = [{"date": day, "kind": "created", "by": "kmurphy", "status": "sampled",
                   "fields": {"material": "2000140 Stopper 13 mm ES-13 (Elastoseal)", "lot": lot, "testing_level": "reduced (identity + CoA)"}}]
        if test <= core.WORLD_END:
            events += [{"date": test, "kind": "update", "by": "cwalsh", "status": "reported",
                        "fields": {"identity_ir": "conforms", "coa_check": "CoA verified", "analyst": "cwalsh"}},
                       {"date": core.add_workdays(test, 1), "kind": "approval", "by": "mlopez", "status": "released", "note": "Released."}]
        ctx.record(id=iid, system="lims", type="incoming_inspection", title=f"{lot} (Elastoseal ES-13) — incoming inspection",
                   events=[e for e in events if e["date"] <= core.WORLD_END], department="QC-CHEM", owner="cwalsh")


def _asl(ctx: Any, core: Any, generated: dict[str, dict[str, Any]]) -> None:
    records = {**generated, **{k: ctx.hand_records[k] for k in KEY_IN_ASL}}
    previous = None
    for rev, day in enumerate(ASL_DATES, start=14):
        rows = []
        for sid in sorted(records):
            status, fields = _status_on(records[sid], day)
            if status not in ("approved", "conditionally approved"):
                continue
            rows.append([fields.get("supplier", sid), "; ".join(fields.get("manufacturing_sites", [])) or "—",
                         "; ".join(fields.get("materials", [])), status, fields.get("permitted_use", "")])
        doc_id = f"DOC-ASL-REV{rev}"
        ctx.doc(id=doc_id, system="site-drive", path=f"Quality System/Suppliers/Approved supplier list rev {rev}.csv",
                title=f"Approved supplier list revision {rev}", template="supplier/asl.csv.j2",
                vars={"revision": rev, "issued": day.isoformat(), "rows": rows,
                      "changes": core.notes(ctx, "asl", f"rev{rev}", 1, 2) if rev > 14 else []},
                department="SQ", visible_from=day, superseded_by=None)
        if previous is not None:
            for doc in ctx.documents:
                if doc["id"] == previous:
                    doc["superseded_by"] = doc_id
        previous = doc_id


def _scorecards(ctx: Any, core: Any, rng: Any) -> None:
    for quarter in core.month_starts(dt.date(2025, 1, 1), core.TASK_DATE)[::3]:
        day = core.add_workdays(quarter, 10)
        label = f"{(core.add_months(quarter, -3)).year}-Q{(core.add_months(quarter, -3).month - 1) // 3 + 1}"
        lines = ["supplier,lots_received,lots_rejected,coa_errors,on_time_delivery_pct,score_pct"]
        for sid, name, *_ in SUPPLIERS:
            lines.append(f"{name},{rng.randint(1, 9)},{rng.choice([0, 0, 0, 1])},{rng.choice([0, 0, 1])},{rng.randint(86, 100)},{rng.randint(76, 98)}")
        ctx.doc(id=f"DOC-SQ-SCORECARD-{label}", system="sq-drive", path=f"Scorecards/Supplier scorecard {label}.csv",
                title=f"Supplier scorecard {label}", text="\n".join(lines) + "\n", department="SQ",
                classification="confidential", visible_from=day)

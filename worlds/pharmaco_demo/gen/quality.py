"""The quality system's background: site deviations (laboratory, utilities, warehouse, training),
change controls from the change bank with their impact assessments, complaints, internal audits,
release/incoming laboratory investigations, investigation reports and the monthly QA metrics.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

SITE_PATTERNS = ["stability-pull", "lab-equipment", "expired-reagent", "warehouse-temp", "damaged-delivery",
                 "utility-wfi", "hvac", "training-gap", "gdp-lab"]
IMPACT_BY = {"ENG": "pvolkov", "QA-COMP": "rokonkwo", "MFG": "rcallahan", "QC-CHEM": "mlopez", "RA": "cbernard",
             "MSAT-PV": "rmendes", "MSAT": "jlindqvist", "SC": "nlarsen", "QA-OPS": "pdoyle", "QC-MICRO": "azimmermann",
             "QC-STAB": "aholm", "QC": "gokafor", "MFG-FORM": "mhughes", "MFG-FILL": "lmartin"}
OWNER_BY = {"ENG": "sgrant", "QC-CHEM": "mlopez", "MFG-FILL": "lmartin", "QA-COMP": "rokonkwo", "SC": "bnovak",
            "MSAT-PV": "rmendes", "QC-MICRO": "azimmermann", "QC-STAB": "aholm", "MFG-FORM": "mhughes"}
COMPLAINTS = [
    ("Zelvara vial", "Stopper difficult to pierce with the supplied needle", "minor", "Retention samples of the batch pierced normally (n = 20); no trend in complaints."),
    ("Zelvara vial", "Particle seen in one vial before administration", "major", "Returned vial: fibre of cellulose origin, 150 µm. Retention samples inspected: no particles. Batch reject rate normal."),
    ("Zelvara vial", "Flip-off cap missing on one vial in a carton", "minor", "Camera rejection logs show the unit was removed at packaging; carton assembled manually during a stoppage."),
    ("Tamsorel", "Cake collapsed in two vials", "major", "Returned vials showed partial collapse; shipping logger showed 38 °C for 6 h. Attributed to a transport excursion at the distributor."),
    ("Tamsorel", "Long reconstitution time reported by pharmacy", "minor", "Retention samples reconstituted in 24–31 s. User instruction clarified (swirl, do not shake)."),
    ("Zelvara vial", "Carton printed with faint batch number", "minor", "Printer head maintenance overdue on PK-1; batch number legible on the vial label."),
    ("Zelvara vial", "Suspected lack of effect reported by a clinic", "major", "Batch assay and potency in specification; forwarded to pharmacovigilance; no quality defect found."),
    ("Tamsorel", "Cracked vial in a sealed carton", "minor", "Isolated transport damage; distributor handling reviewed."),
]
AUDITS = [
    ("2025-02", "QC Chemistry laboratories", "QC-CHEM", ["minor: two solution log entries without expiry", "minor: balance logbook not reviewed monthly"]),
    ("2025-04", "Warehouse and material status control", "SC", ["major: restricted-use status not configured for components of conditionally approved suppliers", "minor: damaged pallet labels in the quarantine area"]),
    ("2025-06", "Fill-finish aseptic practices (FL-1)", "MFG-FILL", ["minor: intervention log entries entered after the end of the shift", "minor: two gowning qualifications renewed late"]),
    ("2025-09", "Document control and training", "QA-COMP", ["minor: three SOPs past periodic review", "minor: LMS curriculum of two transferred employees not updated on the transfer date"]),
    ("2025-11", "LIMS and stability data governance", "QC-STAB", ["major: LIMS allows the analyst who reports a result to approve it (override role active for three analysts)", "minor: audit trail review of stability results not performed for Q3", "minor: pull calendar maintained in a spreadsheet outside LIMS"]),
    ("2026-02", "Engineering calibration and requalification", "ENG", ["minor: requalification planning does not flag chambers approaching the due date", "observation: calibration labels not consistently replaced"]),
]


def build(ctx: Any, core: Any) -> None:
    rng = ctx.rng("quality")
    patterns = {p["key"]: p for p in ctx.bank("deviations")["patterns"]}
    for month in core.month_starts(core.HISTORY_START, core.WORLD_END):
        for _ in range(rng.randint(3, 6)):
            day = core.workday(month + dt.timedelta(days=rng.randint(0, 27)))
            if day > core.WORLD_END:
                continue
            key = rng.choice(SITE_PATTERNS)
            slots = {"batch": "", "product": "", "line": "FL-1", "room": rng.choice(["FF-1 grade B corridor", "FF-2 airlock", "formulation suite 2.10"]),
                     "equipment": rng.choice(["BAL-02", "BAL-04", "PH-03", "HPLC-03", "KF-01"]),
                     "point": rng.choice(["WFI-POU-03", "WFI-POU-09", "WFI-POU-11"]) if key == "utility-wfi" else rng.choice(["3M", "6M", "9M", "12M"]),
                     "count": rng.randint(2, 9), "minutes": rng.randint(20, 140), "limit": "",
                     "value": {"warehouse-temp": rng.choice(["8.9", "9.6", "27.4", "26.1"]), "utility-wfi": rng.choice(["76", "78"]),
                               "hvac": rng.choice(["6", "4", "7"])}.get(key, "0"),
                     "lot": rng.choice(["TL-24005", "ZV-24002"]) if key == "stability-pull" else rng.choice(["SODAC-2503", "MAN-2502", "PS20-2411", "ACA-2506"]),
                     "site": "Riverbend"}
            core.raise_deviation(ctx, rng, patterns[key], day, slots)
    _changes(ctx, core, rng)
    _complaints(ctx, core, rng)
    _audits(ctx, core, rng)
    _investigation_reports(ctx, core, rng)
    _metrics(ctx, core)


def _changes(ctx: Any, core: Any, rng: Any) -> None:
    order = ["open", "impact assessment", "approved", "implemented", "closed"]
    for change in ctx.bank("changes")["changes"]:
        year, month = (int(x) for x in change["month"].split("-"))
        created = core.workday(dt.date(year, month, rng.randint(2, 24)))
        cc = ctx.next_id("CC", created.year, day=created)
        owner = OWNER_BY[change["dept"]]
        events: list[dict[str, Any]] = [{"date": created, "kind": "created", "by": owner, "status": "open",
                                         "fields": {"change_type": change["type"], "description": change["description"],
                                                    "regulatory_impact": change["regulatory"], "originating_department": change["dept"]}}]
        day = core.add_workdays(created, rng.randint(2, 5))
        events.append({"date": day, "kind": "status", "by": "gmorris", "status": "impact assessment",
                       "note": f"Impact assessment requested from {', '.join(sorted(change['impacts']))}."})
        for dept, text in sorted(change["impacts"].items()):
            day = core.add_workdays(day, rng.randint(1, 6))
            events.append({"date": day, "kind": "comment", "by": IMPACT_BY[dept], "note": f"{ctx.dept_name(dept)}: {text}"})
        stop = order.index(change.get("stop", "closed"))
        approved = core.add_workdays(day, rng.randint(4, 12))
        if stop >= 2:
            events.append({"date": approved, "kind": "approval", "by": "evasquez", "status": "approved",
                           "note": "Approved at the Change Review Board."})
        implemented = core.add_workdays(approved, rng.randint(15, 50))
        if stop >= 3:
            events.append({"date": implemented, "kind": "status", "by": owner, "status": "implemented"})
        closed = core.add_workdays(implemented, rng.randint(10, 30))
        if stop >= 4:
            events.append({"date": closed, "kind": "status", "by": "gmorris", "status": "closed",
                           "note": "Post-implementation review complete."})
        events = [e for e in events if e["date"] <= core.WORLD_END]
        ctx.record(id=cc, system="qms", type="change_control", title=change["title"], events=events,
                   department=change["dept"], owner=owner)
        ctx.shared["ccs"].append({"id": cc, "created": created, "approved": approved if stop >= 2 else None,
                                  "title": change["title"], "dept": change["dept"], "kind": change["type"],
                                  "summary": change["description"]})
        ctx.doc(id=f"DOC-IA-{cc}", system="site-drive",
                path=f"Quality System/Change Control/{created.year}/{cc} impact assessment.md",
                title=f"{cc} impact assessment", template="qms/impact_assessment.md.j2",
                vars={"cc": cc, "title": change["title"], "description": change["description"], "type": change["type"],
                      "owner": ctx.name(owner), "created": created.isoformat(),
                      "impacts": [[ctx.dept_name(d), t] for d, t in sorted(change["impacts"].items())],
                      "regulatory": change["regulatory"],
                      "risk": rng.choice(["low", "low", "medium"]), "training": rng.choice([True, False])},
                department=change["dept"], visible_from=day)


def _complaints(ctx: Any, core: Any, rng: Any) -> None:
    for i, month in enumerate(core.month_starts(core.HISTORY_START, core.TASK_DATE)):
        if rng.random() < 0.35:
            continue
        product, text, severity, outcome = COMPLAINTS[(i * 3 + rng.randint(0, 7)) % len(COMPLAINTS)]
        day = core.workday(month + dt.timedelta(days=rng.randint(0, 25)))
        cid = ctx.next_id("CMP", day.year, day=day)
        batch = rng.choice([b["batch"] for b in ctx.shared["batches"] if (product == "Tamsorel") == b["product"].endswith("LYO")
                            and b["released"] and b["released"] < day] or ["ZV-24030"])
        events = [{"date": day, "kind": "created", "by": "lchen", "status": "open",
                   "fields": {"product": product, "batch": batch, "description": text, "source": rng.choice(["hospital pharmacy", "distributor", "clinic", "patient via helpline"]),
                              "severity": severity}},
                  {"date": core.add_workdays(day, rng.randint(8, 30)), "kind": "update", "by": "lchen", "fields": {"investigation_outcome": outcome}},
                  {"date": core.add_workdays(day, rng.randint(31, 45)), "kind": "status", "by": "pdoyle", "status": "closed",
                   "note": "Response sent to the complainant."}]
        ctx.record(id=cid, system="qms", type="complaint", title=f"{product}: {text.lower()}",
                   events=[e for e in events if e["date"] <= core.WORLD_END], department="QA-OPS", owner="lchen")


def _audits(ctx: Any, core: Any, rng: Any) -> None:
    for month, area, dept, findings in AUDITS:
        year, mon = (int(x) for x in month.split("-"))
        start = core.workday(dt.date(year, mon, rng.randint(3, 20)))
        report_day = core.add_workdays(start, rng.randint(8, 14))
        aid = f"AUD-INT-{year}-{AUDITS.index((month, area, dept, findings)) + 1:02d}"
        lead = rng.choice(["twielicki", "mrossi", "rokonkwo"]) if dept != "QA-COMP" else "pdoyle"
        events = [{"date": start, "kind": "created", "by": lead, "status": "in progress",
                   "fields": {"area": area, "auditee_department": dept, "lead_auditor": lead}},
                  {"date": report_day, "kind": "update", "by": lead, "status": "report issued",
                   "fields": {"findings": findings}}]
        close = core.add_workdays(report_day, rng.randint(30, 60))
        if close <= core.TASK_DATE and not month.startswith("2025-11"):
            events.append({"date": close, "kind": "status", "by": "rokonkwo", "status": "closed", "note": "All CAPAs agreed and tracked."})
        ctx.record(id=aid, system="qms", type="internal_audit", title=f"Internal audit: {area}", events=events,
                   department="QA-COMP", owner=lead, classification="restricted")
        ctx.doc(id=f"DOC-{aid}", system="qa-drive", path=f"Compliance/Internal Audits/{year}/{aid} {area}.md",
                title=f"Internal audit report {aid}", template="qms/internal_audit.md.j2",
                vars={"id": aid, "area": area, "dept": dept, "lead": ctx.name(lead), "start": start.isoformat(),
                      "report": report_day.isoformat(), "findings": findings,
                      "scope": f"Processes, records and practices of {area.lower()} since the previous audit.",
                      "positive": rng.choice(["Good engagement of the team; records were retrieved quickly.",
                                              "Housekeeping and labelling were good throughout.",
                                              "The team had already identified two of the issues and raised deviations."])},
                department="QA-COMP", classification="restricted", visible_from=report_day)


def _investigation_reports(ctx: Any, core: Any, rng: Any) -> None:
    for dev in ctx.shared.get("deviations", []):
        if not dev["major"] or dev["closed"] is None:
            continue
        ctx.doc(id=f"DOC-INV-{dev['id']}", system="qa-drive",
                path=f"Investigations/{dev['date'].year}/{dev['id']} investigation report.md",
                title=f"{dev['id']} investigation report", template="qms/investigation_report.md.j2",
                vars={"id": dev["id"], "title": dev["title"], "date": dev["date"].isoformat(), "batch": dev["batch"] or "",
                      "root_cause": dev["root_cause"], "capa": dev["capa"] or "",
                      "method": rng.choice(["5 Whys", "Ishikawa (6M) and 5 Whys", "fault tree"]),
                      "closed": dev["closed"].isoformat()},
                department="QA-OPS", visible_from=dev["closed"])


def _metrics(ctx: Any, core: Any) -> None:
    months = core.month_starts(core.HISTORY_START, core.WORLD_END)
    for month in months[1:]:
        end = month - dt.timedelta(days=1)
        start = dt.date(end.year, end.month, 1)
        devs = ctx.shared["deviations"]
        opened = [d for d in devs if start <= d["date"] <= end]
        closed = [d for d in devs if d["closed"] and start <= d["closed"] <= end]
        backlog = [d for d in devs if d["date"] <= end and (d["closed"] is None or d["closed"] > end)]
        capas = [c for c in ctx.shared.get("capas", []) if start <= c["date"] <= end]
        ccs = [c for c in ctx.shared["ccs"] if start <= c["created"] <= end]
        publish = core.add_workdays(month, 3)
        if publish > core.WORLD_END:
            continue
        rows = [["deviations opened", len(opened)], ["deviations opened, major", sum(1 for d in opened if d["major"])],
                ["deviations closed", len(closed)], ["open deviations at month end", len(backlog)],
                ["CAPAs opened", len(capas)], ["change controls opened", len(ccs)]]
        text = "metric,value\n" + "".join(f"{name},{value}\n" for name, value in rows)
        text += "".join(f"opened,{d['id']},{d['dept']},{'major' if d['major'] else 'minor'}\n"
                        for d in sorted(opened, key=lambda d: d["date"]))
        ctx.doc(id=f"DOC-QAMETRICS-{start.year}-{start.month:02d}", system="qa-drive",
                path=f"Metrics/{start.year}/QA metrics {start.year}-{start.month:02d}.csv",
                title=f"QA metrics {start.strftime('%B %Y')}", text=text, department="QA", visible_from=publish)

"""The site reference library on the shared drive: forms, work instructions, specifications,
area risk assessments, computerised-system descriptions, role training curricula and the live
qualification status page of each piece of equipment.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

CURRICULA = {
    "QC analyst": ["QC", "QA-COMP"], "QC stability scientist": ["QC", "QA-COMP"], "Microbiologist": ["QC", "MFG"],
    "Filling operator": ["MFG", "QA-OPS"], "Formulation technician": ["MFG"], "Visual inspector": ["MFG"],
    "QA specialist": ["QA", "MFG"], "Qualified Person": ["QA"], "Supplier quality engineer": ["SQ", "SC", "QA-COMP"],
    "MSAT scientist": ["MSAT", "QA-COMP"], "Validation engineer": ["ENG", "MSAT"], "Maintenance technician": ["ENG"],
    "Warehouse operator": ["SC"], "Regulatory CMC": ["RA", "QA-COMP"],
}
ALWAYS = ["SOP-QA-002", "SOP-QA-012", "SOP-QA-005", "SOP-HR-002"]


def build(ctx: Any, core: Any) -> None:
    rng = ctx.rng("library")
    bank = ctx.bank("library")
    titles = dict(ctx.shared["sop_titles"])
    for doc in ctx.hand_documents.values():
        if doc.get("template") == "sop/sop.md.j2":
            titles[doc["vars"]["number"]] = doc["vars"]["title"]
    for number, (effective, fields) in sorted(bank["forms"].items()):
        sop = "-".join(number.split("-")[1:3]).join(["SOP-", ""])
        title = number.split(" ", 1)[-1]
        ctx.doc(id=f"DOC-{number}", system="site-drive", path=f"Quality System/Forms/{number}.md", title=f"{number} form",
                template="sop/form.md.j2",
                vars={"number": number, "sop": sop, "sop_version": "current", "fields": fields, "reviewed": True,
                      "form_version": 1 + len(number) % 3},
                department=_dept(sop), visible_from=dt.date.fromisoformat(effective))
    for number, title, dept, effective, steps in bank["work_instructions"]:
        ctx.doc(id=f"DOC-{number}", system="site-drive", path=f"Quality System/Work Instructions/{number} {title}.md",
                title=f"{number} {title}",
                text=f"# {number} — {title}\n\nEffective {core.long(dt.date.fromisoformat(effective))}. Owner: {ctx.dept_name(dept)}.\n\n"
                     + "".join(f"{i}. {s}\n" for i, s in enumerate(steps, start=1))
                     + "\nThis work instruction supports the parent SOP; where they differ, the SOP prevails.\n",
                department=dept, visible_from=dt.date.fromisoformat(effective))
    for number, title, effective, tests in bank["specifications"]:
        ctx.doc(id=f"DOC-{number}", system="site-drive", path=f"Quality System/Specifications/{number} {title}.md",
                title=f"{number} {title}", template="lab/specification.md.j2",
                vars={"number": number, "title": title, "tests": tests, "approver": ctx.name("gokafor")},
                department="QC", visible_from=dt.date.fromisoformat(effective))
    for k, (area, hazards) in enumerate(bank["risk_assessments"]):
        day = dt.date(2024, 2 + k % 10, 5 + k)
        ctx.doc(id=f"DOC-EHSRA-{k + 1:02d}", system="site-drive", path=f"Site/EHS/Risk assessments/RA-EHS-{k + 1:02d} {area}.md",
                title=f"EHS risk assessment {area}", template="site/ehs_risk.md.j2",
                vars={"area": area, "hazards": [[h, rng.choice(["low", "medium"]), rng.choice(["PPE and training", "engineering control",
                                                                                           "procedure and supervision", "signage and training"])] for h in hazards],
                      "assessor": ctx.name("tmensah"), "number": f"RA-EHS-{k + 1:02d}"},
                department="ENG", visible_from=day)
    for code, name, owner, text in bank["systems"]:
        ctx.doc(id=f"DOC-SYS-{code}", system="site-drive", path=f"IT/Computerised systems/{code} system description.md",
                title=f"{code} system description",
                text=f"# {code} — {name}\n\nSystem owner: {ctx.name(owner)}\nGxP impact: high\n\n{text}\n\nAccess is requested through the IT service desk with line-manager approval; GMP roles are granted only after the LMS shows the system training complete.\n",
                department="ENG", visible_from=dt.date(2024, 3, 4))
    for role, depts in sorted(CURRICULA.items()):
        sops = sorted({n for n in titles if any(_dept(n).startswith(d) for d in depts)} | set(ALWAYS))
        ctx.doc(id=f"DOC-CURR-{core.slug(role)}", system="site-drive", path=f"Training/Curricula/Curriculum — {role}.md",
                title=f"Training curriculum: {role}",
                text=f"# Training curriculum — {role}\n\nAssigned in the LMS at hire or transfer (SOP-HR-002). Items must be complete before the related GMP task is performed.\n\n"
                     + "".join(f"- {n} {titles.get(n, '')}\n" for n in sops),
                department="QA-COMP", visible_from=dt.date(2025, 1, 13))
    for eq_id in sorted(e for e in ctx.shared["equipment"] if f"EQ-{e}" in ctx.hand_ids or not ctx.shared["equipment"][e].get("hand")):
        eq = ctx.shared["equipment"][eq_id]
        ctx.doc(id=f"DOC-QSTAT-{eq_id}", system="site-drive", path=f"Validation/Equipment status/{eq_id} qualification status.md",
                title=f"{eq_id} qualification status (EQS)", template="eng/qualification_status.md.j2",
                vars={"record": f"EQ-{eq_id}", "equipment": eq_id, "label": eq["label"],
                      "notes": [] if eq.get("hand") else core.notes(ctx, "equipment", eq_id, 1, 3)},
                department="ENG", visible_from=dt.date.fromisoformat(eq["installed"]) if eq["installed"] > "2023-12-01" else dt.date(2023, 12, 1))
    build_more(ctx, core)
    build_extra(ctx, core)


def _dept(number: str) -> str:  # noqa: D103
    code = number.split("-")[1]
    return {"QC": "QC", "QA": "QA", "MFG": "MFG", "MSAT": "MSAT", "ENG": "ENG", "SC": "SC", "SQ": "SQ", "RA": "RA",
            "HR": "HR", "EHS": "ENG"}[code]


TRAINING_SESSIONS = [
    ("GMP refresher: documentation and ALCOA+", "QA-COMP", "jpatel"), ("Aseptic behaviour in grade A/B", "QC-MICRO", "azimmermann"),
    ("Deviation writing workshop", "QA-OPS", "gmorris"), ("Data integrity for laboratory staff", "QA-COMP", "twielicki"),
    ("Change control for initiators", "QA-COMP", "gmorris"), ("Root cause analysis tools", "QA-OPS", "pdoyle"),
    ("Stability programme basics for non-QC staff", "QC-STAB", "dferreira"), ("Supplier management overview", "SQ", "hdahl"),
    ("Regulatory impact of changes", "RA", "cbernard"), ("Cleanroom cleaning and disinfection", "MFG", "mhughes"),
    ("Lockout/tagout refresher", "ENG", "tmensah"), ("Handling of temperature excursions in the warehouse", "SC", "bnovak"),
]
PRODUCT_DOCS = {
    "Zelvara vial": [("Process description", "Compounding in CV-1 (nitrogen-sparged WFI, zelvotide acetate, sodium acetate buffer pH 5.0, mannitol, polysorbate 20), sterile filtration through redundant 0.22 µm PES filters, aseptic filling on FL-1 into 2R vials, stoppering with 13 mm bromobutyl stoppers under nitrogen, capping, 100 % visual inspection, labelling and cartoning."),
                     ("Control strategy", "Critical quality attributes: assay, oxidised zelvotide, impurity D, total impurities, sterility, endotoxin, subvisible particles, extractable volume. Key controls: dissolved oxygen before filtration (≤ 1.0 mg/L), nitrogen overlay, filter integrity, fill weight IPC, headspace nitrogen, 100 % visual inspection."),
                     ("Process FMEA summary", "Top risks after mitigation: oxygen exposure during compounding (RPN 24), fill weight drift (RPN 20), stopper misfeed (RPN 18). All RPNs below 40."),
                     ("Specification SPEC-ZV-FP v6 (release and shelf life)", "Assay 95.0–105.0 %; oxidised zelvotide NMT 1.0 % at release, NMT 1.5 % shelf life; impurity D NMT 1.0 %; total impurities NMT 2.0 % at release, NMT 3.0 % shelf life; pH 4.5–5.5; subvisible particles ≤ 6000/≤ 600 per container; endotoxin NMT 5.0 EU/mg; sterile.")],
    "Tamsorel": [("Process description", "Compounding of tamsorelin with mannitol and phosphate buffer, sterile filtration, aseptic filling on FL-1 into 10R vials, partial stoppering, lyophilisation on LYO-1 (recipe TMS-LYO-R3), full stoppering under nitrogen, capping, inspection and packaging."),
                 ("Control strategy", "Critical quality attributes: assay, related substances, water content, reconstitution time, sterility, cake appearance. Key controls: fill weight, shelf temperature and chamber pressure profile, end-of-primary-drying detection, residual moisture."),
                 ("Specification SPEC-TL-FP v4", "Assay 95.0–105.0 %; related substances total NMT 2.0 %; water content NMT 2.0 %; reconstitution time NMT 60 s; endotoxin NMT 12.5 EU/vial; sterile.")],
    "Zelvara PFS": [("Development summary", "1 mL long COP syringe with staked 27G needle, bromobutyl plunger, filled on FL-2 (isolator). Oxygen barrier: aluminium-foil overwrap pouch with oxygen absorber (see DR-ZP-2024-03). Registration stability STP-ZP-24-01 (three lots, FP-120 overwrap). PPQ on FL-2 in July–August 2025."),
                    ("Draft specification SPEC-ZP-FP draft v3", "As the vial, plus break-loose force NMT 10 N, glide force NMT 8 N, headspace oxygen at release NMT 1.5 %."),
                    ("Launch readiness plan (summary)", "Milestones: PPQ report (done), 12-month registration stability (done), mock PAI (February 2026), overwrap laminate decision (CC-2026-0001), filing target Q3 2026.")],
}
METHOD_VALIDATIONS = [("MVR-QC-031-04", "TM-QC-031 v4 zelvotide assay and related substances", "2026-01-14"), ("MVR-QC-035-02", "TM-QC-035 Tamsorel assay and related substances", "2023-07-10"),
                      ("MVR-QC-041-02", "TM-QC-041 water content (coulometric KF)", "2018-11-05"), ("MVR-QC-047-01", "TM-QC-047 break-loose and glide force", "2024-08-26"),
                      ("MVR-QC-052-01", "TM-QC-052 headspace oxygen by laser spectroscopy", "2024-09-30"), ("MVR-QC-044-02", "TM-QC-044 polysorbate 20 by HPLC-CAD", "2022-04-19"),
                      ("MVR-QC-016-02", "Subvisible particles in syringes by light obscuration", "2024-06-24"), ("MVR-QC-027-02", "TM-QC-027 peptide mapping", "2021-11-29")]


def build_more(ctx: Any, core: Any) -> None:
    rng = ctx.rng("library-more")
    for k, (title, dept, trainer) in enumerate(TRAINING_SESSIONS):
        day = core.workday(dt.date(2025, 1, 20) + dt.timedelta(days=k * 31 + rng.randint(0, 10)))
        attendees = sorted(rng.sample([p for p in ctx.employees if not ctx.in_dept(p, "HR")], k=rng.randint(8, 16)))
        ctx.doc(id=f"DOC-TRSESSION-{k + 1:02d}", system="site-drive", path=f"Training/Sessions/{day.isoformat()} {title}.md",
                title=f"Training session: {title}",
                text=f"# Training session — {title}\n\nDate: {core.long(day)} · Trainer: {ctx.name(trainer)} · Duration: {rng.choice([60, 90, 120])} min\n\n"
                     f"Attendees ({len(attendees)}): {', '.join(ctx.name(a) for a in attendees)}\n\nKnowledge check: all attendees passed (≥ 80 %). Records entered in the LMS.\n",
                department=dept, visible_from=day)
    for product, items in PRODUCT_DOCS.items():
        for k, (title, text) in enumerate(items):
            day = dt.date(2024, 4 + k, 8) if product != "Zelvara PFS" else dt.date(2025, 9, 15 + k)
            ctx.doc(id=f"DOC-PROD-{core.slug(product)}-{k + 1}", system="site-drive", path=f"Products/{product}/{title}.md",
                    title=f"{product}: {title}", text=f"# {product} — {title}\n\n{text}\n", department="MSAT" if k < 2 else "QC", visible_from=day)
    for quarter in core.month_starts(dt.date(2025, 4, 1), core.WORLD_END)[::3]:
        start = core.add_months(quarter, -3)
        devs = [d for d in ctx.shared.get("deviations", []) if start <= d["date"] < quarter]
        by_area: dict[str, int] = {}
        for d in devs:
            by_area[ctx.dept_name(d["dept"])] = by_area.get(ctx.dept_name(d["dept"]), 0) + 1
        label = f"{start.year}-Q{(start.month - 1) // 3 + 1}"
        ctx.doc(id=f"DOC-DEVTREND-{label}", system="site-drive", path=f"Quality System/Deviation trend reports/Deviation trend {label}.md",
                title=f"Deviation trend report {label}",
                text=f"# Deviation trend report {label}\n\nDeviations raised: {len(devs)} (major: {sum(1 for d in devs if d['major'])}).\n\n| Department | Deviations |\n|---|---|\n"
                     + "".join(f"| {a} | {n} |\n" for a, n in sorted(by_area.items()))
                     + "\nRecurring themes are discussed at the quality council. Prepared by Gareth Morris.\n",
                department="QA-OPS", visible_from=core.add_workdays(quarter, 8))
    for number, title, day in METHOD_VALIDATIONS:
        ctx.doc(id=f"DOC-{number}", system="qc-drive", path=f"Method Validation/{number} {title}.md", title=f"{number} {title}",
                text=f"# {number} — Validation report: {title}\n\nApproved {core.long(dt.date.fromisoformat(day))} (QC Chemistry, QA).\n\n"
                     f"Characteristics: specificity, linearity ({rng.choice(['50–150 %', '80–120 %', 'LOQ–150 %'])}), accuracy (recovery {rng.uniform(98.5, 100.8):.1f} %), "
                     f"repeatability (RSD {rng.uniform(0.3, 1.2):.1f} %), intermediate precision (RSD {rng.uniform(0.6, 1.8):.1f} %), robustness.\n\nConclusion: the method is suitable for its intended use.\n",
                department="QC-CHEM", visible_from=dt.date.fromisoformat(day))
    for k in range(6):
        day = core.workday(dt.date(2025, 1, 15) + dt.timedelta(days=k * 62))
        std = rng.choice(["ZEL-WS", "TAM-WS", "METOX-RS", "IMPD-RS"]) + f"-{7 + k:02d}"
        ctx.doc(id=f"DOC-REFSTD-{k + 1}", system="qc-drive", path=f"Reference Standards/{day.isoformat()} qualification {std}.md",
                title=f"Reference standard qualification {std}",
                text=f"# Qualification of working standard {std}\n\nDate {core.long(day)} · FRM-QC-005-01\n\nSix replicate assays against the primary standard: mean {rng.uniform(99.1, 100.9):.1f} %, RSD {rng.uniform(0.2, 0.8):.1f} %. Identity confirmed. Re-test in {rng.choice([6, 12, 18])} months.\n\n" + "".join(f"- {n}\n" for n in core.notes(ctx, "calibration", std, 1, 2)),
                department="QC-CHEM", visible_from=day)


IT_NOTICES = ["LIMS maintenance window on Saturday evening", "New laptops for shift supervisors", "Multi-factor authentication for remote access",
              "QMS upgrade: new dashboard", "Teams channels archived after 12 months of inactivity", "Backup restore test of the CDS completed",
              "Phishing report button added to mail", "MES client update on the shop-floor terminals"]
CLEANING = [("CV-1 compounding vessel", "zelvotide"), ("CV-2 compounding vessel", "zelvotide"), ("FL-1 product path", "zelvotide / tamsorelin"),
            ("FL-2 product path", "zelvotide"), ("LYO-1 shelves and chamber", "tamsorelin"), ("Filter housings (PES trains)", "zelvotide")]


def build_extra(ctx: Any, core: Any) -> None:
    rng = ctx.rng("library-extra")
    for month in core.month_starts(core.HISTORY_START, core.WORLD_END):
        nxt = core.add_months(month, 1)
        if core.add_workdays(nxt, 3) > core.WORLD_END:
            continue
        rooms = ["FF-1 filling room", "FF-1 grade B corridor", "FF-2 background", "Formulation suite", "Component preparation"]
        rows = "".join(f"| {r} | {rng.randint(12, 18)} | {rng.randint(0, 2)} | {rng.uniform(19.5, 21.5):.1f} | {rng.randint(35, 48)} |\n" for r in rooms)
        if month.month % 3:  # the drive keeps the quarter-end reports; the monthly ones stay in the BMS
            continue
        ctx.doc(id=f"DOC-HVAC-{month.year}-{month.month:02d}", system="site-drive",
                path=f"Engineering/Utilities/HVAC monthly report {month.year}-{month.month:02d}.md", title=f"HVAC monthly report {month.strftime('%B %Y')}",
                text=f"# HVAC monthly report — {month.strftime('%B %Y')}\n\n| Room | Min. ΔP (Pa) | Alarms | Mean T (°C) | Mean RH (%) |\n|---|---|---|---|---|\n{rows}\nEvents this month:\n" + "".join(f"- {n}\n" for n in core.notes(ctx, "hvac", f"{month:%Y-%m}", 1, 3)) + f"\nPrepared by {ctx.name('tmensah')}.\n",
                department="ENG", visible_from=core.add_workdays(nxt, 3))
    for k, title in enumerate(IT_NOTICES):
        day = core.workday(dt.date(2025, 2, 3) + dt.timedelta(days=k * 47))
        ctx.doc(id=f"DOC-ITNOTICE-{k + 1}", system="site-drive", path=f"IT/Notices/{day.isoformat()} {title}.md", title=title,
                text=f"# {title}\n\n{rng.choice(['Planned change; no action needed from users.', 'Please restart your PC after the update.', 'Contact the service desk if you see any issue.'])}\n\n— {ctx.name('mchoi')}, IT/CSV\n",
                department="ENG", classification="public", visible_from=day)
    ctx.doc(id="DOC-VMP-2025", system="site-drive", path="Validation/Validation master plan 2025-2026.md", title="Validation master plan 2025–2026",
            text="# Validation master plan 2025–2026\n\n1. Zelvara PFS on FL-2: engineering runs, PPQ (three batches), cleaning validation, CPV.\n2. New stability chamber SC-07: IQ/OQ/PQ.\n"
                 "3. Periodic requalification of chambers, autoclaves, lyophiliser and isolator per SOP-ENG-001/010.\n4. Computerised systems: LIMS upgrade, EMS server replacement, LIMS segregation of duties.\n"
                 "5. Second-source stopper (WB-1320): machinability, CCI, component qualification.\n\nOwner: Rafael Mendes (MSAT-PV) with Engineering & Validation. Approved: Elena Vasquez.\n",
            department="MSAT-PV", visible_from=dt.date(2025, 1, 20))
    for k, (item, product) in enumerate(CLEANING):
        day = dt.date(2023 + k % 3, 3 + k, 14)
        ctx.doc(id=f"DOC-CLV-{k + 1}", system="site-drive", path=f"Validation/Cleaning validation/CVR-{k + 1:02d} {item}.md", title=f"Cleaning validation summary {item}",
                text=f"# Cleaning validation summary — {item}\n\nWorst-case residue: {product}. Three consecutive runs passed: swabs ≤ {rng.randint(4, 12)} % of the PDE-based limit, rinse TOC ≤ {rng.randint(120, 260)} ppb, visually clean. Dirty hold {rng.choice([24, 48, 72])} h, clean hold {rng.choice([72, 120, 168])} h validated.\n",
                department="MSAT-PV", visible_from=day)

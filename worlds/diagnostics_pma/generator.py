"""Bulk background content of the `diagnostics_pma` world (Calder Point Diagnostics).

The loader calls `generate(world, rng)`. The hand-written story items the tasks rest on live in
`data/stories/`; this file adds the everyday documents around them: SOPs, PMA core team minutes,
newsletters, verification protocols and run logs, monitoring reports and enrollment sheets, lot
release records, complaint logs, manufacturing batch records, regulatory digests, desk notes and
routine mail. Determinism: everything is drawn from the seeded `rng` in a fixed order; nothing
reads the clock. Every item names only dates on or before its own date (minutes cite milestones
up to the meeting day). No number here contradicts a story item: routine content never restates
the story's results.
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

D = dt.date
TASK_HORIZON = D(2026, 6, 30)  # the generator writes nothing dated after this

# Milestones the PMA core team minutes report, on or after their date (never before).
MILESTONES: list[tuple[dt.date, str, str]] = [
    (D(2025, 6, 2), "Submission plan", "Modular plan v1 agreed: Module 1 in November, Module 2 end of January, Module 3 on 1 May 2026."),
    (D(2025, 8, 18), "Clinical study", "CS-TL-01 protocol v3.0 approved; site initiation visits scheduled for Sites 01-03."),
    (D(2025, 8, 29), "Analytical verification", "AVR-001 (detection limits) approved in the DHF."),
    (D(2025, 9, 1), "Clinical study", "SAP v2.0 approved by Ben Quint."),
    (D(2025, 10, 3), "Analytical verification", "AVR-002 rev A invalidated under DEV-2025-031 (calibrator lot CAL-2509); repeat planned with CAL-2511."),
    (D(2025, 10, 22), "Analytical verification", "AVR-008 rev A approved in the DHF."),
    (D(2025, 11, 14), "Submission", "Module 1 submitted to the Center for Device Review."),
    (D(2025, 11, 24), "Analytical verification", "AVR-002 rev B approved (supersedes rev A)."),
    (D(2025, 12, 5), "Reference interval", "RIS-01 v1 draft circulated for review; subgroup screening still open."),
    (D(2026, 1, 30), "Submission", "Module 2 submitted."),
    (D(2026, 2, 11), "Analytical verification", "AVR-008 rev A retracted (DEV-2026-004, biotin stock); repeat in March. Module 1 amendment needed."),
    (D(2026, 2, 20), "Reference interval", "RIS-01 v2 approved; labeling to use the v2 table."),
    (D(2026, 3, 10), "Labeling", "Intended use statement v3 approved (plasma and serum)."),
    (D(2026, 3, 20), "Analytical verification", "AVR-008 rev B approved with the criterion not met; CAPA-2026-002 opened for the labeling limitation."),
    (D(2026, 3, 25), "Supplement planning", "AVP-013 (whole blood) protocol approved for a later supplement; not part of P250031."),
    (D(2026, 3, 30), "Clinical study", "EDC export for the CSR draft taken; one adjudication meeting (ACM-07) still to come."),
    (D(2026, 4, 2), "Analytical verification", "AVR-010 draft report entered in DHF approval."),
    (D(2026, 4, 8), "Clinical study", "ACM-07 held: final adjudication of three Site 02 subjects; tables to be redone before CSR v1.0."),
    (D(2026, 4, 21), "Clinical study", "Database locked."),
    (D(2026, 4, 22), "Analytical verification", "AVR-010 approved."),
    (D(2026, 5, 1), "Submission", "Module 3 submitted; the PMA is complete."),
    (D(2026, 5, 20), "Labeling", "IFU v5 issued with the Module 3 corrections."),
]

ROUTINE = [
    ("Resourcing", "No change to the core team this week."),
    ("Risk register", "Risk register reviewed; no new high risks."),
    ("Budget", "Spend in line with the approved plan."),
    ("CRO", "Meridian reported monitoring on schedule."),
    ("Document control", "Controlled copies of the DHF index refreshed."),
    ("Supplier", "Antibody supplier delivery for the next reagent lots confirmed."),
    ("Training", "Team training records are current."),
]

SOP_TITLES = [
    ("QA", "Document control"), ("QA", "Design control"), ("QA", "Design history file"), ("QA", "Risk management"),
    ("QA", "Deviation management"), ("QA", "CAPA"), ("QA", "Complaint handling"), ("QA", "Internal audit"),
    ("QA", "Supplier qualification"), ("QA", "Training"), ("QA", "Lot release"), ("QA", "Nonconforming product"),
    ("QA", "Change control"), ("QA", "Management review"), ("QA", "Record retention"), ("QA", "Labeling control"),
    ("RA", "Regulatory submissions"), ("RA", "Labeling review and approval"), ("RA", "Regulatory correspondence"),
    ("RA", "Post-approval changes and supplements"), ("CLIN", "Clinical study conduct"), ("CLIN", "Clinical data management"),
    ("CLIN", "Adjudication committees"), ("CLIN", "Site monitoring"), ("RND", "Verification study planning"),
    ("RND", "Calibrator value assignment"), ("RND", "Reagent stock preparation"), ("RND", "Analyzer maintenance (R&D)"),
    ("RND", "Statistical methods for analytical studies"), ("MFG", "Reagent pack filling"), ("MFG", "Bead coating"),
    ("MFG", "Environmental monitoring"), ("MFG", "Equipment calibration"), ("MFG", "Cold-chain shipping"),
    ("HR", "Onboarding"), ("HR", "Job descriptions"),
]
PREFIX = {"QA": "QA", "RA": "RA", "CLIN": "CL", "RND": "RD", "MFG": "MF", "HR": "HR"}

STUDIES = [
    (1, "Detection limits", "ywest", D(2025, 7, 28), D(2025, 8, 22)),
    (2, "Precision", "jpereira", D(2025, 8, 11), D(2025, 11, 20)),
    (3, "Linearity", "ywest", D(2025, 9, 8), D(2025, 9, 30)),
    (4, "High-dose hook", "ywest", D(2025, 9, 22), D(2025, 10, 8)),
    (5, "Method comparison", "jpereira", D(2025, 10, 20), D(2025, 12, 12)),
    (6, "Carryover", "ywest", D(2025, 10, 6), D(2025, 10, 21)),
    (7, "Endogenous interference", "jpereira", D(2025, 10, 13), D(2025, 11, 5)),
    (8, "Biotin interference", "ywest", D(2025, 10, 1), D(2026, 3, 18)),
    (9, "Cross-reactivity", "ywest", D(2025, 10, 27), D(2025, 11, 14)),
    (10, "Sample stability", "jpereira", D(2026, 2, 16), D(2026, 4, 2)),
    (11, "On-board reagent stability", "ywest", D(2025, 12, 8), D(2026, 1, 16)),
    (12, "Reagent shelf life", "jpereira", D(2025, 3, 3), D(2026, 3, 4)),
]
NAMES = {"ywest": "Yara West", "jpereira": "Jonas Pereira", "lnakamura": "Lea Nakamura", "hvoss": "Hanna Voss"}
SITES = [("01", "Harbor General"), ("02", "Eastmoor University Hospital"), ("03", "Linden Valley Medical Center")]
PEOPLE = ["ehartwell", "mokafor", "tbrandt", "lnakamura", "jpereira", "ywest", "rcosta", "sadeyemi", "bquint",
          "dkerr", "hvoss", "pmoreau", "aolsen", "nfield"]


# Subjects enrolled per site; the evaluable counts of CS-TL-01 (400, 330, 300) are these less the
# non-evaluable subjects (no valid presentation result or no final diagnosis).
ENROLLED = {"01": 416, "02": 343, "03": 312}


def _split(total: int, parts: int, rng: random.Random) -> list[int]:
    """`total` spread over `parts` weeks, each near the mean, summing exactly to `total`."""
    weights = [rng.uniform(0.6, 1.4) for _ in range(parts)]
    shares = [int(total * w / sum(weights)) for w in weights]
    for i in range(total - sum(shares)):
        shares[i % parts] += 1
    return shares


def _iso(day: dt.date) -> str:
    return day.isoformat()


def _weeks(start: dt.date, end: dt.date, step: int = 7) -> list[dt.date]:
    out, day = [], start
    while day <= end:
        out.append(day)
        day += dt.timedelta(days=step)
    return out


def _months(start: tuple[int, int], end: tuple[int, int]) -> list[dt.date]:
    (y, m), out = start, []
    while (y, m) <= end:
        out.append(D(y, m, 1))
        y, m = (y + 1, 1) if m == 12 else (y, m + 1)
    return out


def _doc(path: str, system: str, department: str | None, day: dt.date, title: str, **kw: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {"path": path, "system": system, "title": title, "visible_from": _iso(day)}
    if department:
        doc["department"] = department
    doc.update(kw)
    return doc


def _note(path: str, system: str, department: str | None, day: dt.date, title: str, ident: str,
          heading: str, body: str, **kw: Any) -> dict[str, Any]:
    """A short text document: a `# heading` line, a blank line, then `body` and a newline."""
    return _doc(path, system, department, day, title, id=ident, **kw, text=f"# {heading}\n\n{body}\n")


def _sops(rng: random.Random) -> list[dict[str, Any]]:
    out = []
    for i, (dept, title) in enumerate(SOP_TITLES, start=1):
        number = f"SOP-{PREFIX[dept]}-{i:03d}"
        version = rng.randint(1, 5)
        effective = D(2023, 1, 9) + dt.timedelta(days=rng.randint(0, 900))
        out.append(_doc(
            f"Quality system/SOPs/{number} v{version} {title}.md", "company-drive", dept, effective,
            f"{number} v{version} {title}", id=f"G-SOP-{i:03d}", template="qms/sop.md.j2",
            vars={
                "number": number, "version": version, "title": title, "effective": _iso(effective),
                "purpose": f"Describe how Calder Point Diagnostics performs {title.lower()}.",
                "scope": "All TropoLume products and projects at the Calder Point site.",
                "responsibilities": [f"The {dept} owner maintains this procedure.", "Quality Assurance approves changes.",
                                     "Every user is trained before use."],
                "steps": [f"Plan the {title.lower()} activity and name its owner.",
                          "Record each step in the controlled form or system named in section 5.",
                          "Review the record; a second person verifies critical entries.",
                          "Escalate anything outside the procedure as a deviation (SOP-QA-005)."],
                "records": "Records are kept in the QMS, the DHF or the controlled drive folders for at least 10 years.",
            }))
    return out


def _minutes(rng: random.Random) -> list[dict[str, Any]]:
    out = []
    team = ["M. Okafor", "L. Nakamura", "J. Pereira", "R. Costa", "S. Adeyemi", "H. Voss", "D. Kerr", "T. Brandt", "B. Quint"]
    for k, day in enumerate(_weeks(D(2025, 6, 4), TASK_HORIZON)):
        since = day - dt.timedelta(days=7)
        items = [(topic, text) for when, topic, text in MILESTONES if since < when <= day]
        items += rng.sample(ROUTINE, 2 if items else 3)
        attendees = sorted(rng.sample(team, 6))
        out.append(_doc(
            f"PMA core team/Minutes/{day.year}/{_iso(day)} PMA core team minutes.md", "company-drive", "RA", day,
            f"PMA core team minutes {_iso(day)}", id=f"G-MIN-{k + 1:03d}", template="company/minutes.md.j2",
            vars={"meeting": "PMA P250031 core team", "date": _iso(day), "attendees": attendees, "agenda": items,
                  "actions": [f"{rng.choice(attendees)} to update the PMA tracker by Friday."]}))
    return out


def _newsletters(rng: random.Random) -> list[dict[str, Any]]:
    stories = [
        ("Site news", "The Calder Point car park extension opens next month."),
        ("People", "Welcome to the new colleagues who joined Manufacturing and Quality."),
        ("Customers", "The TropoLume cTnI assay passed another year on the market with stable complaint rates."),
        ("Safety", "Please complete the annual lab safety refresher."),
        ("Community", "The charity run raised funds for the regional heart foundation."),
        ("Facilities", "The cold room upgrade in building B is complete."),
        ("IT", "Password changes are due every 180 days."),
    ]
    out = []
    for k, first in enumerate(_months((2025, 1), (2026, 6))):
        out.append(_doc(
            f"Newsletter/{first.year}/Calder Point News {first:%Y-%m}.md", "company-drive", "HR", first,
            f"Calder Point News {first:%B %Y}", id=f"G-NEWS-{k + 1:03d}", template="company/newsletter.md.j2",
            vars={"month": f"{first:%B %Y}", "stories": rng.sample(stories, 3), "editor": "Nora Field"}))
    return out


def _verification(rng: random.Random) -> list[dict[str, Any]]:
    out = []
    for n, topic, author, start, end in STUDIES:
        out.append(_doc(
            f"Verification/Protocols/AVP-{n:03d} {topic} protocol v1.md", "rnd-drive", "AV", start - dt.timedelta(days=7),
            f"AVP-{n:03d} {topic} protocol v1", id=f"G-AVP-{n:03d}", template="verification/protocol.md.j2",
            vars={"id": f"AVP-{n:03d}", "title": topic, "version": 1, "requirement": f"DI-REQ-{9 + n:03d}",
                  "date": _iso(start - dt.timedelta(days=7)), "approver": "Lea Nakamura",
                  "guidance": "CLSI-style design per SOP-RD-025",
                  "purpose": f"Plan the {topic.lower()} study of the TropoLume hs-TnI assay.",
                  "materials": ["Lumera 300 analyzers LUM-R01 and LUM-R02", "Development reagent lots HT-25001 to HT-25003",
                                "Patient pools and panels from the R&D biobank"],
                  "steps": ["Prepare the samples per the study design", "Run the samples as scheduled",
                            "Enter the results in the study workbook", "Analyse per SOP-RD-029 and report"],
                  "criterion": f"As set in DI-REQ-{9 + n:03d}."}))
        days = sorted({start + dt.timedelta(days=rng.randint(0, max(1, (min(end, start + dt.timedelta(days=60)) - start).days)))
                       for _ in range(5)})
        for j, day in enumerate(days, start=1):
            samples = [[f"S{i}", rng.choice([2, 3, 5]), f"{rng.uniform(5, 900):.1f}", f"{rng.uniform(0.2, 20):.2f}"]
                       for i in range(1, rng.randint(3, 6))]
            out.append(_doc(
                f"Verification/Run logs/AVR-{n:03d}/RUN-{day:%y%m%d}-{n:02d}{j} {topic}.md", "rnd-drive", "AV", day,
                f"Run log RUN-{day:%y%m%d}-{n:02d}{j}", id=f"G-RUN-{n:03d}-{j}", template="verification/run_log.md.j2",
                vars={"run_id": f"RUN-{day:%y%m%d}-{n:02d}{j}", "study": f"AVR-{n:03d} {topic}", "date": _iso(day),
                      "analyzer": rng.choice(["LUM-R01", "LUM-R02"]), "reagent_lot": rng.choice(["HT-25002", "HT-25003"]),
                      "calibrator_lot": "CAL-2509" if (n == 2 and day < D(2025, 10, 1)) else "CAL-2511" if day >= D(2025, 10, 1) else "CAL-2507",
                      "operator": NAMES[author], "controls": "in range", "samples": samples,
                      "verdict": "accepted", "comment": "Raw data in the study workbook."}))
    for k, (day, title) in enumerate([(D(2025, 3, 14), "Design freeze"), (D(2025, 7, 18), "Verification readiness"),
                                      (D(2025, 11, 7), "Module 1 readiness"), (D(2026, 1, 23), "Module 2 readiness"),
                                      (D(2026, 3, 27), "Verification status"), (D(2026, 6, 12), "Design transfer")], start=1):
        review = f"DR-{k:02d} {title}"
        out.append(_note(f"Design reviews/{review} design review.md", "rnd-drive", "RND", day, review, f"G-DR-{k:02d}",
                         f"{review} design review ({_iso(day)})", "Chair: Lea Nakamura. Independent reviewer: Hanna Voss.\n\n"
                         "Outcome: the review confirmed the items on the agenda; open actions are tracked in the DHF."))
    for k in range(1, 9):
        day, lot = D(2024, 10, 1) + dt.timedelta(days=35 * k), f"HT-2500{k}"
        out.append(_note(f"Development lots/{lot} certificate of analysis.md", "rnd-drive", "RND", day,
                         f"{lot} certificate of analysis", f"G-COA-{k}", f"Development reagent lot {lot} — certificate of analysis",
                         f"Manufactured {_iso(day)} on the pilot line.\n"
                         f"Control recovery {rng.uniform(96, 104):.1f} %; appearance conforms; fill volume conforms."))
    return out


def _clinical(rng: random.Random) -> list[dict[str, Any]]:
    out = []
    k = 0
    weeks = _weeks(D(2025, 9, 26), D(2026, 2, 27))
    per_week = {site: _split(ENROLLED[site], len(weeks), rng) for site, _ in SITES}
    for site, name in SITES:
        visits = _weeks(D(2025, 9, 8) + dt.timedelta(days=3 * int(site)), D(2026, 3, 27), 21)
        for v, day in enumerate(visits, start=1):
            k += 1
            out.append(_doc(
                f"CS-TL-01/Monitoring/Site {site}/Site {site} monitoring visit {v:02d} {_iso(day)}.md", "clin-drive", "CLIN", day,
                f"Site {site} monitoring visit {v:02d}", id=f"G-MON-{site}-{v:02d}", template="clinical/monitoring_report.md.j2",
                vars={"site": site, "site_name": name, "visit": f"{v:02d}", "date": _iso(day),
                      "kind": "site initiation" if v == 1 else "interim monitoring", "monitor": "Mia Reyes (Meridian)",
                      "enrolled": sum(n for wk, n in zip(weeks, per_week[site]) if wk <= day), "sdv": f"{rng.randint(20, 100)} %",
                      "findings": rng.sample(["Consent forms complete", "Two sample shipment logs unsigned; corrected on site",
                                              "Freezer temperature log complete", "Delegation log updated",
                                              "One late CRF entry; query raised", "Discharge letters pending for some subjects"], 2),
                      "followup": "Open items tracked in the monitoring tracker."}))
    for w, day in enumerate(weeks, start=1):
        rows = []
        for s, _ in SITES:
            enrolled = per_week[s][w - 1]
            rows.append([_iso(day), s, enrolled + rng.randint(1, 6), enrolled, enrolled, rng.randint(0, 6)])
        out.append(_doc(f"CS-TL-01/Enrollment/Enrollment week ending {_iso(day)}.csv", "clin-drive", "CLIN", day,
                        f"Enrollment week ending {_iso(day)}", id=f"G-ENR-{w:03d}", template="clinical/enrollment.csv.j2",
                        vars={"rows": rows}))
    for m, first in enumerate(_months((2025, 10), (2026, 3)), start=1):
        out.append(_note(f"CS-TL-01/Data management/Query report {first:%Y-%m}.md", "clin-drive", "CLIN", first,
                         f"Query report {first:%Y-%m}", f"G-QRY-{m:02d}", f"CS-TL-01 data query report {first:%B %Y}",
                         f"Open queries: {rng.randint(3, 40)}. Closed this month: {rng.randint(10, 60)}. No systematic data issue."))
    return out


def _quality(rng: random.Random) -> list[dict[str, Any]]:
    out = []
    for k, first in enumerate(_months((2024, 7), (2026, 6)), start=1):
        lot = f"CT-{first:%y%m}"
        manufactured = first + dt.timedelta(days=2)
        released = manufactured + dt.timedelta(days=rng.randint(8, 14))
        tests = [["Control recovery L1", "90-110 %", f"{rng.uniform(95, 105):.1f} %", "pass"],
                 ["Control recovery L2", "90-110 %", f"{rng.uniform(95, 105):.1f} %", "pass"],
                 ["Calibration verification", "within ±10 %", f"{rng.uniform(-5, 5):+.1f} %", "pass"],
                 ["Fill volume", "conforms", "conforms", "pass"]]
        out.append(_doc(f"Lot release/{first.year}/{lot} lot release record.md", "qa-drive", "QA-REL", released,
                        f"{lot} lot release record", id=f"G-LOT-{k:03d}", template="qms/lot_release.md.j2",
                        vars={"product": "TropoLume cTnI assay", "lot": lot, "manufactured": _iso(manufactured),
                              "expiry": _iso(manufactured + dt.timedelta(days=365)), "purpose": "commercial",
                              "kits": rng.randint(800, 1400), "tests": tests, "disposition": "released",
                              "released": _iso(released), "releaser": "Paul Moreau", "comment": ""}))
        rows = []
        for c in range(rng.randint(2, 6)):
            day = first + dt.timedelta(days=rng.randint(0, 27))
            rows.append([f"CMP-{first:%y%m}-{c + 1:02d}", _iso(day), "TropoLume cTnI", f"CT-{rng.choice([first.year - 2001, first.year - 2000])}{rng.randint(1, 12):02d}",
                         rng.choice(["shifted controls", "damaged kit", "late delivery", "label legibility", "unexpected result (investigated)"]),
                         "customer report", "closed" if day < first + dt.timedelta(days=20) else "open"])
        day = first + dt.timedelta(days=27)
        out.append(_doc(f"Complaints/{first.year}/Complaint log {first:%Y-%m}.csv", "qa-drive", "QA", day,
                        f"Complaint log {first:%Y-%m}", id=f"G-CMP-{k:03d}", template="qms/complaint_log.csv.j2",
                        vars={"rows": sorted(rows)}))
    for k, day in enumerate([D(2025, 2, 10), D(2025, 6, 16), D(2025, 10, 13), D(2026, 2, 9)], start=1):
        audit = f"IA-{day.year}-{k:02d}"
        out.append(_note(f"Internal audits/{audit} internal audit report.md", "qa-drive", "QA", day, f"Internal audit {audit}",
                         f"G-IA-{k:02d}", f"Internal audit {audit} ({_iso(day)})",
                         f"Auditor: Daniel Kerr. {rng.randint(0, 3)} minor findings; no major finding. CAPAs tracked in the QMS."))
    for k, first in enumerate(_months((2025, 6), (2026, 4)), start=1):
        day = first + dt.timedelta(days=10)
        batch = f"Bead coating batch BC-{first:%y%m}"
        out.append(_note(f"Batch records/{first.year}/{batch} record.md", "mfg-drive", "MFG", day, batch, f"G-BC-{k:03d}", batch,
                         f"Date {_iso(day)}. Operator: Astrid Olsen's team. Coating yield {rng.uniform(88, 97):.1f} %. Conforms."))
    for k, title in enumerate(["Org chart", "Holiday calendar 2026", "Benefits overview", "Remote work policy",
                               "Performance review cycle", "Hiring plan 2026"], start=1):
        out.append(_note(f"Policies/{title}.md", "hr-drive", "HR", D(2025, 12, 1), title, f"G-HR-{k:02d}", title,
                         "Maintained by Nora Field (HR).", classification="confidential"))
    return out


def _regulatory(rng: random.Random) -> list[dict[str, Any]]:
    out = []
    topics = ["guidance on troponin assay performance claims", "labeling of biotin interference",
              "modular PMA review timelines", "post-approval study reports", "sample type supplements",
              "clinical study data integrity", "cybersecurity of analyzers", "unique device identification"]
    for k, day in enumerate(_weeks(D(2025, 9, 5), D(2026, 6, 26), 14), start=1):
        out.append(_note(f"Regulatory intelligence/{day.year}/RI digest {_iso(day)}.md", "ra-drive", "RA", day,
                         f"Regulatory intelligence digest {_iso(day)}", f"G-RI-{k:03d}", f"Regulatory intelligence digest — {_iso(day)}",
                         f"This fortnight: {rng.choice(topics)}; {rng.choice(topics)}. No action for P250031 unless noted by the PMA lead."))
    for k, day in enumerate([D(2025, 11, 18), D(2026, 2, 3), D(2026, 2, 27)], start=1):
        out.append(_note(f"PMA P250031/Correspondence/CDR acknowledgement {k:02d} {_iso(day)}.md", "ra-drive", "RA", day,
                         f"CDR acknowledgement {k:02d}", f"G-ACK-{k:02d}", f"Center for Device Review — acknowledgement ({_iso(day)})",
                         "The module was received and is under review."))
    return out


def _desk(rng: random.Random) -> list[dict[str, Any]]:
    out = []
    notes = ["Things to follow up this week", "Reading list", "One-to-one notes", "Ideas for the next quarter"]
    for person in PEOPLE:
        for k, title in enumerate(rng.sample(notes, 3), start=1):
            day = D(2026, 1, 5) + dt.timedelta(days=rng.randint(0, 90))
            out.append(_note(f"{person}/{title}.md", "desk", None, day, title, f"G-DESK-{person}-{k}", title,
                             f"Personal notes ({_iso(day)}). Nothing here is a controlled record.", owner=person))
    return out


def _mail(rng: random.Random) -> list[dict[str, Any]]:
    out = []
    subjects = [("PMA core team — agenda", "list-pma-core"), ("Lab safety refresher", "list-all"),
                ("Cold room access this weekend", "list-all"), ("Monthly quality metrics", "list-pma-core")]
    senders = {"list-pma-core": ["mokafor", "hvoss", "dkerr"], "list-all": ["nfield", "ehartwell", "aolsen"]}
    for k, day in enumerate(_weeks(D(2025, 9, 1), TASK_HORIZON, 9), start=1):
        subject, group = subjects[k % len(subjects)]
        out.append({"id": f"MAIL-GEN-{k:03d}", "kind": "mail", "date": _iso(day), "time": f"{rng.randint(8, 17):02d}:{rng.randint(0, 59):02d}",
                    "sender": rng.choice(senders[group]), "to": [group], "subject": subject,
                    "body": f"Hello all,\n\n{subject}: details in the usual folder.\n\nThanks\n"})
    for k, day in enumerate(_weeks(D(2025, 10, 6), TASK_HORIZON, 11), start=1):
        out.append({"id": f"CHAT-GEN-{k:03d}", "kind": "chat", "channel": "chan-release" if k % 2 else "chan-pma",
                    "date": _iso(day), "time": f"{rng.randint(8, 17):02d}:{rng.randint(0, 59):02d}",
                    "sender": rng.choice(["pmoreau", "aolsen"] if k % 2 else ["mokafor", "lnakamura", "rcosta"]),
                    "body": rng.choice(["Morning all — tracker updated.", "Reminder: stand-up moved to 10:30.",
                                        "Shipment left on time.", "Thanks for the quick review."])})
    return out


def generate(world: Any, rng: random.Random) -> dict[str, list[dict[str, Any]]]:
    documents: list[dict[str, Any]] = []
    for part in (_sops, _minutes, _newsletters, _verification, _clinical, _quality, _regulatory, _desk):
        documents += part(rng)
    return {"documents": documents, "messages": _mail(rng)}

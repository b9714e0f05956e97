"""Personal and HR material: desk folders of every employee (owner only), the HR drive (annual
reviews, recruitment, absence) and the site leadership drive's budget and headcount files.

The six seat holders' desk folders are hand-written (data/stories/people_key.yaml); the
generator adds a few everyday items for everybody so that every desk looks lived in.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

TODO = ["Book the gowning requalification", "Finish the LMS items before Friday", "Reply to the IT ticket about the second screen",
        "Expense claim for the training course", "Check holiday balance with HR", "Prepare slides for the next team meeting",
        "Review the draft SOP sent by Document Control", "Order new safety glasses", "Update my CV for the internal job posting",
        "Send the spare-part list to Rachel", "Ask Jay about the curriculum for the new method", "Clean up my inbox folders"]
MEETING_NOTES = ["Team meeting: workload is high until the end of the quarter; overtime only by approval.",
                 "1-to-1: agreed to attend the aseptic processing course in spring.",
                 "Project sync: dates slipped by two weeks, risk log updated.",
                 "Training debrief: the GDP refresher was useful; the quiz had two ambiguous questions.",
                 "Call with the vendor: quote for the spare parts expected next week.",
                 "Shift handover issues: the night shift asks for clearer notes on open work orders."]
IDEAS = ["Idea: visual board for open deviations per team.", "Idea: QR codes on equipment to open the EQS status page.",
         "Idea: shorter SOPs with work instructions for the detail.", "Idea: pair new starters with a buddy for the first month.",
         "Idea: automate the weekly metrics export."]
SEATED = {"moyelaran", "ogallagher", "abello", "twielicki", "lhoffmann", "dferreira"}


def build(ctx: Any, core: Any) -> None:
    rng = ctx.rng("people_files")
    for pid in ctx.employees:
        if pid in SEATED:
            continue
        n = rng.randint(1, 3)
        for k in range(n):
            day = core.workday(dt.date(2025, 1, 6) + dt.timedelta(days=rng.randint(0, 410)))
            kind = rng.choice(["todo", "notes", "idea"])
            if kind == "todo":
                text = "To do\n" + "".join(f"- [ ] {t}\n" for t in rng.sample(TODO, k=rng.randint(3, 5)))
                name = "to-do list"
            elif kind == "notes":
                text = f"Notes {core.long(day)}\n\n{rng.choice(MEETING_NOTES)}\n"
                name = f"notes {day.isoformat()}"
            else:
                text = rng.choice(IDEAS) + "\n"
                name = "ideas"
            path = f"{pid}/{name}.md" if k == 0 or kind != "todo" else f"{pid}/{name} {k}.md"
            key = f"desk/{path}"
            if key in ctx._paths:
                continue
            ctx.doc(id=f"DOC-DESK-{pid}-{k}", system="desk", path=path, title=name, text=text, owner=pid,
                    classification="confidential", visible_from=day)
    for pid in ctx.employees:
        if f"DOC-HR-REVIEW-{pid.upper()}" in ctx.hand_ids:
            continue
        day = core.workday(dt.date(2025, 12, 1) + dt.timedelta(days=rng.randint(0, 14)))
        rating = rng.choice(["meets expectations", "meets expectations", "exceeds expectations", "partially meets expectations"])
        ctx.doc(id=f"DOC-HR-REVIEW-{pid}", system="hr-drive", path=f"Employee files/{ctx.name(pid)}/2025 annual review.docx",
                title=f"2025 annual review — {ctx.name(pid)}",
                text=f"Rating: {rating}. Salary increase {rng.choice(['2.5', '3.0', '3.0', '3.5', '4.0'])} %. Development goal agreed with the line manager.\n",
                department="HR", classification="confidential", visible_from=day)
    for k, (role, dept) in enumerate((("QC Chemist", "QC-CHEM"), ("Filling Operator", "MFG-FILL"), ("Validation Engineer", "ENG"),
                                      ("Regulatory CMC Specialist", "RA"))):
        day = dt.date(2025, 3 + 2 * k, 10)
        ctx.doc(id=f"DOC-HR-REQ-{k + 1}", system="hr-drive", path=f"Recruitment/{day.isoformat()} requisition {role}.md",
                title=f"Job requisition {role}",
                text=f"# Job requisition — {role}\n\nDepartment: {ctx.dept_name(dept)}\nReason: {rng.choice(['replacement', 'growth (PFS launch)'])}\nBand: C{rng.randint(2, 4)}\nStatus: {rng.choice(['open', 'offer made', 'filled'])}\n",
                department="HR", classification="confidential", visible_from=day)
    for month in core.month_starts(core.HISTORY_START, core.WORLD_END):
        day = core.add_workdays(month, 2)
        ctx.doc(id=f"DOC-HR-ABSENCE-{month.year}-{month.month:02d}", system="hr-drive",
                path=f"Absence/{month.year}/Absence report {month.year}-{month.month:02d}.csv", title="Absence report",
                text="department,sick_days,planned_leave_days\n" + "".join(
                    f"{ctx.dept_name(d)},{rng.randint(0, 14)},{rng.randint(5, 60)}\n" for d in ("QC", "QA", "MFG", "MSAT", "ENG", "SC")),
                department="HR", classification="confidential", visible_from=day)
    ctx.doc(id="DOC-LEAD-BUDGET-2026", system="lead-drive", path="Budget/Site budget 2026.csv", title="Site budget 2026",
            text="cost_centre,opex_keur,capex_keur\nQuality Control,2480,310\nQuality Assurance,1390,40\nManufacturing,6120,880\n"
                 "MSAT,1460,120\nEngineering & Validation,2210,1350\nSupply Chain,980,60\nRegulatory Affairs,610,0\nHR,420,0\n",
            department="SITE-LEAD", classification="restricted", visible_from=dt.date(2025, 12, 8))
    ctx.doc(id="DOC-LEAD-HEADCOUNT-2026", system="lead-drive", path="Headcount/Headcount plan 2026.md", title="Headcount plan 2026",
            text="# Headcount plan 2026\n\n+2 Filling Operators (FL-2 second shift), +1 QC Chemist, +1 Validation Engineer, +1 Regulatory CMC Specialist (PFS filing).\nNo reductions planned.\n",
            department="SITE-LEAD", classification="restricted", visible_from=dt.date(2025, 12, 8))
    ctx.doc(id="DOC-LEAD-STRATEGY", system="lead-drive", path="Strategy/Riverbend site strategy 2026-2028.md", title="Site strategy",
            text="# Site strategy 2026–2028\n\n1. Launch the Zelvara PFS and reach 1.2 million syringes per year.\n2. Extend the Zelvara vial shelf life to 36 months.\n3. Second lyophiliser for Tamsorel growth (decision next year).\n4. Inspection readiness: zero major findings.\n",
            department="SITE-LEAD", classification="confidential", visible_from=dt.date(2025, 11, 17))

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
                vars={"record": f"EQ-{eq_id}", "equipment": eq_id, "label": eq["label"]},
                department="ENG", visible_from=dt.date.fromisoformat(eq["installed"]) if eq["installed"] > "2023-12-01" else dt.date(2023, 12, 1))


def _dept(number: str) -> str:
    code = number.split("-")[1]
    return {"QC": "QC", "QA": "QA", "MFG": "MFG", "MSAT": "MSAT", "ENG": "ENG", "SC": "SC", "SQ": "SQ", "RA": "RA",
            "HR": "HR", "EHS": "ENG"}[code]

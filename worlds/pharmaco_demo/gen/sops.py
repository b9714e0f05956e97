"""SOPs from the banks: every version on the site drive, plus what each revision inside the
history window leaves behind — a document change control, read-and-understand training records
for the owning department, and the document-control announcement.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

FOLDERS = {
    "QC": "Quality Control", "QA": "Quality Assurance", "MFG": "Manufacturing", "MSAT": "MSAT",
    "ENG": "Engineering", "SC": "Supply Chain", "SQ": "Supplier Quality", "RA": "Regulatory Affairs",
    "HR": "Human Resources",
}
STERILITY = {"SOP-MFG-002", "SOP-MFG-004", "SOP-MFG-022", "SOP-QC-040", "SOP-QC-046", "SOP-MFG-008"}
HEADS = {"QC": "gokafor", "QA": "evasquez", "MFG": "rcallahan", "MSAT": "jlindqvist", "ENG": "sgrant",
         "SC": "nlarsen", "SQ": "hdahl", "RA": "isorensen", "HR": "anwosu"}
LISTS = {"QC": "list-qc", "QA": "list-qa", "MFG": "list-mfg", "MSAT": "list-msat", "ENG": "list-eng",
         "SC": "list-sc", "SQ": "list-sq", "RA": "list-ra", "HR": "list-site"}
QA_APPROVERS = ("rokonkwo", "pdoyle", "mrossi")


def top(dept: str) -> str:
    return dept.split("-")[0]


def sop_path(number: str, version: int, title: str, dept: str) -> str:
    return f"Quality System/SOPs/{FOLDERS[top(dept)]}/{number} v{version} {title}.md"


def sop_doc_id(number: str, version: int) -> str:
    return f"DOC-{number}-V{version}"


def _as_date(value: Any) -> dt.date:
    return value if isinstance(value, dt.date) else dt.date.fromisoformat(str(value))


def _steps(section: dict[str, Any], version: int) -> list[str]:
    out = []
    for step in section["steps"]:
        if isinstance(step, str):
            out.append(step)
        elif step.get("since", 1) <= version <= step.get("until", 99):
            out.append(step["text"])
    return out


def build(ctx: Any, core: Any) -> None:
    rng = ctx.rng("sops")
    topics: list[dict[str, Any]] = []
    for name in ("sops_qc", "sops_qa", "sops_ops", "sops_support"):
        topics.extend(ctx.bank(name)["sops"])
    topics.sort(key=lambda t: t["number"])
    register: list[dict[str, Any]] = []
    ctx.shared.setdefault("ccs", [])
    ctx.shared["sop_titles"] = {}
    for topic in topics:
        number, title, dept = topic["number"], topic["title"], topic["dept"]
        ctx.shared["sop_titles"][number] = title
        dates = [dt.date.fromisoformat(d) for d in topic["versions"]]
        staff = ctx.members(dept) or ctx.members(top(dept))
        author = topic.get("author") or core.pick(rng, sorted(staff))
        head = HEADS[top(dept)]
        history = [[1, dates[0].isoformat(), "New procedure."]]
        for version, effective in enumerate(dates, start=1):
            if version > 1:
                history.append([version, effective.isoformat(), topic.get("history", {}).get(version, "Periodic review; editorial changes.")])
            sections = [{"heading": s["heading"], "steps": _steps(s, version)} for s in topic["sections"]]
            qa = QA_APPROVERS[(version + len(number)) % len(QA_APPROVERS)]
            approvers = [f"{ctx.name(head)} ({ctx.title(head)})"]
            if not dept.startswith("QA") or head != "evasquez":
                approvers.append(f"{ctx.name(qa)} (QA)")
            successor = sop_doc_id(number, version + 1) if version < len(dates) else None
            until = dates[version + 1] if version + 1 < len(dates) else None
            ctx.doc(
                id=sop_doc_id(number, version),
                system="site-drive",
                path=sop_path(number, version, title, dept),
                title=f"{number} {title} v{version}",
                template="sop/sop_legacy.md.j2" if effective.year < 2022 else "sop/sop.md.j2",
                vars={
                    "number": number, "title": title, "version": version, "author": ctx.name(author), "approvers": approvers,
                    "review_years": 2 if number in STERILITY else 3, "purpose": topic["purpose"],
                    "scope": topic["scope"], "out_of_scope": topic.get("out_of_scope", ""),
                    "responsibilities": topic["responsibilities"], "definitions": topic.get("definitions", []),
                    "sections": sections, "forms": topic.get("forms", []), "references": topic["references"],
                    "history": [list(h) for h in history],
                },
                department=dept,
                visible_from=effective,
                superseded_by=successor,
                visible_until=until,
            )
            register.append({"number": number, "version": version, "title": title, "dept": dept,
                             "effective": effective.isoformat()})
            if version > 1 and effective >= core.HISTORY_START:
                _revision_trail(ctx, core, rng, topic, version, effective, author, head, qa)
    ctx.shared["sop_register"] = register


def _revision_trail(ctx: Any, core: Any, rng: Any, topic: dict[str, Any], version: int, effective: dt.date,
                    author: str, head: str, qa: str) -> None:
    number, title, dept = topic["number"], topic["title"], topic["dept"]
    summary = topic.get("history", {}).get(version, "Periodic review; editorial changes.")
    created = core.add_workdays(effective, -rng.randint(28, 45))
    approved = core.add_workdays(effective, -rng.randint(6, 12))
    hand = ctx.hand_records.get(topic.get("cc", ""))
    if hand:  # a hand-written change control drives this revision: use its dates
        created = _as_date(hand["events"][0]["date"])
        approved = next(_as_date(e["date"]) for e in hand["events"] if e.get("status") == "approved")
    cc_id = topic.get("cc") or ctx.next_id("CC", created.year, day=created)
    events = [
        {"date": created, "kind": "created", "by": author, "status": "open",
         "fields": {"change_type": "document", "description": f"Revise {number} ({title}) to version {version}: {summary}",
                    "affected_documents": [f"{number} v{version - 1}"], "regulatory_impact": "none (internal procedure)",
                    "training_required": True, "originating_department": dept}},
        {"date": core.add_workdays(created, rng.randint(2, 6)), "kind": "update", "by": "gmorris", "status": "impact assessment",
         "fields": {"impact_assessment": f"Procedure change only; training of {ctx.dept_name(top(dept))} staff before the effective date."}},
        {"date": approved, "kind": "approval", "by": qa, "status": "approved", "note": "Approved; effective date set by Document Control."},
        {"date": effective, "kind": "status", "by": "hbrandt", "status": "implemented",
         "note": f"{number} v{version} published on the site drive; previous version marked superseded."},
    ]
    closed = core.add_workdays(effective, rng.randint(12, 30))
    if closed <= core.WORLD_END:
        events.append({"date": closed, "kind": "status", "by": "gmorris", "status": "closed",
                       "note": "Training completion verified; change closed."})
    if not topic.get("cc"):
        ctx.record(id=cc_id, system="qms", type="change_control", title=f"Revision of {number} to v{version}",
                   events=events, department=dept, owner=author)
    ctx.shared["ccs"].append({"id": cc_id, "created": created, "approved": approved, "title": f"Revision of {number} to v{version}",
                              "dept": dept, "kind": "document", "summary": summary})
    # read-and-understand training for the owning department
    trainees = sorted(p for p in ctx.members(top(dept)) if p != author)
    for person in trainees:
        done = core.add_workdays(approved, rng.randint(1, 9))
        late = rng.random() < 0.08
        if late:
            done = core.add_workdays(effective, rng.randint(2, 8))
        tr_events = [{"date": approved, "kind": "created", "by": "jpatel", "status": "assigned",
                      "fields": {"item": f"{number} v{version}", "type": "read and understand",
                                 "due": "before effective date", "curriculum": ctx.dept_name(top(dept))}}]
        if done <= core.WORLD_END:
            tr_events.append({"date": done, "kind": "status", "by": person, "status": "completed",
                              "fields": {"completed_late": late} if late else {},
                              "note": "Read and understood (e-signature)."})
        ctx.record(id=f"TR-{number}-V{version}-{person}", system="lms", type="training_record",
                   title=f"Read & understand {number} v{version} — {ctx.name(person)}", events=tr_events,
                   department=ctx.dept_of(person), owner=person)
    if approved <= core.WORLD_END:
        ctx.mail(
            id=f"MAIL-DC-{number}-V{version}", date=approved, time=core.clock(rng, 14, 17), sender="hbrandt",
            to=[LISTS[top(dept)]],
            subject=f"Document Control: {number} v{version} approved — training assigned",
            body=(
                f"Hello all,\n\n{number} \"{title}\" version {version} has been approved under {cc_id}.\n\n"
                f"What changed: {summary}\n\n"
                f"A read-and-understand item is assigned to you in the LMS. Please complete it before the "
                f"effective date (in {rng.choice(('six', 'seven', 'eight', 'ten'))} working days). Until then, "
                f"version {version - 1} remains in force.\n\nKind regards,\nHannah Brandt\nDocument Control\n"
            ),
        )

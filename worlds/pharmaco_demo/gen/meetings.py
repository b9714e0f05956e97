"""Minutes of the recurring meetings, built from what the other parts recorded up to each
meeting's date (never later): change controls raised and approved, deviations, batches.

Minutes that a task rests on are hand-written in data/stories with the id
`DOC-MIN-<SERIES>-<date>`; the generator leaves those dates alone.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

SCHEDULE = {  # weekday (0 = Monday), every n weeks, first date
    "crb": (1, 2, dt.date(2025, 1, 7)),
    "qc_council": ("first-thu", 0, None),
    "ehs": ("second-wed", 0, None),
    "tier2": (0, 1, dt.date(2025, 1, 6)),
    "msat_forum": (3, 2, dt.date(2025, 1, 9)),
    "qc_lab": (2, 1, dt.date(2025, 1, 29)),  # the weekly minutes are on the drive since the lab moved to the new template
    "sq_review": ("third-tue", 0, None),
    "ra_review": ("last-fri", 0, None),
    "slt": ("second-mon", 0, None),
}
DEPT_OF = {"crb": "QA", "qc_council": "QA", "ehs": "ENG", "tier2": "MFG", "msat_forum": "MSAT", "qc_lab": "QC",
           "sq_review": "SQ", "ra_review": "RA", "slt": "SITE-LEAD"}
CLASS = {"slt": "confidential", "sq_review": "confidential"}


def _monthly(rule: str, start: dt.date, end: dt.date, core: Any) -> list[dt.date]:
    out = []
    for month in core.month_starts(start, end):
        if rule == "last-fri":
            day = core.add_months(month, 1) - dt.timedelta(days=1)
            while day.weekday() != 4:
                day -= dt.timedelta(days=1)
        else:
            nth, name = rule.split("-")
            weekday = {"mon": 0, "tue": 1, "wed": 2, "thu": 3}[name]
            day = month + dt.timedelta(days=(weekday - month.weekday()) % 7)
            day += dt.timedelta(days=7 * {"first": 0, "second": 1, "third": 2}[nth])
        if start <= day <= end:
            out.append(day)
    return out


def dates_for(key: str, core: Any) -> list[dt.date]:
    rule, every, first = SCHEDULE[key]
    if isinstance(rule, str):
        return _monthly(rule, core.HISTORY_START, core.WORLD_END, core)
    return core.weekdays(first, core.WORLD_END, rule, every)


def build(ctx: Any, core: Any) -> None:
    bank = ctx.bank("meetings")["series"]
    ccs = ctx.shared["ccs"]
    devs = ctx.shared.get("deviations", [])
    batches = ctx.shared["batches"]
    for key, series in bank.items():
        rng = ctx.rng(f"meetings:{key}")
        previous: dt.date | None = None
        for number, day in enumerate(dates_for(key, core), start=1):
            doc_id = f"DOC-MIN-{key.upper().replace('_', '-')}-{day.isoformat()}"
            since = previous or (day - dt.timedelta(days=14))
            previous = day
            if doc_id in ctx.hand_ids:
                continue
            attendees = list(series["attendees"])
            absent = sorted(rng.sample(attendees[1:], k=rng.randint(0, 2)))
            topics = rng.sample(series["topics"], k=min(len(series["topics"]), rng.randint(2, 4)))
            slots = {"oee": rng.randint(61, 78), "adh": rng.randint(84, 98), "vi": rng.randint(1, 4),
                     "backlog": rng.randint(18, 64), "tat": rng.randint(4, 9), "coa": rng.randint(0, 3),
                     "scn": rng.randint(0, 2), "pending": rng.randint(1, 5), "fin": rng.randint(96, 104),
                     "otif": rng.randint(91, 99)}
            topics = [core.fill(t, **slots) for t in topics]
            new_ccs = [c for c in ccs if since < c["created"] <= day]
            approved = [c for c in ccs if c["approved"] and since < c["approved"] <= day]
            window_devs = [d for d in devs if since < d["date"] <= day]
            produced = [b for b in batches if since < b["fill"] <= day]
            released = [b for b in batches if b["released"] and since < b["released"] <= day]
            facts = {
                "new_ccs": [[c["id"], c["title"], ctx.dept_name(c["dept"])] for c in sorted(new_ccs, key=lambda c: c["created"])],
                "approved_ccs": [[c["id"], c["title"]] for c in sorted(approved, key=lambda c: c["approved"])],
                "majors": [[d["id"], d["title"]] for d in window_devs if d["major"]],
                "dev_count": len(window_devs),
                "dept_devs": [[d["id"], d["title"]] for d in window_devs if d["dept"].startswith(DEPT_OF[key])],
                "produced": [b["batch"] for b in sorted(produced, key=lambda b: b["fill"])],
                "released": [b["batch"] for b in sorted(released, key=lambda b: b["released"])],
            }
            actions = _actions(ctx, rng, key, facts, attendees)
            publish = core.add_workdays(day, rng.randint(1, 3))
            if publish > core.WORLD_END:
                continue
            ctx.doc(id=doc_id, system=series["system"],
                    path=f"{core.fill(series['folder'], year=day.year)}/{day.isoformat()} {series['name']} minutes.md",
                    title=f"{series['name']} minutes {day.isoformat()}", template=series["template"],
                    vars={"series": series["name"], "number": number, "date": day.isoformat(),
                          "chair": ctx.name(series["chair"]),
                          "present": [ctx.name(p) for p in attendees if p not in absent],
                          "apologies": [ctx.name(p) for p in absent], "topics": topics, "facts": facts,
                          "actions": actions, "minute_taker": ctx.name(rng.choice(attendees[1:]))},
                    department=DEPT_OF[key], classification=CLASS.get(key, "internal"), visible_from=publish)


def _actions(ctx: Any, rng: Any, key: str, facts: dict[str, Any], attendees: list[str]) -> list[list[str]]:
    out: list[list[str]] = []
    for cc in facts["new_ccs"][:2]:
        out.append([ctx.name(rng.choice(attendees)), f"Circulate the impact assessment of {cc[0]} to the affected departments."])
    for dev in facts["majors"][:2]:
        out.append([ctx.name(rng.choice(attendees)), f"Present the root cause of {dev[0]} at the next meeting."])
    if not out:
        out.append([ctx.name(rng.choice(attendees)), rng.choice([
            "Update the tracker before the next meeting.", "Confirm owners for the open items.",
            "Share the slides with the absent members.", "Check the resourcing proposal with HR."])])
    return out

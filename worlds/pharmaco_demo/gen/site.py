"""Site-wide shared-drive content: newsletters, announcements (and their mails), policies,
monthly environmental-monitoring, utilities and training-compliance reports, safety bulletins,
the live organisation chart and phone list, and last year's product quality reviews.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

ROOMS = [("FF-1 filling room (RABS)", "A", 0), ("FF-1 background", "B", 10), ("FF-2 isolator interior", "A", 0),
         ("FF-2 background", "C", 100), ("Formulation suite 2.10", "C", 100), ("Component preparation 2.04", "C", 100),
         ("Corridors and airlocks", "D", 200)]
SAFETY = ["Manual handling of drums: use the drum tilter", "Hydrogen peroxide: eye protection is mandatory",
          "Slips and trips in wet areas", "Working at height: ladders inspection", "Liquid nitrogen handling in QC",
          "Forklift and pedestrian routes in the warehouse", "Sharp objects: broken glass at visual inspection",
          "Heat stress in the autoclave area", "Lock-out/tag-out before maintenance", "Chemical spill response refresher",
          "Display screen ergonomics", "Winter: cold stress in the cold room", "Noise in the compressor room",
          "Cryogenic gloves and face shields", "Electrical safety of extension leads", "Emergency eyewash stations"]


def build(ctx: Any, core: Any) -> None:
    rng = ctx.rng("site")
    bank = ctx.bank("site")
    news = list(bank["news"])
    rng.shuffle(news)
    months = core.month_starts(core.HISTORY_START, core.WORLD_END)
    register = ctx.shared.get("sop_register", [])
    batches = ctx.shared["batches"]
    for i, month in enumerate(months):
        prev = core.add_months(month, -1)
        issue = core.workday(month + dt.timedelta(days=1))
        fitting = [n.split("|", 1)[-1] for n in news if "|" not in n or n.split("|")[0] <= f"{month.year}-{month.month:02d}"]
        items = [fitting[(i * 3 + k) % len(fitting)] for k in range(rng.randint(2, 4))]
        released = [b for b in batches if b["released"] and prev <= b["released"] < month]
        new_sops = [r for r in register if prev <= dt.date.fromisoformat(r["effective"]) < month]
        ctx.doc(id=f"DOC-NEWS-{month.year}-{month.month:02d}", system="site-drive",
                path=f"Site/Newsletter/{month.year}-{month.month:02d} Riverbend newsletter.md",
                title=f"Riverbend newsletter {month.strftime('%B %Y')}", template="site/newsletter.md.j2",
                vars={"month": month.strftime("%B %Y"), "news": items, "released": len(released),
                      "sops": [[r["number"], r["version"], r["title"]] for r in new_sops],
                      "safety_days": 40 + i * 30 + rng.randint(0, 9), "editor": ctx.name("mjensen")},
                department="SITE-LEAD", classification="public", visible_from=issue)
        _em_report(ctx, core, rng, prev, month)
        _utilities(ctx, core, rng, prev, month)
        _training(ctx, core, rng, prev, month)
        topic = SAFETY[i % len(SAFETY)]
        ctx.doc(id=f"DOC-SAFETY-{month.year}-{month.month:02d}", system="site-drive",
                path=f"Site/EHS/Safety bulletins/{month.year}-{month.month:02d} {topic}.md",
                title=f"Safety bulletin: {topic}", template="site/safety_bulletin.md.j2",
                vars={"topic": topic, "month": month.strftime("%B %Y"), "author": ctx.name("tmensah"),
                      "near_misses": rng.randint(2, 9), "first_aid": rng.randint(0, 3)},
                department="ENG", classification="public", visible_from=issue)
    for k, (title, text, author) in enumerate(bank["announcements"]):
        day = core.workday(core.HISTORY_START + dt.timedelta(days=17 + k * 37 + rng.randint(0, 9)))
        ctx.doc(id=f"DOC-ANN-{k + 1:02d}", system="site-drive", path=f"Site/Announcements/{day.isoformat()} {title}.md",
                title=title, text=f"# {title}\n\n{text}\n\n— {ctx.name(author)}, {ctx.title(author)}\n",
                department=ctx.dept_of(author), classification="public", visible_from=day)
        ctx.mail(id=f"MAIL-ANN-{k + 1:02d}", date=day, time=core.clock(rng, 8, 11), sender=author, to=["list-site"],
                 subject=title, body=f"Dear colleagues,\n\n{text}\n\nBest regards,\n{ctx.name(author)}\n")
    for k, (title, text) in enumerate(bank["records_policy"]):
        ctx.doc(id=f"DOC-POLICY-{k + 1:02d}", system="site-drive", path=f"Site/Policies/{title}.md", title=title,
                template="site/policy.md.j2",
                vars={"title": title, "text": text, "owner": ctx.name("evasquez" if k < 3 else "hmarsh"), "version": 2 + k % 3},
                department="SITE-LEAD", classification="public", visible_from=dt.date(2023, 1, 9 + k))
    ctx.doc(id="DOC-ORGCHART", system="site-drive", path="Site/Organisation/Riverbend organisation chart.md",
            title="Organisation chart (HR system export)", template="site/orgchart.md.j2", vars={},
            department="HR", visible_from=dt.date(2024, 1, 8))
    ctx.doc(id="DOC-PHONELIST", system="site-drive", path="Site/Organisation/Phone and e-mail list.csv",
            title="Phone and e-mail list", template="site/phonelist.csv.j2", vars={},
            department="HR", visible_from=dt.date(2024, 1, 8))
    _apqr(ctx, core, rng)


def _em_report(ctx: Any, core: Any, rng: Any, start: dt.date, month: dt.date) -> None:
    if start < core.HISTORY_START:
        return
    devs = [d for d in ctx.shared.get("deviations", []) if d["pattern"] in ("em-grade-a", "em-grade-b")
            and start <= d["date"] < month]
    rows = []
    for room, grade, limit in ROOMS:
        samples = rng.randint(60, 140) if grade in "AB" else rng.randint(20, 50)
        alerts = 0 if grade == "A" else rng.randint(0, 3)
        rows.append([room, grade, samples, alerts, 0])
    for d in devs:
        idx = 0 if d["pattern"] == "em-grade-a" else 1
        rows[idx][4] += 1
    ctx.doc(id=f"DOC-EM-{start.year}-{start.month:02d}", system="site-drive",
            path=f"Quality Control/Environmental Monitoring/{start.year}/{start.year}-{start.month:02d} EM monthly summary.md",
            title=f"EM monthly summary {start.strftime('%B %Y')}", template="site/em_summary.md.j2",
            vars={"month": start.strftime("%B %Y"), "rows": rows, "deviations": [[d["id"], d["title"]] for d in devs],
                  "author": ctx.name("pkaur"), "approver": ctx.name("azimmermann"),
                  "notes": core.notes(ctx, "em", f"{start:%Y-%m}", 1, 3),
                  "comment": rng.choice(["No adverse trend.", "Alert-level recoveries in grade B are within the historical range.",
                                         "One grade B alert cluster in week 3 traced to a cleaning agent change; resolved.",
                                         "Gloves: one alert-level recovery; operator retrained."])},
            department="QC-MICRO", visible_from=core.add_workdays(month, rng.randint(4, 8)))


def _utilities(ctx: Any, core: Any, rng: Any, start: dt.date, month: dt.date) -> None:
    if start < core.HISTORY_START:
        return
    weeks = core.weekdays(start, month - dt.timedelta(days=1), 0)
    lines = ["week_starting,point,toc_ppb,conductivity_uS_cm,tamc_cfu_100ml,endotoxin_eu_ml,comment"]
    remarks = core.notes(ctx, "wfi", f"{start:%Y-%m}", 1, 3)
    at = ctx.rng(f"wfi-rows:{start:%Y-%m}").sample(range(len(weeks) * 3), k=len(remarks))
    for week in weeks:
        for point in ("WFI-RETURN", f"WFI-POU-{rng.randint(1, 14):02d}", f"WFI-POU-{rng.randint(1, 14):02d}"):
            row = len(lines) - 1
            comment = remarks[at.index(row)] if row in at else ""
            lines.append(f"{week.isoformat()},{point},{rng.randint(38, 140)},{rng.uniform(0.4, 0.9):.2f},"
                         f"{rng.choice([0, 0, 0, 0, 1, 2])},<0.05,{comment}")
    if start.month % 3:  # the drive keeps one month a quarter; the rest stay in the LIMS
        return
    ctx.doc(id=f"DOC-WFI-{start.year}-{start.month:02d}", system="site-drive",
            path=f"Engineering/Utilities/WFI trend {start.year}-{start.month:02d}.csv",
            title=f"WFI trend {start.strftime('%B %Y')}", text="\n".join(lines) + "\n", department="ENG",
            visible_from=core.add_workdays(month, 2))


def _training(ctx: Any, core: Any, rng: Any, start: dt.date, month: dt.date) -> None:
    if start < core.HISTORY_START or month.month % 3 != 1:
        return
    depts = ["RA", "MSAT", "QA", "SQ", "QC", "MFG", "ENG", "SC", "HR", "SITE-LEAD"]
    lines = ["department,people,assigned_items,completed_on_time_pct,overdue_items,reason_for_overdue"]
    label = f"{start.year}-Q{(start.month - 1) // 3 + 1}"
    reasons = core.notes(ctx, "training", label, 2, 4)
    noted = ctx.rng(f"training-rows:{label}").sample(range(len(depts)), k=len(reasons))
    for k, d in enumerate(depts):
        people = len(ctx.members(d))
        assigned = people * rng.randint(3, 9)
        reason = reasons[noted.index(k)] if k in noted else ""
        lines.append(f"{ctx.dept_name(d)},{people},{assigned},{rng.uniform(91, 99.6):.1f},{rng.randint(0, 6)},{reason}")
    ctx.doc(id=f"DOC-TRAINING-{start.year}-Q{(start.month - 1) // 3 + 1}", system="site-drive",
            path=f"Training/Compliance/Training compliance {start.year}-Q{(start.month - 1) // 3 + 1}.csv",
            title=f"Training compliance {start.year} Q{(start.month - 1) // 3 + 1}", text="\n".join(lines) + "\n",
            department="QA-COMP", visible_from=core.add_workdays(month, 5))


def _apqr(ctx: Any, core: Any, rng: Any) -> None:
    for product, batches, devs, ccs, complaints in (("PRD-ZLV-VIAL", 34, 21, 12, 7), ("PRD-TMS-LYO", 13, 9, 6, 4)):
        p = ctx.products[product]
        day = dt.date(2025, 3, 24) if product == "PRD-ZLV-VIAL" else dt.date(2025, 3, 31)
        ctx.doc(id=f"DOC-APQR-2024-{product}", system="site-drive",
                path=f"Quality Assurance/Product Quality Reviews/APQR 2024 {p.attributes['brand']}.md",
                title=f"APQR 2024 {p.name}", template="site/apqr.md.j2",
                vars={"product": product, "year": 2024, "batches": batches, "rejected": 1 if product == "PRD-TMS-LYO" else 0,
                      "deviations": devs, "majors": 3 if product == "PRD-ZLV-VIAL" else 2, "ccs": ccs, "complaints": complaints,
                      "cpk": "1.71" if product == "PRD-ZLV-VIAL" else "1.48",
                      "stability": ("All commitment-lot results within specification. Oxidised zelvotide is the attribute "
                                    "with the clearest trend (about 0.02 % per month at 5 °C)." if product == "PRD-ZLV-VIAL"
                                    else "All results within specification; water content increases slowly at 25 °C/60 % RH."),
                      "conclusion": "The process remains in a state of control; no change to specifications is proposed.",
                      "author": ctx.name("pdoyle")},
                department="QA-OPS", visible_from=day)

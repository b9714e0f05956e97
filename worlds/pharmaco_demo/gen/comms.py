"""Everyday mail and chat: deviation alerts, batch release notices, Change Review Board agendas,
pull-calendar and training reminders, quality council invitations, and channel chatter.

Bodies are literal text (no templates) so that a message reads the same at any projection date
and costs nothing to render; every body names only days up to its own date.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

CHANNELS: dict[str, tuple[list[str], list[str]]] = {
    "chan-general": (["mjensen", "scooper", "tmensah", "eolsen", "jmoore", "hwright", "ipopescu", "dsilva", "creyes", "kobrien"], [
        "Cake in the canteen for {name}'s last day — come by at 15:00!", "Whoever parked the grey estate across two spaces at gate B, please move it.",
        "Lost: blue badge holder near the wash bay. Handed in at reception?", "The coffee machine in building 2 is fixed.",
        "Reminder: fire alarm test at 11:00 today.", "Lights on in a white van registration RB-417, visitor car park.",
        "Anyone interested in a lunchtime running group? Tuesdays and Thursdays.", "Canteen: soup of the day is lentil, vegetarian option pasta bake.",
        "Printer on the first floor is out of toner again; IT ticket raised.", "Thanks to everyone who joined the charity quiz — we raised 640 for the hospice!"]),
    "chan-qc-lab": (["efischer", "rsingh", "cwalsh", "praman", "tnguyen", "mlopez", "jmurray", "pkaur"], [
        "{equipment} back in service after the pump seal change.", "Anyone have a spare C18 column for the Tamsorel method? Ours is at 2,000 injections.",
        "LIMS slow this morning — IT says indexing job, should be fine by 10:00.", "Release samples for {batch} logged, chemistry starts this afternoon.",
        "Mobile phase A prepared for tomorrow's sequences (solution log SL-{n}).", "KF-01 drift high, changed the anolyte.",
        "Reminder: monthly balance logbook review due Friday.", "Endotoxin reagent delivery delayed to next week.",
        "Sterility test for {batch} read day 14: no growth.", "Who took the 100 mL volumetric flasks from bench 3?"]),
    "chan-msat": (["falsayed", "bnakamura", "slindgren", "rmendes", "tharlow", "npetrova", "jlindqvist"], [
        "CPV chart for Zelvara vial updated with {batch}: no signals.", "Tamsorel cycle on LYO-1 for {batch}: Pirani/CM convergence at 31 h, as usual.",
        "Anyone used the new laser headspace analyser settings? The 1 mL syringe holder needs recalibration.",
        "Tech forum slides uploaded to the MSAT drive.", "FMEA workshop for FL-2 moved to next week.",
        "Reading: nice paper on oxygen ingress through COP barrels — link in the Teams folder.",
        "Dissolved oxygen before filtration for {batch}: 0.5 mg/L.", "Cleaning validation swab results for CV-2 all below 10 % of the limit."]),
    "chan-fill-finish": (["ajohnson", "dpark", "hwright", "nkowalczyk", "fmoreau", "lmartin", "yadeyemi"], [
        "FL-1 started {batch} at 06:10, all fill checks OK.", "Stopper bowl refill done, logged as inherent intervention.",
        "Visual inspection of {batch} finished, reject rate 0.9 %.", "PK-1 camera rejected 12 cartons for smudged print, ribbon changed.",
        "FL-2 isolator VHP cycle passed, glove tests OK.", "Line clearance for {batch} signed by QA.", "Capper head 3 torque alarm again — maintenance called.",
        "Need one more inspector for Saturday overtime, anyone?"]),
    "chan-qa-ops": (["lchen", "gmorris", "yadeyemi", "pdoyle", "aberg"], [
        "{batch} disposition package complete, with QP for certification.", "Deviation backlog: {n} open in QA review.",
        "Reminder: MES exceptions must be reviewed before the package goes to the QP.", "{batch} released.",
        "Complaint sample from the pharmacy received, retention samples pulled for comparison.",
        "Line clearance checklist FL-2 updated (rev 2) — use the new form from today."]),
    "chan-eng": (["tmensah", "rbarnes", "gduarte", "ioconnor", "pvolkov", "lferrari", "mchoi"], [
        "WO for {equipment} closed.", "PM backlog this week: {n} work orders.", "Calibration of {equipment} done, certificate in the EQS.",
        "Chiller 2 alarm reset, monitoring overnight.", "EMS gateway test this afternoon: expect test alarms on your phones.",
        "Spare belts for AHU-04 delivered.", "Automation: FL-1 HMI patch tested in the test environment."]),
    "chan-ra-cmc": (["cbernard", "kwatanabe", "moyelaran", "isorensen"], [
        "Sequence {n} published and validated.", "NMA portal maintenance on Saturday.", "Lifecycle table updated for Zelvara vial Module 3.",
        "Reminder: RA assessments pending for two change controls.", "Tamsorel renewal: starting the QOS outline.",
        "eCTD validator updated to the latest NMA criteria."]),
    "chan-suppliers": (["vsantos", "kmurphy", "hdahl", "wtan", "bnovak"], [
        "CoA from {supplier} had the wrong expiry date — corrected CoA requested.", "Scorecards for the quarter sent.",
        "Delivery from {supplier} arrived with a broken seal on one carton, quarantined.", "Audit plan draft for next year on the SQ drive.",
        "{supplier} questionnaire update received.", "ERP material master updated for the new label stock."]),
}
SUPPLIER_NAMES = ["Vetraglass", "Alucap", "Mannochem", "Surfacta", "Printpak", "Membrana", "Polyclear", "Plungertec"]
HISTORY_CHAT_START = dt.date(2025, 6, 2)
NO_NEW = "- no new change controls\n"


def build(ctx: Any, core: Any) -> None:
    rng = ctx.rng("comms")
    _deviation_alerts(ctx, core, rng)
    _releases(ctx, core, rng)
    _crb_agendas(ctx, core, rng)
    _reminders(ctx, core, rng)
    _chatter(ctx, core, rng)


def _deviation_alerts(ctx: Any, core: Any, rng: Any) -> None:
    lists = {"QC": "list-qc", "MFG": "list-mfg", "ENG": "list-eng", "SC": "list-sc", "QA": "list-qa", "MSAT": "list-msat"}
    for dev in ctx.shared.get("deviations", []):
        if not dev["major"]:
            continue
        day = core.add_workdays(dev["date"], 2)
        if day > core.WORLD_END:
            continue
        top = dev["dept"].split("-")[0]
        ctx.mail(id=f"MAIL-DEVALERT-{dev['id']}", date=day, time=core.clock(rng, 9, 12), sender="gmorris",
                 to=[lists.get(top, "list-qa")], cc=["list-qa"], subject=f"Major deviation {dev['id']}: {dev['title']}",
                 body=(f"Hello,\n\n{dev['id']} has been classified as major. Title: {dev['title']}."
                       f"{' Batch: ' + dev['batch'] + '.' if dev['batch'] else ''}\n\nThe investigation owner will share the root cause "
                       "within 30 working days. Please keep any related material on hold until QA confirms the impact.\n\nGareth Morris\nQA Operations\n"))


def _releases(ctx: Any, core: Any, rng: Any) -> None:
    for b in ctx.shared["batches"]:
        if not b["released"] or b["status"] != "released":
            continue
        ctx.mail(id=f"MAIL-RELEASE-{b['batch']}", date=b["released"], time=core.clock(rng, 13, 18), sender="aberg",
                 to=["eolsen", "creyes"], cc=["lchen"], subject=f"{b['batch']} certified and released",
                 body=(f"Hi Eva, Camila,\n\n{b['batch']} ({ctx.products[b['product']].attributes['brand']}) is certified and released in MES "
                       f"as of today. It can be allocated to orders.\n\nAnnika\n"))


def _crb_agendas(ctx: Any, core: Any, rng: Any) -> None:
    ccs = ctx.shared["ccs"]
    first = dt.date(2025, 1, 7)
    for meeting in core.weekdays(first, core.WORLD_END, 1, 2):
        send = core.add_workdays(meeting, -2)
        new = [c for c in ccs if send - dt.timedelta(days=14) < c["created"] <= send]
        ready = [c for c in ccs if c["approved"] and send < c["approved"] <= meeting + dt.timedelta(days=1) and c["created"] <= send]
        lines = "".join(f"- {c['id']} {c['title']} (new)\n" for c in sorted(new, key=lambda c: c["created"]))
        lines += "".join(f"- {c['id']} {c['title']} (for decision)\n" for c in sorted(ready, key=lambda c: c["created"]))
        ctx.mail(id=f"MAIL-CRB-{meeting.isoformat()}", date=send, time="16:00", sender="gmorris", to=["list-crb"],
                 subject="Change Review Board — agenda for Tuesday",
                 body=f"Dear board members,\n\nAgenda for Tuesday's CRB:\n\n{lines or NO_NEW}- standing items and overdue actions\n\nGareth\n")


def _reminders(ctx: Any, core: Any, rng: Any) -> None:
    for month in core.month_starts(core.HISTORY_START, core.WORLD_END):
        day = core.workday(month)
        ctx.mail(id=f"MAIL-PULLCAL-{month.year}-{month.month:02d}", date=day, time="08:15", sender="jkim", to=["list-qc-stab"],
                 subject=f"Pull calendar {month.strftime('%B %Y')} issued",
                 body=(f"Hi all,\n\nThe pull calendar for {month.strftime('%B')} is issued from LIMS (Stability/Pull calendar on the QC drive). "
                       f"Please check your testing slots; pulls are done on the scheduled day unless agreed with me.\n\nJisoo\n"))
        ctx.mail(id=f"MAIL-TRAINING-{month.year}-{month.month:02d}", date=core.add_workdays(month, 4), time="10:00", sender="jpatel",
                 to=["list-managers"], subject=f"Training status — overdue items {month.strftime('%B %Y')}",
                 body=(f"Dear managers,\n\n{rng.randint(3, 19)} training items are overdue across the site. The per-person list is in the LMS report "
                       f"'Overdue by manager'. Reminder: no GMP task before the related training is complete (SOP-QA-025).\n\nJay Patel\nTraining Coordinator\n"))
        ctx.mail(id=f"MAIL-QCOUNCIL-{month.year}-{month.month:02d}", date=core.add_workdays(month, -3) if month > core.HISTORY_START else month,
                 time="11:30", sender="evasquez", to=["list-quality-council"], subject=f"Quality council — {month.strftime('%B')} meeting",
                 body=("Dear all,\n\nThe quality council meets on the first Thursday as usual. Please send your department's metrics "
                       "to Patrick by the day before.\n\nElena\n"))
        _pull_calendar(ctx, core, month)


def _pull_calendar(ctx: Any, core: Any, month: dt.date) -> None:
    nxt = core.add_months(month, 1)
    rows = []
    for rec in sorted(ctx.records + list(ctx.hand_records.values()), key=lambda r: r["id"]):
        if rec["type"] != "stability_result":
            continue
        fields = rec["events"][0].get("fields", {})
        pull = fields.get("pull_date")
        if not pull:
            continue
        pull_day = dt.date.fromisoformat(str(pull))
        if month <= pull_day < nxt and fields.get("timepoint_months"):
            week = pull_day.isocalendar()
            rows.append(f"{fields['study']},{fields['lot']},\"{fields['condition']}\",{fields['timepoint_months']},{week[0]}-W{week[1]:02d},{fields.get('chamber') or ''}")
    if not rows:
        return
    ctx.doc(id=f"DOC-PULLCAL-{month.year}-{month.month:02d}", system="qc-drive",
            path=f"Stability/Pull calendar/{month.year}/Pull calendar {month.year}-{month.month:02d}.csv",
            title=f"Pull calendar {month.strftime('%B %Y')}",
            text="study,lot,condition,timepoint_months,scheduled_week,chamber\n" + "\n".join(sorted(rows)) + "\n",
            department="QC-STAB", visible_from=core.workday(month))


def _chatter(ctx: Any, core: Any, rng: Any) -> None:
    batches = [b["batch"] for b in ctx.shared["batches"]]
    equipment = sorted(ctx.shared["equipment"])
    for channel, (people, lines) in sorted(CHANNELS.items()):
        day = HISTORY_CHAT_START
        n = 0
        while day <= core.WORLD_END:
            day = core.workday(day + dt.timedelta(days=rng.randint(2, 6)))
            if day > core.WORLD_END:
                break
            n += 1
            text = core.fill(rng.choice(lines), name=ctx.first(rng.choice(people)), batch=rng.choice(batches),
                             equipment=rng.choice(equipment), n=rng.randint(3, 60), supplier=rng.choice(SUPPLIER_NAMES))
            ctx.chat(id=f"CHAT-{channel[5:].upper()}-{n:03d}", date=day, time=core.clock(rng), sender=rng.choice(people),
                     channel=channel, body=text)

"""Equipment records in the equipment system, their calibration certificates and periodic
requalification reports, and the equipment register export.

Every generated instrument is in a compliant state; the instruments the qualification sweep rests
on (marked `hand` in the bank) are hand-written in data/stories/equipment.yaml.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

MIGRATION = dt.date(2023, 12, 1)
CATEGORY = {"chamber": "Stability Chambers", "photo": "Stability Chambers", "fridge": "Cold Storage",
            "freezer": "Cold Storage", "incubator": "Microbiology", "autoclave": "Sterilisers",
            "line": "Filling Lines", "isolator": "Filling Lines", "lyo": "Lyophiliser", "sealer": "Packaging",
            "coldroom": "Cold Storage"}
STANDARDS = {
    "hplc": ["Holmium oxide filter HO-114", "Digital flow meter FM-3 (cert. MCS-4471)", "Thermometer T-09"],
    "balance": ["E2 weight set WS-02 (cert. MCS-4410)"],
    "ph": ["Certified buffers pH 4.01/7.00/10.01", "Reference thermometer T-04"],
    "kf": ["Water standard 1.0 mg/g, certified"],
    "lo": ["Count standard 15 µm", "Size standards 10 µm and 25 µm"],
    "chamber": ["Reference hygrometer RH-02 (cert. MCS-4502)", "Reference thermometer T-11"],
    "photo": ["Lux meter LM-1", "UV radiometer UV-1"],
}
DEFAULT_STANDARDS = ["Reference thermometer T-11 (cert. MCS-4388)", "Pressure calibrator PC-7"]


def _intervals(start: dt.date, months: int, end: dt.date, core: Any) -> list[dt.date]:
    out, k = [], 1
    while True:
        due = core.add_months(start, months * k)
        if due > end:
            return out
        out.append(due)
        k += 1


def build(ctx: Any, core: Any) -> None:
    rng = ctx.rng("equipment")
    bank = ctx.bank("equipment")
    cal = ctx.bank("calibration")
    types = bank["types"]
    ctx.shared["equipment"] = {e["id"]: {**e, **types[e["type"]]} for e in bank["equipment"]}
    for eq in bank["equipment"]:
        if eq.get("hand"):
            continue
        kind = types[eq["type"]]
        installed = dt.date.fromisoformat(eq["installed"])
        start = max(installed, MIGRATION)
        cal_dates = _intervals(installed, kind["cal"], core.WORLD_END, core)
        req_dates = _intervals(installed, kind["requal"], core.WORLD_END, core) if kind["requal"] else []
        before_cal = [d for d in cal_dates if d <= start]
        before_req = [d for d in req_dates if d <= start]
        last_cal = before_cal[-1] if before_cal else installed
        last_req = before_req[-1] if before_req else (installed if kind["requal"] else None)
        fields = {
            "equipment_id": eq["id"], "description": f"{kind['label']} {kind['maker']} {kind['model']}",
            "location": eq["location"], "owner_department": kind["dept"], "installed": installed.isoformat(),
            "operating_condition": eq.get("condition"),
            "calibration_interval_months": kind["cal"], "last_calibration": last_cal.isoformat(),
            "next_calibration_due": core.add_months(last_cal, kind["cal"]).isoformat(),
            "requalification_interval_months": kind["requal"] or None,
            "last_requalification": last_req.isoformat() if last_req else None,
            "next_requalification_due": core.add_months(last_req, kind["requal"]).isoformat() if last_req else None,
        }
        note = "Migrated from the legacy equipment database." if start == MIGRATION else "Released for GMP use after qualification."
        events: list[dict[str, Any]] = [{"date": start, "kind": "created", "by": "pvolkov", "status": "released",
                                         "fields": fields, "note": note}]
        for due in cal_dates:
            if due <= start:
                continue
            done = core.workday(due - dt.timedelta(days=rng.randint(0, 9)))
            if done <= start:
                continue
            cert = ctx.next_id("CAL", done.year, day=done)
            vendor = eq["type"] in ("hplc", "chamber", "photo", "lo", "toc") and rng.random() < 0.6
            if done >= CERTIFICATES_FROM:
                _certificate(ctx, core, rng, cal, eq, kind, done, cert, vendor)
            events.append({"date": done, "kind": "update", "by": "ioconnor",
                           "fields": {"last_calibration": done.isoformat(),
                                      "next_calibration_due": core.add_months(done, kind["cal"]).isoformat(),
                                      "last_certificate": cert},
                           "note": f"Calibration passed ({cert})."})
        for due in req_dates:
            if due <= start:
                continue
            begin = core.workday(due - dt.timedelta(days=rng.randint(5, 20)))
            end = core.add_workdays(begin, 3 if eq["type"] in ("chamber", "coldroom") else 1)
            if end <= start:
                continue
            report = ctx.next_id("RQ", end.year, 3, day=end)
            _requal_report(ctx, core, rng, cal, eq, kind, begin, end, report)
            events.append({"date": end, "kind": "update", "by": "pvolkov",
                           "fields": {"last_requalification": end.isoformat(),
                                      "next_requalification_due": core.add_months(end, kind["requal"]).isoformat(),
                                      "last_requalification_report": report},
                           "note": f"Periodic requalification passed ({report})."})
        ctx.record(id=f"EQ-{eq['id']}", system="eqms", type="equipment", title=f"{eq['id']} {kind['label']}",
                   events=events, department=kind["dept"])
    ctx.doc(id="DOC-ENG-EQUIPMENT-REGISTER", system="site-drive", path="Engineering/Equipment register (EQS export).csv",
            title="Equipment register (nightly export from the equipment system)", template="eng/equipment_register.csv.j2",
            vars={}, department="ENG", visible_from=MIGRATION)


LAB_TYPES = {"hplc", "balance", "ph", "kf", "lo", "chamber", "photo", "fridge", "freezer", "incubator", "pcount",
             "airsampler", "toc"}
CERTIFICATES_FROM = dt.date(2025, 1, 13)
"""Older certificates were archived off the drive when the engineering drive moved (13 Jan 2025); their results remain in the equipment records."""


def area(eq_type: str) -> str:
    return "Laboratory" if eq_type in LAB_TYPES else "Production"


def _decimals(tol: float) -> int:
    return max(0, -math.floor(math.log10(tol))) + 1 if tol < 10 else 0


def _fmt(value: float, tol: float) -> str:
    return f"{value:.{_decimals(tol)}f}"


def _certificate(ctx: Any, core: Any, rng: Any, cal: Any, eq: dict, kind: dict, day: dt.date, cert: str,
                 vendor: bool) -> None:
    rows = []
    adjusted = False
    for name, nominal, unit, tol, spread in cal["points"][eq["type"]]:
        found = nominal + rng.gauss(0, spread) if spread else nominal
        if abs(found - nominal) > tol * 0.9:
            found = nominal + (tol * 0.6 if found > nominal else -tol * 0.6)
        left = found
        if abs(found - nominal) > tol * 0.5:
            left = nominal + (found - nominal) * 0.2
            adjusted = True
        rows.append([name, _fmt(nominal, tol), unit, _fmt(found, tol), _fmt(left, tol), _fmt(tol, tol), "pass"])
    vars_ = {"cert": cert, "equipment": eq["id"], "label": kind["label"], "maker": kind["maker"], "model": kind["model"],
             "location": eq["location"], "by": ctx.name("ioconnor"), "date": day.isoformat(),
             "standards": STANDARDS.get(eq["type"], DEFAULT_STANDARDS), "points": rows, "result": "PASS",
             "adjusted": adjusted, "interval": kind["cal"], "wi": f"WI-ENG-{eq['type'].upper()}-01",
             "remark": "" if rng.random() < 0.8 else core.pick(rng, [
                 "Fan filter cleaned during the visit.", "Door gasket shows wear; work order raised for replacement at next PM.",
                 "Firmware version unchanged.", "Probe cable re-routed away from the door hinge.",
                 "Instrument was in use until the morning of the calibration; no open runs."]),
             "notes": core.notes(ctx, "calibration", cert, 1, 3)}
    if vendor:
        vars_["vendor"] = core.pick(rng, cal["vendors"])
        vars_["engineer"] = core.pick(rng, ["A. Whitcombe", "P. Lindahl", "S. Rahman", "G. Conti"])
    ctx.doc(id=f"DOC-{cert}", system="eng-drive",
            path=f"Calibration/{area(eq['type'])}/{day.year}/{eq['id']}/{cert} {eq['id']} {day.isoformat()}.md",
            title=f"Calibration certificate {cert} {eq['id']}",
            template="eng/cal_vendor.md.j2" if vendor else "eng/cal_internal.md.j2", vars=vars_,
            department="ENG", visible_from=day)


def _requal_report(ctx: Any, core: Any, rng: Any, cal: Any, eq: dict, kind: dict, begin: dt.date, end: dt.date,
                   report: str) -> None:
    tests = []
    for name, criterion in cal["requal"][eq["type"]]:
        if "mapping" in name and "°C" in criterion:
            lo, hi = sorted([round(rng.uniform(-1.2, -0.3), 1), round(rng.uniform(0.3, 1.3), 1)])
            result = f"probe range {lo:+.1f} to {hi:+.1f} °C from set point; mean {rng.uniform(-0.2, 0.2):+.1f} °C"
        elif "recovery" in name:
            result = f"recovered in {rng.randint(4, 11)} min"
        elif "BI" in name or "biological" in name:
            result = "all indicators negative"
        else:
            result = "meets criterion"
        tests.append([name, criterion, result, "pass"])
    summary = core.pick(rng, [
        f"Annual requalification of {eq['id']} per SOP-ENG-001; the equipment was taken out of use for the duration of the tests.",
        f"{eq['id']} was requalified at the end of its interval. No changes were made to the equipment since the previous qualification.",
        f"Requalification executed as planned; one work order (door gasket) was completed before the loaded tests.",
    ])
    ctx.doc(id=f"DOC-{report}", system="eng-drive",
            path=f"Qualification/{area(eq['type'])}/{CATEGORY[eq['type']]}/{report} {eq['id']} periodic requalification.md",
            title=f"Periodic requalification {report} {eq['id']}", template="eng/requal_report.md.j2",
            vars={"report": report, "equipment": eq["id"], "label": kind["label"], "location": eq["location"],
                  "condition": eq.get("condition", ""), "protocol": f"PRQ-{eq['type'].upper()}-00{1 + (end.year % 3)}",
                  "start": begin.isoformat(), "end": end.isoformat(), "by": ctx.name("pvolkov"), "qa": ctx.name("mrossi"),
                  "summary": summary, "tests": tests, "deviations": [], "notes": core.notes(ctx, "requal", report, 1, 3),
                  "conclusion": f"{eq['id']} remains in a qualified state and is released for GMP use.",
                  "interval": kind["requal"]},
            department="ENG", visible_from=end)

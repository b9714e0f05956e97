"""Routine stability studies (annual commitment lots of Zelvara vials and Tamsorel): LIMS results
per pull, protocols, live data tables, and the monthly pull calendar.

The studies the tasks rest on — the Zelvara vial shelf-life extension study STP-ZV-23-01, the
Zelvara PFS registration and overwrap studies and the stopper-change lots — are hand-written in
data/stories; the pull calendar and the chamber inventory below include them.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

ATTRS = {
    "vial": [("assay_pct", 100.2, -0.045, 0.35, 1), ("metox_pct", 0.31, 0.0215, 0.02, 2), ("impd_pct", 0.14, 0.0075, 0.01, 2),
             ("total_imp_pct", 1.08, 0.037, 0.04, 2), ("ph", 5.0, 0.0, 0.04, 1), ("svp_10um", 95, 2.0, 30, 0), ("svp_25um", 4, 0.1, 2, 0)],
    "lyo": [("assay_pct", 100.4, -0.035, 0.3, 1), ("water_pct", 0.85, 0.018, 0.05, 2), ("recon_time_s", 25, 0.05, 2.5, 0),
            ("rs_total_pct", 0.52, 0.011, 0.03, 2)],
}
# study, product kind, lot, T0, condition code, chamber, time points (months)
ROUTINE = [
    ("STP-ZV-24-AC", "vial", "ZV-24002", "2024-02-12", "5C", "SC-01", [0, 3, 6, 9, 12, 18, 24, 36]),
    ("STP-ZV-25-AC", "vial", "ZV-25006", None, "5C", "SC-01", [0, 3, 6, 9, 12, 18, 24, 36]),
    ("STP-TL-24-AC", "lyo", "TL-24005", "2024-06-10", "25C", "SC-04", [0, 3, 6, 9, 12, 18, 24, 36]),
    ("STP-TL-24-AC", "lyo", "TL-24005", "2024-06-10", "40C", "SC-06", [0, 1, 3, 6]),
    ("STP-TL-25-AC", "lyo", "TL-25003", None, "25C", "SC-04", [0, 3, 6, 9, 12, 18, 24, 36]),
    ("STP-TL-25-AC", "lyo", "TL-25003", None, "40C", "SC-06", [0, 1, 3, 6]),
]
CONDITIONS = {"5C": "5 °C ± 3 °C", "25C": "25 °C ± 2 °C / 60 % ± 5 % RH", "30C": "30 °C ± 2 °C / 65 % ± 5 % RH",
              "40C": "40 °C ± 2 °C / 75 % ± 5 % RH"}
SPECS = {
    "vial": {"assay_pct": "95.0–105.0", "metox_pct": "NMT 1.5", "impd_pct": "NMT 1.0", "total_imp_pct": "NMT 3.0",
             "ph": "4.5–5.5", "svp_10um": "≤ 6000", "svp_25um": "≤ 600"},
    "lyo": {"assay_pct": "95.0–105.0", "water_pct": "NMT 2.0", "recon_time_s": "NMT 60", "rs_total_pct": "NMT 2.0"},
}
LABELS = {"assay_pct": "Assay (% label claim)", "metox_pct": "Oxidised zelvotide (%)", "impd_pct": "Impurity D (%)",
          "total_imp_pct": "Total impurities (%)", "ph": "pH", "svp_10um": "Subvisible particles ≥ 10 µm per container",
          "svp_25um": "Subvisible particles ≥ 25 µm per container", "water_pct": "Water content (%)",
          "recon_time_s": "Reconstitution time (s)", "rs_total_pct": "Related substances, total (%)"}
ANALYSTS = ("praman", "praman", "efischer", "rsingh")
REVIEWERS = ("dferreira", "aholm")


def _value(rng: Any, base: float, slope: float, noise: float, decimals: int, months: int, accel: float) -> float | int:
    value = base + slope * months * accel + rng.gauss(0, noise)
    return int(round(value)) if decimals == 0 else round(value, decimals)


def build(ctx: Any, core: Any) -> None:
    rng = ctx.rng("stability")
    releases = {b["batch"]: b["released"] for b in ctx.shared["batches"]}
    studies: dict[str, dict[str, Any]] = {}
    for study, kind, lot, t0_text, cond, chamber, points in ROUTINE:
        t0 = dt.date.fromisoformat(t0_text) if t0_text else core.add_workdays(releases[lot], 5)
        info = studies.setdefault(study, {"study": study, "kind": kind, "lot": lot, "t0": t0, "arms": []})
        info["arms"].append((cond, chamber, points))
        accel = {"5C": 1.0, "25C": 1.0 if kind == "lyo" else 4.0, "40C": 3.5 if kind == "lyo" else 12.0}[cond]
        for months in points:
            pull = core.workday(core.add_months(t0, months)) if months else t0
            if pull > core.WORLD_END:
                continue
            _result(ctx, core, rng, study, kind, lot, cond, chamber, months, pull, accel)
    for info in studies.values():
        _protocol(ctx, core, info)
        ctx.doc(id=f"DOC-STABDATA-{info['study']}", system="qc-drive",
                path=f"Stability/Data/{info['study']} {info['lot']} results (LIMS export).csv",
                title=f"{info['study']} results export", template="stability/results_export.csv.j2",
                vars={"study": info["study"], "attributes": [a[0] for a in ATTRS[info["kind"]]]},
                department="QC-STAB", visible_from=info["t0"])
    ctx.shared["routine_studies"] = studies
    annual_reports(ctx, core, studies)


def _result(ctx: Any, core: Any, rng: Any, study: str, kind: str, lot: str, cond: str, chamber: str, months: int,
            pull: dt.date, accel: float) -> None:
    rid = f"STB-{lot.replace('-', '')}-{cond}-{months:02d}M"
    if rid in ctx.hand_ids:
        return
    test = core.add_workdays(pull, rng.randint(2, 8))
    approve = core.add_workdays(test, rng.randint(1, 4))
    analyst = rng.choice(ANALYSTS)
    reviewer = rng.choice(REVIEWERS)
    results = {name: _value(rng, base, slope, noise, dec, months, accel) for name, base, slope, noise, dec in ATTRS[kind]}
    results["appearance"] = "complies"
    ctx.shared.setdefault("routine_results", []).append(
        {"study": study, "lot": lot, "kind": kind, "cond": cond, "chamber": chamber, "months": months, "pull": pull,
         "approved": approve, "results": results})
    events: list[dict[str, Any]] = [{
        "date": pull, "kind": "created", "by": "jkim", "status": "pulled",
        "fields": {"study": study, "product": "PRD-ZLV-VIAL" if kind == "vial" else "PRD-TMS-LYO", "lot": lot,
                   "condition": CONDITIONS[cond], "timepoint_months": months, "chamber": chamber if months else None,
                   "pull_date": pull.isoformat(), "specification": "SPEC-ZV-FP v6" if kind == "vial" else "SPEC-TL-FP v4"},
    }]
    if test <= core.WORLD_END:
        events.append({"date": test, "kind": "update", "by": analyst, "status": "reported",
                       "fields": {**results, "analyst": analyst, "test_date": test.isoformat(),
                                  "instrument": rng.choice(["HPLC-04", "HPLC-05"]) if kind == "vial" else rng.choice(["HPLC-03", "HPLC-06"])}})
    if approve <= core.WORLD_END:
        events.append({"date": approve, "kind": "approval", "by": reviewer, "status": "approved",
                       "note": "Reviewed against raw data and audit trail; within specification."})
    ctx.record(id=rid, system="lims", type="stability_result", title=f"{lot} · {months}M · {CONDITIONS[cond].split(' ±')[0]}",
               events=events, department="QC-STAB", owner=analyst)


def _protocol(ctx: Any, core: Any, info: dict[str, Any]) -> None:
    kind = info["kind"]
    ctx.doc(id=f"DOC-PROTO-{info['study']}", system="qc-drive",
            path=f"Stability/Protocols/{info['study']} v1 stability protocol {info['lot']}.md",
            title=f"Stability protocol {info['study']}", template="stability/protocol.md.j2",
            vars={"study": info["study"], "version": 1, "product": "PRD-ZLV-VIAL" if kind == "vial" else "PRD-TMS-LYO",
                  "purpose": "Annual stability commitment: one commercial lot per year on long-term storage per the marketing authorisation.",
                  "lots": [[info["lot"], core.long(info["t0"]), "commercial, annual commitment"]],
                  "arms": [[CONDITIONS[c], ch, ", ".join(str(p) for p in pts)] for c, ch, pts in info["arms"]],
                  "window": "± 7 days up to 12 months, ± 14 days thereafter",
                  "tests": [[LABELS[a[0]], SPECS[kind][a[0]]] for a in ATTRS[kind]] + [["Appearance", "complies with the release description"]],
                  "author": ctx.name("dferreira"), "approver": ctx.name("aholm"), "qa": ctx.name("pdoyle"),
                  "extra": []},
            department="QC-STAB", visible_from=info["t0"])


ANNUAL = {"vial": ("PRD-ZLV-VIAL", "Zelvara vial", "5C", 24, "STP-ZV-24-AC"),
          "lyo": ("PRD-TMS-LYO", "Tamsorel", "25C", 36, "STP-TL-24-AC")}
"""Product kind → product, report name, long-term condition, registered shelf life (months), 2024 commitment study."""
OOT_STEP = {"assay_pct": 2.0, "metox_pct": 0.10, "impd_pct": 0.05, "total_imp_pct": 0.20, "ph": 0.3, "svp_10um": 1000,
            "svp_25um": 100, "water_pct": 0.3, "recon_time_s": 10, "rs_total_pct": 0.2}
"""SOP-QC-014's out-of-trend rule: a change from the previous time point larger than this (same lot, same condition)."""
DATA_LOCK = dt.date(2024, 12, 31)
REPORT_DAY = dt.date(2025, 2, 24)


def _limit(spec: str) -> tuple[float | None, float | None]:
    """(low, high) of a specification text: `95.0–105.0`, `NMT 1.5`, `≤ 6000`."""
    text = spec.replace("≤", "NMT").strip()
    if text.startswith("NMT"):
        return None, float(text[3:].strip())
    low, high = text.split("–")
    return float(low), float(high)


def _fit(points: list[tuple[int, float]]) -> tuple[float, float] | None:
    """Least-squares (slope, intercept) of value over months; None under three time points."""
    if len({m for m, _ in points}) < 3:
        return None
    mean_m = sum(m for m, _ in points) / len(points)
    mean_v = sum(v for _, v in points) / len(points)
    den = sum((m - mean_m) ** 2 for m, _ in points)
    slope = sum((m - mean_m) * (v - mean_v) for m, v in points) / den
    return slope, mean_v - slope * mean_m


def _fmt(value: float, decimals: int) -> str:
    return f"{value:.{decimals}f}" if decimals else f"{value:.0f}"


def annual_reports(ctx: Any, core: Any, studies: dict[str, dict[str, Any]]) -> None:
    """The 2024 annual stability report of each marketed product, from the LIMS results approved by the data lock."""
    results = [r for r in ctx.shared.get("routine_results", []) if r["pull"] <= DATA_LOCK and r["approved"] <= REPORT_DAY]
    for kind, (product, name, long_term, shelf_life, study) in ANNUAL.items():
        info = studies[study]
        mine = sorted((r for r in results if r["study"] == study), key=lambda r: (r["cond"] != long_term, r["cond"], r["months"]))
        arms = []
        for cond, chamber, points in info["arms"]:
            tested = [r["months"] for r in mine if r["cond"] == cond]
            arms.append([CONDITIONS[cond], chamber, ", ".join(str(p) for p in points), ", ".join(str(m) for m in tested) or "none yet"])
        attributes = []
        oos: list[str] = []
        oot: list[str] = []
        for attr, base, slope, noise, dec in ATTRS[kind]:
            spec = SPECS[kind][attr]
            low, high = _limit(spec)
            rows = []
            for cond in sorted({r["cond"] for r in mine}, key=lambda c: (c != long_term, c)):
                series = [(r["months"], r["results"][attr]) for r in mine if r["cond"] == cond]
                for (m0, v0), (m1, v1) in zip(series, series[1:]):
                    if abs(v1 - v0) > OOT_STEP[attr]:
                        oot.append(f"{LABELS[attr]}, {CONDITIONS[cond]}, {m0} → {m1} months: {_fmt(v0, dec)} → {_fmt(v1, dec)}")
                for m, v in series:
                    if (low is not None and v < low) or (high is not None and v > high):
                        oos.append(f"{LABELS[attr]}, {CONDITIONS[cond]}, {m} months: {_fmt(v, dec)} (limit {spec})")
                fit = _fit(series)
                projected = ""
                if fit is not None and cond == long_term:
                    projected = f"{_fmt(fit[1] + fit[0] * shelf_life, dec)} at {shelf_life} months"
                rows.append({"condition": CONDITIONS[cond], "values": [[m, _fmt(v, dec)] for m, v in series],
                             "change": _fmt(series[-1][1] - series[0][1], dec) if len(series) > 1 else "—",
                             "slope": "—" if fit is None else f"{fit[0]:+.{dec + 2}f} per month", "projected": projected or "—"})
            attributes.append({"label": LABELS[attr], "spec": spec, "rows": rows})
        chambers = sorted({ch for _, ch, _ in info["arms"]})
        ctx.doc(id=f"DOC-ASR-2024-{core.slug(name)}", system="qc-drive", path=f"Stability/Reports/Annual stability report 2024 {name}.md",
                title=f"Annual stability report 2024 {name}", template="stability/annual_report.md.j2",
                vars={"number": f"ASR-2024-{'ZV' if kind == 'vial' else 'TL'}", "product": product, "name": name, "study": study,
                      "lot": info["lot"], "t0": core.long(info["t0"]), "arms": arms, "chambers": chambers,
                      "spec": "SPEC-ZV-FP v6" if kind == "vial" else "SPEC-TL-FP v4", "data_lock": core.long(DATA_LOCK),
                      "shelf_life": shelf_life, "long_term": CONDITIONS[long_term], "attributes": attributes,
                      "results": len(mine), "oos": oos, "oot": oot, "oot_steps": [[LABELS[a[0]], str(OOT_STEP[a[0]])] for a in ATTRS[kind]],
                      "author": ctx.name("dferreira"), "reviewer": ctx.name("aholm"), "qa": ctx.name("pdoyle"),
                      "export": f"Stability/Data/{study} {info['lot']} results (LIMS export).xlsx"},
                department="QC-STAB", visible_from=REPORT_DAY)

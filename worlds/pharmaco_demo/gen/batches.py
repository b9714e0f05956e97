"""Commercial batches of Zelvara vials (FL-1) and Tamsorel (FL-1 + LYO-1): MES batch records,
batch-linked deviations, QA disposition, and the batch summary QA files on the site drive.

Zelvara prefilled syringe batches (PPQ, CPV) and the stopper-change vial batches are hand-written
in data/stories; their numbers are skipped here.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

PLAN = [
    # product, prefix, year, first and last sequence number, start date of the first, cadence in days
    ("PRD-ZLV-VIAL", "ZV", 2024, 19, 36, dt.date(2024, 7, 1), 10),
    ("PRD-ZLV-VIAL", "ZV", 2025, 1, 36, dt.date(2025, 1, 6), 10),
    ("PRD-ZLV-VIAL", "ZV", 2026, 1, 12, dt.date(2026, 1, 7), 10),
    ("PRD-TMS-LYO", "TL", 2024, 7, 12, dt.date(2024, 7, 8), 29),
    ("PRD-TMS-LYO", "TL", 2025, 1, 12, dt.date(2025, 1, 20), 29),
    ("PRD-TMS-LYO", "TL", 2026, 1, 4, dt.date(2026, 1, 7), 29),
]
BATCH_PATTERNS = {
    "PRD-ZLV-VIAL": ["em-grade-a", "em-grade-b", "fill-weight", "visual-reject", "line-clearance", "filter-integrity",
                     "compounding", "hold-time", "batch-record"],
    "PRD-TMS-LYO": ["em-grade-b", "visual-reject", "filter-integrity", "lyo-cycle", "batch-record", "line-clearance"],
}
ROOMS = ["FF-1 grade B corridor", "FF-1 filling room", "component preparation 2.04", "formulation suite 2.10"]


def _slots(rng: Any, batch: str, product: str) -> dict[str, Any]:
    return {"batch": batch, "product": product, "line": "FL-1", "room": rng.choice(ROOMS),
            "point": rng.randint(1, 8), "count": rng.randint(1, 4) if rng.random() < 0.7 else rng.randint(120, 900),
            "value": rng.choice(["1.021", "1.019", "1.068", "4.82", "1.4", "2.1", "188", "3310", "5.2"]),
            "limit": rng.choice(["1.025–1.065", "1.5", "2.0"]), "minutes": rng.randint(12, 95),
            "lot": f"VL-{rng.randint(2400, 2599)}", "site": "Riverbend"}


def build(ctx: Any, core: Any) -> None:
    rng = ctx.rng("batches")
    patterns = {p["key"]: p for p in ctx.bank("deviations")["patterns"]}
    batches: list[dict[str, Any]] = []
    ctx.shared["batches"] = batches
    for product, prefix, year, first_n, last_n, start, cadence in PLAN:
        for n in range(first_n, last_n + 1):
            batch = f"{prefix}-{str(year)[2:]}{n:03d}"
            begin = core.workday(start + dt.timedelta(days=(n - first_n) * cadence))
            if f"MES-{batch}" in ctx.hand_ids or begin > core.WORLD_END:
                continue
            batches.append(_batch(ctx, core, rng, patterns, product, batch, begin))


def _batch(ctx: Any, core: Any, rng: Any, patterns: dict, product: str, batch: str, begin: dt.date) -> dict[str, Any]:
    vial = product == "PRD-ZLV-VIAL"
    fill = core.add_workdays(begin, 1 if vial else 1)
    end = core.add_workdays(fill, 1 if vial else 4)  # Tamsorel: lyophilisation cycle
    packed = core.add_workdays(end, rng.randint(3, 8))
    size_l = 48.0 if vial else 30.0
    target = 44000 if vial else 11500
    filled = target - rng.randint(150, 900)
    vi_rejects = round(filled * rng.uniform(0.004, 0.014))
    devs: list[dict[str, Any]] = []
    if rng.random() < 0.38:
        key = rng.choice(BATCH_PATTERNS[product])
        day = rng.choice([fill, end, packed]) if key in ("visual-reject", "line-clearance") else rng.choice([begin, fill])
        devs.append(core.raise_deviation(ctx, rng, patterns[key], day, _slots(rng, batch, product), batch=batch,
                                         product=product))
    last_close = max([d["closed"] for d in devs if d["closed"]] or [packed])
    open_devs = [d for d in devs if d["closed"] is None]
    released = core.add_workdays(max(packed, last_close), rng.randint(4, 14))
    rejected = bool(devs) and devs[0]["major"] and devs[0]["pattern"] == "hold-time" and rng.random() < 0.5
    components = {
        "vial_lot": f"{'VL2R' if vial else 'VL10R'}-{rng.randint(2400, 2599)}",
        "stopper_lot": f"ES13-{begin.strftime('%y%m')}-{rng.randint(10, 99)}" if vial else f"LS20-{begin.strftime('%y%m')}-{rng.randint(10, 99)}",
        "stopper_supplier": "Elastoseal",
        "seal_lot": f"AS13-{rng.randint(300, 899)}",
        "api_lot": f"{'ZEL' if vial else 'TAM'}-API-{rng.randint(40, 79)}",
    }
    yield_pct = round(100.0 * (filled - vi_rejects) / target, 1)
    fw_mean = round(rng.uniform(1.043, 1.048), 4) if vial else round(rng.uniform(1.998, 2.006), 3)
    fw_sd = round(rng.uniform(0.0022, 0.0034), 4) if vial else round(rng.uniform(0.004, 0.007), 4)
    expiry_months = 24 if vial else 36
    expiry = core.add_months(fill, expiry_months)
    fields = {"product": product, "batch": batch, "line": "FL-1", "batch_size_l": size_l, "target_units": target,
              "manufacture_start": begin.isoformat(), "fill_date": fill.isoformat(), "filled_units": filled,
              "visual_rejects": vi_rejects, "components": components,
              "expiry": f"{expiry.year}-{expiry.month:02d}"}
    events: list[dict[str, Any]] = [
        {"date": begin, "kind": "created", "by": "mhughes", "status": "in production", "fields": fields},
        {"date": end, "kind": "update", "by": "lmartin", "fields": {"fill_weight_mean_g": fw_mean, "fill_weight_sd_g": fw_sd}},
        {"date": packed, "kind": "status", "by": "lmartin", "status": "QA review",
         "fields": {"packed_units": filled - vi_rejects - rng.randint(40, 120), "yield_pct": yield_pct,
                    "deviations": [d["id"] for d in devs]}},
    ]
    status = "QA review"
    if not open_devs and released <= core.WORLD_END:
        status = "rejected" if rejected else "released"
        events.append({"date": released, "kind": "approval", "by": "aberg" if not rejected else "pdoyle", "status": status,
                       "note": "Certified by the Qualified Person." if not rejected else "Rejected: validated hold time exceeded beyond the supported data."})
    ctx.record(id=f"MES-{batch}", system="mes", type="batch_record", title=f"{batch} {ctx.products[product].attributes['brand']}",
               events=events, department="MFG", links=[d["id"] for d in devs])
    info = {"batch": batch, "product": product, "begin": begin, "fill": fill, "packed": packed,
            "released": released if status in ("released", "rejected") else None, "status": status, "deviations": devs,
            "filled": filled, "rejects": vi_rejects, "yield": yield_pct, "components": components,
            "fw_mean": fw_mean, "fw_sd": fw_sd}
    if info["released"]:
        _summary(ctx, core, rng, info)
    return info


def _summary(ctx: Any, core: Any, rng: Any, b: dict[str, Any]) -> None:
    vial = b["product"] == "PRD-ZLV-VIAL"
    product = ctx.products[b["product"]]
    if vial:
        results = [
            ["Appearance", "clear, colourless solution, practically free of visible particles", "complies"],
            ["pH", "4.5–5.5", f"{rng.uniform(4.9, 5.1):.1f}"],
            ["Assay (% label claim)", "95.0–105.0", f"{rng.uniform(98.6, 101.4):.1f}"],
            ["Oxidised zelvotide (%)", "NMT 1.5", f"{rng.uniform(0.26, 0.38):.2f}"],
            ["Impurity D (%)", "NMT 1.0", f"{rng.uniform(0.10, 0.19):.2f}"],
            ["Total impurities (%)", "NMT 3.0", f"{rng.uniform(0.95, 1.25):.2f}"],
            ["Extractable volume (mL)", "≥ 1.0", f"{rng.uniform(1.02, 1.05):.2f}"],
            ["Subvisible particles ≥ 10 µm / ≥ 25 µm per container", "≤ 6000 / ≤ 600", f"{rng.randint(20, 180)} / {rng.randint(0, 12)}"],
            ["Bacterial endotoxins (EU/mg)", "NMT 5.0", "< 0.5"],
            ["Sterility", "sterile", "complies"],
        ]
    else:
        results = [
            ["Appearance of cake", "white to off-white intact cake", "complies"],
            ["Reconstitution time (s)", "NMT 60", f"{rng.randint(18, 34)}"],
            ["Water content (%)", "NMT 2.0", f"{rng.uniform(0.6, 1.1):.1f}"],
            ["Assay (% label claim)", "95.0–105.0", f"{rng.uniform(98.5, 101.2):.1f}"],
            ["Related substances, total (%)", "NMT 2.0", f"{rng.uniform(0.4, 0.7):.2f}"],
            ["Bacterial endotoxins (EU/vial)", "NMT 12.5", "< 1.0"],
            ["Sterility", "sterile", "complies"],
        ]
    em = rng.choice([
        "Grade A: no recoveries. Grade B: all results below alert level.",
        "Grade A: no recoveries. Grade B: one alert-level recovery (personnel glove, 1 CFU), trended; no action required.",
        "Grade A: no recoveries. Grade B: all results within limits. Non-viable particle counts within limits throughout the fill.",
    ])
    interventions = rng.randint(2, 9)
    devs = [[d["id"], d["title"], "major" if d["major"] else "minor", d["capa"] or "—"] for d in b["deviations"]]
    template = "mfg/batch_summary_vial.md.j2" if vial else "mfg/batch_summary_lyo.md.j2"
    year = 2000 + int(b["batch"][3:5])
    ctx.doc(id=f"DOC-BSUM-{b['batch']}", system="site-drive",
            path=f"Manufacturing/Batch Summaries/{product.attributes['brand']}{' vial' if vial else ''}/{year}/{b['batch']} batch summary.md",
            title=f"Batch summary {b['batch']}", template=template,
            vars={"batch": b["batch"], "product": b["product"], "begin": b["begin"].isoformat(), "fill": b["fill"].isoformat(),
                  "packed": b["packed"].isoformat(), "released": b["released"].isoformat(), "status": b["status"],
                  "filled": b["filled"], "rejects": b["rejects"], "yield": b["yield"], "components": b["components"],
                  "fw_mean": b["fw_mean"], "fw_sd": b["fw_sd"], "results": results, "em": em,
                  "interventions": interventions, "deviations": devs,
                  "events": core.notes(ctx, "batch_vial" if vial else "batch_lyo", b["batch"], 1, 4),
                  "reviewer": ctx.name(rng.choice(["lchen", "lchen", "yadeyemi"])), "qp": ctx.name("aberg")},
            department="QA-OPS", visible_from=b["released"])

"""The InfoOrgBench tables as fixed-width text and as one self-contained HTML page.

Renders what `worldkit.report.infoorg.packet_tables` computed; computes nothing itself. The
HTML page holds every table and Figure 2 (error rates by level) as inline SVG drawn with
matplotlib; its bytes depend only on the tables (fixed SVG ids, no dates, no scripts).
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from html import escape
from typing import Any

from worldkit.report.infoorg import BASELINE_LABELS, CATEGORIES, FAMILIES, RANDOM_SEEDS, PacketTables, packet_tables
from worldkit.run.infoorg_packet import PacketRun

__all__ = ["render_html", "render_tables", "render_text", "text_tables"]

Table = tuple[str, list[str], list[list[str]], list[str]]
"""(title, header, rows, notes)."""


def _n(value: float | None, places: int = 1) -> str:
    return "–" if value is None else f"{value:.{places}f}"


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.0f}%"


def _families(tables: PacketTables) -> list[str]:
    present = {f for row in tables.table3 for f in row["families"]}
    return [f for f in (*FAMILIES, "other") if f in present]


def text_tables(tables: PacketTables) -> list[Table]:
    """Every table as (title, header, rows, notes), in the paper's order."""
    out: list[Table] = []
    families = _families(tables)
    rows, notes = [], []
    for row in tables.table3:
        cells = [row["model"], row["harness"]]
        for family in families:
            cell = row["families"].get(family)
            cells += [_n(cell["trip"]), _n(cell["pen"]), _n(cell["score"])] if cell else ["–"] * 3
        avg = row["avg"]
        cells += [_n(avg["trip"]), _n(avg["pen"]), _n(avg["score"])] if avg else ["–"] * 3
        rows.append(cells)
        if avg is None:
            notes.append(f"{row['model']} · {row['harness']}: no Avg, it needs all three families "
                         f"(missing {', '.join(row['missing'])})")
    header = ["Model", "Harness"] + [f"{f.capitalize()} {m}" for f in [*families, "avg"] for m in ("Trip.", "Pen.", "Score")]
    tasks = {f: max((r["families"][f]["tasks"] for r in tables.table3 if f in r["families"]), default=0) for f in families}
    notes.append("tasks per family: " + (", ".join(f"{f} {n}" for f, n in tasks.items()) or "none"))
    out.append(("Table 3: Trip. pooled triplet F1, Pen. 100(1 − E), Score S (0–100; tasks weigh equally; "
                "Avg = mean of the three family means)", header, rows, notes))

    rows, notes = [], []
    for config in tables.table4:
        columns = config["columns"]
        order = ("all", *FAMILIES)
        for k in range(config["repeats"]):
            rows.append([config["model"], config["harness"], f"run r{k + 1}",
                         *(_n(columns[c]["runs"][k]) if c in columns else "–" for c in order)])
        for key, name, fmt in (("spread", "Spread", _n), ("abs_delta", "|ΔS|", _n), ("range_over_10", "Range > 10", _pct),
                               ("best_of", f"Best-of-{config['repeats']}", _n), ("consensus", "Consensus", _n),
                               ("vote", "Vote", _n)):
            rows.append([config["model"], config["harness"], name, *(fmt(columns[c][key]) if c in columns else "–" for c in order)])
        notes.append(f"{config['model']} · {config['harness']}: {config['repeats']} runs of each of {config['tasks']} tasks")
    if not rows:
        notes.append("no configuration ran any task more than once (a campaign with conditions full: N gives this table)")
    else:
        votes = [c.get("vote") for config in tables.table4 for c in config["columns"].values()]
        if any(v is None for v in votes):
            notes.append("Vote (the tree of the co-placements most runs agree on) is scored only against a packet's "
                         "reference as its campaign froze it: – where runs are not in a campaign or its packet was not found")
        notes += tables.vote_notes
    out.append(("Table 4: repeated runs of one configuration (S × 100); Best-of uses the reference (upper bound), "
                "Consensus picks per task the run whose tree agrees most with the others, Vote rebuilds a tree from the "
                "co-placements most runs agree on; neither uses the reference",
                ["Model", "Harness", "Measure", "All", *(f.capitalize() for f in FAMILIES)], rows, notes))  # fmt: skip

    rows = [[r["family"], r["model"], r["harness"], str(r["outputs"]), _n(r["S"]), _n(r["clade_f1"]), str(r["exact"])]
            for r in tables.table10]  # fmt: skip
    out.append(("Table 10: Structure Score, clade F1 and exact recoveries (outputs that reproduce the reference)",
                ["Family", "Model", "Harness", "Outputs", "S", "Clade F1", "Exact"], rows, []))

    t11 = tables.table11
    rows = [[m["model"], _n(m["mean_S"]), str(m["configs"])] for m in t11["models"]]
    notes = [f"{model}: left out {', '.join(why)}" for model, why in t11["left_out"].items()]
    out.append(("Table 11: mean S (× 100) of each model over its Table 3 rows", ["Model", "Mean S", "Configs"], rows, notes))

    t12 = tables.table12
    rows = [[BASELINE_LABELS.get(name, name), *(_n(cells.get(f)) for f in FAMILIES)]
            for name, cells in sorted(t12["baselines"].items(), key=lambda kv: list(BASELINE_LABELS).index(kv[0]))]
    notes = []
    seeds = t12["random_seeds"]
    if seeds is not None and seeds["min"] < RANDOM_SEEDS:
        notes.append(f"random shape: {seeds['min']}–{seeds['max']} seed(s) per task, Table 12 averages {RANDOM_SEEDS} "
                     "(run baseline:random:0 … baseline:random:4)")
    elif seeds is not None:
        notes.append(f"random shape: averaged over {seeds['min']} seeds per task")
    out.append(("Table 12: Structure Score of the text-only baselines", ["Baseline", *(f.capitalize() for f in FAMILIES)],
                rows, notes))  # fmt: skip

    rows = []
    for family, row in tables.table13.items():
        parent, leaf = row["parent"] or {}, row["leaf"] or {}
        rows.append([family, row["levels"], str(row["configs"]),
                     *(_n(parent.get(k), 2) for k in ("agreed", "conflicting", "unresolved")),
                     *(_n(leaf.get(k), 2) for k in ("agreed", "conflicting", "unresolved")),
                     *(str(row["categories"][c]) for c in CATEGORIES)])  # fmt: skip
    out.append(("Table 13: triple outcomes by level (median share over configurations) and outputs by category",
                ["Family", "Parent / leaf", "Configs", "P agr.", "P conf.", "P unres.", "L agr.", "L conf.", "L unres.",
                 *CATEGORIES], rows, []))  # fmt: skip

    t16 = tables.table16
    rows = []
    for model, cells in t16["models"].items():
        rows.append([model, *(v for f in FAMILIES for v in ((_n(cells[f]["S"]), _n(cells[f]["ktokens"], 0))
                                                             if f in cells else ("–", "–")))])
    notes = [f"usage not recorded for every task: {', '.join(t16['unrecorded'])}"] if t16["unrecorded"] else []
    out.append(("Table 16: quality and token use per task: mean S (× 100) and the median over configurations of mean "
                "tokens per task (thousands)", ["Model", *(f"{f.capitalize()} {m}" for f in FAMILIES for m in ("S", "Tok."))],
                rows, notes))  # fmt: skip

    rows = [[b["family"], f"{b['level']} ({b['label']})", str(b["configs"]), _pct(b["conflicting"]), _pct(b["unresolved"]),
             _pct(b["conflicting"] + b["unresolved"]), _pct(b["outputs_with_error"])] for b in tables.figure2]
    out.append(("Figure 2 data: error rates by level (median over configurations) and share of outputs with an error there",
                ["Family", "Level", "Configs", "Conflicting", "Unresolved", "Error", "Outputs with error"], rows, []))
    return out


_TEXT_COLUMNS = {"Model", "Harness", "Family", "Measure", "Baseline", "Parent / leaf", "Level"}


def _format(title: str, header: Sequence[str], rows: Sequence[Sequence[str]], notes: Sequence[str]) -> str:
    widths = [max(len(str(c)) for c in column) for column in zip(header, *rows)] if rows else [len(h) for h in header]
    left = {i for i, h in enumerate(header) if h in _TEXT_COLUMNS}

    def line(cells: Sequence[str]) -> str:
        return "  ".join(str(c).ljust(w) if i in left else str(c).rjust(w) for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    body = [title, line(header), *(line(r) for r in rows)] if rows else [title, "(no runs for this table)"]
    return "\n".join(body + [f"  note: {n}" for n in notes])


def render_text(tables: PacketTables) -> str:
    """Every table as text, headed by how many runs (and failed runs) they cover."""
    head = f"InfoOrgBench: {tables.runs} packet run(s)" + (f", {tables.failed} failed (their trees are scored)" if tables.failed else "")
    return "\n\n".join([head, *(_format(*table) for table in text_tables(tables))]) + "\n"


def render_tables(runs: list[PacketRun]) -> str:
    """The text report over packet runs (what `infoorg run` and `campaign run` print)."""
    return render_text(packet_tables(runs))


def figure2_svg(bars: list[dict[str, Any]]) -> str:
    """Figure 2 as SVG: stacked conflicting/unresolved bars per family and level, with the share
    of outputs with an error there in parentheses."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with plt.rc_context({"svg.fonttype": "none", "svg.hashsalt": "worldkit", "font.size": 9,
                         "axes.spines.top": False, "axes.spines.right": False}):  # fmt: skip
        figure, axes = plt.subplots(figsize=(max(3.0, 1.1 * len(bars) + 1), 3.2))
        x = list(range(len(bars)))
        conflicting = [100 * b["conflicting"] for b in bars]
        unresolved = [100 * b["unresolved"] for b in bars]
        axes.bar(x, conflicting, color="#c44e52", label="conflicting")
        axes.bar(x, unresolved, bottom=conflicting, color="#8c8c8c", label="unresolved")
        for i, b in enumerate(bars):
            axes.text(i, conflicting[i] + unresolved[i] + 1, f"({100 * b['outputs_with_error']:.0f}%)", ha="center", fontsize=8)
        axes.set_xticks(x, [f"{b['level']}\n{b['label']}\n{b['family']}" for b in bars])
        axes.set_ylabel("share of reference triples wrong (%)")
        axes.set_ylim(0, 105)
        axes.legend(loc="upper right", frameon=False)
        figure.tight_layout()
        buffer = io.StringIO()
        figure.savefig(buffer, format="svg", metadata={"Date": None})
        plt.close(figure)
    svg = buffer.getvalue()
    return svg[svg.index("<svg"):]


def render_html(tables: PacketTables) -> str:
    """One self-contained page: Figure 2 and every table."""
    parts = ["<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>worldkit InfoOrgBench report</title>",
             "<style>body{font-family:sans-serif;margin:2em auto;max-width:80em;padding:0 1.5em}"
             "table{border-collapse:collapse;margin:0 0 1.5em;font-size:.9em}caption{text-align:left;font-weight:bold}"
             "th,td{padding:.2em .7em;border-bottom:1px solid #e4e4e4;text-align:right}"
             ".note{color:#7a3b00}</style></head><body>",
             f"<h1>InfoOrgBench report</h1><p>{tables.runs} packet run(s), {tables.failed} failed.</p>"]
    if tables.figure2:
        parts.append("<h2>Figure 2: error rates for parent-level and leaf-level relations</h2>")
        parts.append(f"<figure>{figure2_svg(tables.figure2)}</figure>")
    for title, header, rows, notes in text_tables(tables):
        parts.append(f"<table><caption>{escape(title)}</caption><thead><tr>"
                     + "".join(f"<th>{escape(h)}</th>" for h in header) + "</tr></thead><tbody>"
                     + "".join("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in row) + "</tr>" for row in rows)
                     + "</tbody></table>" + "".join(f"<p class=\"note\">{escape(n)}</p>" for n in notes))  # fmt: skip
    parts.append("</body></html>\n")
    return "\n".join(parts)

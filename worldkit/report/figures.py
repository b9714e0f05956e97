"""The paper's Figure 3 panels as standalone SVG (matplotlib, text kept as text).

Upper row: standardized pass and access with their bootstrap intervals, joint access/pass
counts, search burden. Lower row: pass by task, pass and access by agent, and a sensitivity
forest plot of the pass difference (pooled GEE, each curator, equal task weighting, each task
left out). Output depends only on the inputs: fixed SVG ids, no dates. Never computes an
estimate; it draws what the analysis and the summaries hold.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from html import escape

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from worldkit.analysis.models import Analysis  # noqa: E402

__all__ = ["figure_panels"]

FULL, CURATED, NEUTRAL = "#4c72b0", "#dd8452", "#7f7f7f"
_STYLE = {
    "svg.fonttype": "none",
    "svg.hashsalt": "worldkit",
    "font.family": "sans-serif",
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 10,
    "axes.titleweight": "bold",
    "axes.titlelocation": "left",
    "legend.frameon": False,
}


def _svg(figure: Figure, title: str) -> str:
    out = io.StringIO()
    figure.savefig(out, format="svg", metadata={"Date": None, "Title": title},
                   bbox_inches="tight")
    plt.close(figure)
    text = out.getvalue()
    text = text[text.index("<svg"):]
    # matplotlib's RDF metadata block names its tool's web site; the caption says what it is.
    start, end = text.find("<metadata>"), text.find("</metadata>")
    if start >= 0 and end > start:
        text = text[:start] + f"<title>{escape(title)}</title>" + text[end + len("</metadata>"):]
    return text


def _new(width: float = 5.0, height: float = 3.4) -> tuple[Figure, plt.Axes]:
    figure, axes = plt.subplots(figsize=(width, height))
    return figure, axes


def _pp(value: float) -> str:
    return f"{100 * value:+.1f}"


def _outcomes(analysis: Analysis, robust: dict[str, tuple[float, float]]) -> str:
    figure, axes = _new()
    groups, full, curated, notes = [], [], [], []
    for key, name, estimate in (("pass", "Criterion pass\n(GEE)", analysis.passed),
                                ("access", "Evidence access\n(GEE, observable)", analysis.access)):
        contrast = estimate.contrast if estimate else None
        if contrast is None:
            continue
        groups.append(name)
        full.append(100 * contrast.full)
        curated.append(100 * contrast.curated)
        interval = contrast.interval
        notes.append(f"Δ {_pp(contrast.difference)} pp" + (
            f"\n[{100 * interval.lower:.1f}, {100 * interval.upper:.1f}]" if interval else "") + (
            f"\nmancl [{100 * robust[key][0]:.1f}, {100 * robust[key][1]:.1f}]" if key in robust else ""))
    given = analysis.pass_given_access
    if given is not None:
        groups.append("Pass given access\n(raw, descriptive)")
        full.append(100 * given.full)
        curated.append(100 * given.curated)
        notes.append(f"Δ {_pp(given.difference)} pp")
    xs = range(len(groups))
    width = 0.38
    axes.bar([x - width / 2 for x in xs], full, width, color=FULL, label="full projection")
    axes.bar([x + width / 2 for x in xs], curated, width, color=CURATED, label="curated")
    for x, a, b, note in zip(xs, full, curated, notes, strict=True):
        axes.text(x - width / 2, a + 1, f"{a:.1f}", ha="center", va="bottom", fontsize=8)
        axes.text(x + width / 2, b + 1, f"{b:.1f}", ha="center", va="bottom", fontsize=8)
        axes.text(x, max(a, b) + (10 if robust else 8), note, ha="center", va="bottom", fontsize=8,
                  fontweight="bold")
    axes.set_xticks(list(xs), groups)
    axes.set_ylim(0, 130)
    axes.set_yticks(range(0, 101, 20))
    axes.set_ylabel("Probability (%)")
    axes.legend(loc="upper center", ncols=2, bbox_to_anchor=(0.5, -0.18))
    return _svg(figure, "Criterion pass and sufficient-evidence access")


def _joint(columns: Sequence[str], counts: Sequence[Sequence[int]]) -> str:
    figure, axes = _new(height=2.6)
    segments = ("accessed, pass", "accessed, fail", "not accessed, pass", "not accessed, fail")
    colors = ("#55a868", "#c44e52", "#8fd19e", "#f1a3a5")
    for row, (column, values) in enumerate(zip(columns, counts, strict=True)):
        left, total = 0, sum(values) or 1
        for segment, value, color in zip(segments, values, colors, strict=True):
            axes.barh(row, value, left=left, color=color, label=segment if row == 0 else None)
            if value >= 0.06 * total:  # narrower segments have no room; the tables list them
                axes.text(left + value / 2, row, str(value), ha="center", va="center", fontsize=8)
            left += value
    axes.set_yticks(range(len(columns)), list(columns))
    axes.invert_yaxis()
    axes.set_xlabel("Criterion executions (graded, observable label)")
    for row, values in enumerate(counts):
        small = [f"{name} {value}" for name, value in zip(segments, values, strict=True)
                 if 0 < value < 0.06 * (sum(values) or 1)]
        if small:
            axes.text(sum(values) + 8, row, "\n".join(small), va="center", fontsize=7)
    axes.legend(loc="upper center", ncols=2, bbox_to_anchor=(0.5, -0.3), fontsize=8)
    return _svg(figure, "Joint access and pass states")


def _burden(columns: Sequence[str], means: Sequence[Sequence[float | None]]) -> str:
    figure, axes = _new()
    measures = ("File/record\ninspections", "Tool calls", "Tool calls before\nfirst access")
    width = 0.8 / max(1, len(columns))
    colors = [FULL, CURATED, "#55a868", "#8172b3"]
    for c, (column, values) in enumerate(zip(columns, means, strict=True)):
        xs = [m + (c - (len(columns) - 1) / 2) * width for m in range(len(measures))]
        shown = [v if v is not None else 0 for v in values]
        axes.bar(xs, shown, width, color=colors[c % len(colors)], label=column)
        for x, value in zip(xs, values, strict=True):
            if value is not None:
                axes.text(x, value, f"{value:.1f}", ha="center", va="bottom", fontsize=8)
    axes.set_xticks(range(len(measures)), measures)
    axes.set_ylabel("Mean per run")
    axes.legend(loc="upper right")
    return _svg(figure, "Search burden")


def _by_task(analysis: Analysis, labels: dict[str, str]) -> str:
    tasks = [t for t in analysis.by_task if t.passed is not None]
    tasks.sort(key=lambda t: t.passed.difference if t.passed else 0)
    figure, axes = _new(height=0.42 * len(tasks) + 1.2)
    for row, task in enumerate(tasks):
        assert task.passed is not None
        a, b = 100 * task.passed.full, 100 * task.passed.curated
        axes.plot([a, b], [row, row], color=NEUTRAL, linewidth=1.5, zorder=1)
        axes.scatter([a], [row], color=FULL, zorder=2, label="full projection" if not row else None)
        axes.scatter([b], [row], color=CURATED, zorder=2, label="curated" if not row else None)
        axes.text(max(a, b) + 1.5, row, f"{_pp(task.passed.difference)}", va="center", fontsize=8)
    axes.set_yticks(range(len(tasks)), [labels.get(t.task, t.task) for t in tasks])
    axes.set_xlabel("Criterion pass (%, raw)")
    low = min([100 * min(t.passed.full, t.passed.curated) for t in tasks if t.passed] or [0])
    axes.set_xlim(max(0, low - 10), 105)
    axes.legend(loc="upper center", ncols=2, bbox_to_anchor=(0.5, -0.12), fontsize=8)
    return _svg(figure, "Criterion pass by task")


def _by_agent(analysis: Analysis) -> str:
    figure, axes = _new()
    agents = [a for a in analysis.by_agent if a.passed is not None]
    width = 0.2
    series = (("pass, full", FULL, lambda a: a.passed.full, ""),
              ("pass, curated", CURATED, lambda a: a.passed.curated, ""),
              ("access, full", FULL, lambda a: a.access.full if a.access else None, "//"),
              ("access, curated", CURATED, lambda a: a.access.curated if a.access else None, "//"))
    for s, (name, color, value, hatch) in enumerate(series):
        xs = [i + (s - 1.5) * width for i in range(len(agents))]
        values = [value(a) for a in agents]
        axes.bar(xs, [100 * v if v is not None else 0 for v in values], width, color=color,
                 hatch=hatch, edgecolor="white", label=name)
        for x, v in zip(xs, values, strict=True):
            if v is not None:
                axes.text(x, 100 * v + 1, f"{100 * v:.0f}", ha="center", va="bottom", fontsize=7)
    axes.set_xticks(range(len(agents)), [a.agent for a in agents])
    axes.set_ylim(0, 110)
    axes.set_ylabel("Rate (%, raw)")
    axes.legend(loc="upper center", ncols=4, bbox_to_anchor=(0.5, -0.1), fontsize=7)
    return _svg(figure, "Criterion pass and evidence access by agent")


def _forest(analysis: Analysis, labels: dict[str, str]) -> str:
    rows: list[tuple[str, float, tuple[float, float] | None, str]] = []
    if analysis.passed and analysis.passed.contrast:
        c = analysis.passed.contrast
        rows.append(("Pooled (GEE-standardized)", c.difference,
                     (c.interval.lower, c.interval.upper) if c.interval else None, "#000000"))
    for packet in analysis.packets:
        c = packet.contrast
        rows.append((f"{packet.packet} only (raw)", c.difference,
                     (c.interval.lower, c.interval.upper) if c.interval else None, CURATED))
    if analysis.equal_task_pass is not None:
        rows.append(("Equal task weighting (raw)", analysis.equal_task_pass.difference, None,
                     FULL))
    if analysis.leave_one_task_out is not None:
        for task, value in analysis.leave_one_task_out.passed.items():
            rows.append((f"without {labels.get(task, task)}", value, None, NEUTRAL))
    figure, axes = _new(height=0.3 * len(rows) + 1.2)
    for row, (_, value, interval, color) in enumerate(rows):
        if interval is not None:
            axes.plot([100 * interval[0], 100 * interval[1]], [row, row], color=color,
                      linewidth=1.6)
        axes.scatter([100 * value], [row], color=color, zorder=3, marker="D" if row == 0 else "o",
                     s=28)
        text = f"{_pp(value)}" + (f" [{100 * interval[0]:.1f}, {100 * interval[1]:.1f}]"
                                  if interval else "")
        axes.annotate(text, (1.0, row), xycoords=("axes fraction", "data"), xytext=(4, 0),
                      textcoords="offset points", va="center", fontsize=7.5)
    axes.axvline(0, color="#999999", linewidth=0.8, linestyle="--")
    axes.set_yticks(range(len(rows)), [r[0] for r in rows])
    axes.invert_yaxis()
    axes.set_xlabel("Pass difference, curated - full (pp)")
    return _svg(figure, "Sensitivity of the pass difference")


def figure_panels(analysis: Analysis, labels: dict[str, str], columns: Sequence[str],
                  joint: Sequence[Sequence[int]], burden: Sequence[Sequence[float | None]],
                  robust: dict[str, tuple[float, float]] | None = None) -> list[tuple[str, str]]:
    """(caption, svg) for each panel of one source; `columns`, `joint` and `burden` are that
    source's conditions with their joint counts and search-burden means; `robust`, outcome
    (`pass`, `access`) → the small-sample-corrected interval (`--interval mancl`), drawn under
    the bootstrap interval where given."""
    robust = robust or {}
    caption = ("a. Criterion pass and sufficient-evidence access (GEE-standardized; Δ with 95% task-cluster "
               "bootstrap interval" + (", then the small-sample-corrected mancl interval)" if robust else ")"))
    with plt.rc_context(_STYLE):
        panels = [
            (caption, _outcomes(analysis, robust)),
            ("b. Joint access and pass states (counts)", _joint(columns, joint)),
            ("c. Search burden (mean per run)", _burden(columns, burden)),
            ("d. Criterion pass by task", _by_task(analysis, labels)),
            ("e. Criterion pass and evidence access by agent", _by_agent(analysis)),
            ("f. Sensitivity: curators, equal task weighting, leave one task out",
             _forest(analysis, labels)),
        ]
    return panels

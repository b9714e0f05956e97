"""The analysis as titled tables (title, header, rows) for the text and HTML reports.

Percentages print with one decimal (Python's round-half-even on the float), differences as
signed percentage points, intervals as [lower, upper]. A figure the data cannot support shows
as "–" beside the reason.
"""

from __future__ import annotations

from worldkit.analysis.models import Analysis, Contrast, GeeEstimate, TaskDelta
from worldkit.analysis.packets import PacketSummary

__all__ = ["analysis_tables", "packet_table", "pct", "pp", "span"]

TableSpec = tuple[str, list[str], list[list[str]]]
_DASH = "–"


def pct(value: float | None) -> str:
    return _DASH if value is None else f"{100 * value:.1f}%"


def pp(value: float | None, unit: str = " pp") -> str:
    return _DASH if value is None else f"{100 * value:+.1f}{unit}"


def span(interval: tuple[float, float] | None) -> str:
    return _DASH if interval is None else f"[{100 * interval[0]:.1f}, {100 * interval[1]:.1f}]"


def _task(task: str, labels: dict[str, str]) -> str:
    return f"{task} {labels[task]}" if task in labels else task


def _deltas(deltas: list[TaskDelta], labels: dict[str, str]) -> str:
    return ", ".join(f"{_task(d.task, labels)} {pp(d.difference, '')}" for d in deltas) or "none"


def _sizes(sizes: dict[str, int]) -> str:
    full, curated = sizes.get("full", 0), sizes.get("curated", 0)
    return str(full) if full == curated else f"{full} / {curated}"


def _line(name: str, contrast: Contrast | None, reasons: list[str] | None = None) -> list[str]:
    if contrast is None:
        return [name, _DASH, _DASH, _DASH, _DASH, _DASH]
    interval = contrast.interval
    bounds = span((interval.lower, interval.upper)) if interval else _DASH
    how = f"{interval.method}, {interval.valid}/{interval.replicates} valid" if interval else ""
    if interval and interval.saturated:
        how += f", {interval.saturated} diverged"
    if contrast.interval_reason and reasons is not None:
        reasons.append(f"{name}: no interval — {contrast.interval_reason}")
    return [name, pct(contrast.full), pct(contrast.curated), pp(contrast.difference), bounds, how]


def _gee(name: str, estimate: GeeEstimate | None, reasons: list[str]) -> list[str]:
    if estimate is not None and estimate.contrast is None:
        reasons.append(f"{name}: not estimated — {estimate.reason}")
    return _line(name, estimate.contrast if estimate else None, reasons)


def analysis_tables(analysis: Analysis, labels: dict[str, str]) -> tuple[list[TableSpec],
                                                                         list[str]]:
    """Estimate, sensitivity, curator, per-task and per-agent tables of one source, and the
    lines that say what could not be estimated (no tables when nothing could)."""
    if analysis.reason is not None:
        return [], [f"Estimates ({analysis.source}): not computed — {analysis.reason}"]
    reasons: list[str] = []
    header = ["Estimate", "full", "curated", "Δ curated - full", "95% interval", "Bootstrap"]
    rows = [
        _gee("Criterion pass (GEE-standardized)", analysis.passed, reasons),
        _gee("Evidence access (GEE-standardized, observable)", analysis.access, reasons),
        _line("Pass given access (raw, descriptive)", analysis.pass_given_access, reasons),
        _line("Criterion pass (raw pooled)", analysis.raw_pass),
        _line("Evidence access (raw pooled, observable)", analysis.raw_access),
        _line("Criterion pass, equal task weighting", analysis.equal_task_pass),
        _line("Evidence access, equal task weighting", analysis.equal_task_access),
    ]
    recoding = analysis.unknown_recoding
    if recoding is not None:
        rows += [
            _line("Access, unknown labels as accessed", recoding.all_accessed),
            _line("Access, unknown labels as not accessed", recoding.all_not_accessed),
            _line("Access, adversarial low (unknown: full yes, curated no)",
                  recoding.adversarial_lower),
            _line("Access, adversarial high (unknown: full no, curated yes)",
                  recoding.adversarial_upper),
        ]
    diverged = [(name, e.contrast.interval.saturated) for name, e in (
        ("pass", analysis.passed), ("access", analysis.access))
        if e and e.contrast and e.contrast.interval and e.contrast.interval.saturated]
    if diverged:
        counts = " and ".join(f"{n} of the {name} refits" for name, n in diverged)
        reasons.append(
            f"GEE bootstrap ({analysis.source}): {counts} diverged until a standardized "
            "probability reached 0 or 1; they are kept, as the study's code keeps them, but "
            "their values depend on the platform's floating point, so an interval's last "
            "digit can differ between machines.")
    title = (f"Estimates ({analysis.source}: {len(analysis.tasks)} task clusters, "
             f"{analysis.runs} runs, {analysis.executions} criterion executions; "
             f"{analysis.replicates} bootstrap replicates, seed {analysis.seed})")
    tables: list[TableSpec] = [(title, header, rows)]

    if analysis.packets:
        packet_rows = []
        for packet in analysis.packets:
            contrast = packet.contrast
            interval = contrast.interval
            if contrast.interval_reason:
                reasons.append(f"{packet.packet} vs full: no interval — {contrast.interval_reason}")
            packet_rows.append([
                packet.packet, f"{packet.passed}/{packet.graded}", pct(contrast.full),
                pct(contrast.curated), pp(contrast.difference),
                span((interval.lower, interval.upper)) if interval else _DASH,
                f"{packet.positive} of {packet.tasks}", _deltas(packet.reversals, labels),
            ])
        tables.append((f"Each curated packet vs the full projection ({analysis.source}, raw pass)",
                       ["Packet", "Passed", "full", "packet", "Δ packet - full", "95% interval",
                        "Tasks positive", "Reversals"], packet_rows))

    sens = []
    loto = analysis.leave_one_task_out
    if loto is not None:
        sens.append(["Leave-one-task-out pass Δ (raw pooled), range",
                     f"{100 * loto.pass_range[0]:.1f} to {100 * loto.pass_range[1]:.1f} pp"])
        sens.append(["Leave-one-task-out access Δ (raw pooled), range",
                     f"{100 * loto.access_range[0]:.1f} to {100 * loto.access_range[1]:.1f} pp"])
    both = len([t for t in analysis.by_task if t.passed is not None])
    sens.append(["Tasks with higher pass under curation", f"{analysis.positive_tasks} of {both}"])
    sens.append(["Tasks with lower pass under curation (reversals)",
                 _deltas(analysis.reversals, labels)])
    sens.append(["Tasks where curation cut all three search-burden means",
                 f"{analysis.search_reduced_tasks} of {both}"])
    if analysis.packet_gap is not None:
        sens.append(["Mean pass gap between a task's packets",
                     f"{100 * analysis.packet_gap:.1f} pp"])
    tables.append((f"Sensitivity ({analysis.source})", ["Measure", "Result"], sens))

    task_rows = []
    for task in analysis.by_task:
        passed, access = task.passed, task.access
        held = loto.passed.get(task.task) if loto else None
        task_rows.append([
            _task(task.task, labels), _sizes(task.executions),
            pct(passed.full if passed else None), pct(passed.curated if passed else None),
            pp(passed.difference if passed else None, ""),
            pct(access.full if access else None), pct(access.curated if access else None),
            pp(held, ""),
        ])
    tables.append((f"Per task ({analysis.source}, raw)",
                   ["Task", "N/condition", "Full pass", "Curated pass", "Δ pp", "Full access",
                    "Curated access", "Pooled Δ pp, task held out"], task_rows))
    agent_rows = []
    for agent in analysis.by_agent:
        counts = agent.pass_counts
        passed = agent.passed
        agent_rows.append([
            agent.agent,
            f"{counts['full'][0]}/{counts['full'][1]} ({pct(passed.full if passed else None)})",
            f"{counts['curated'][0]}/{counts['curated'][1]} "
            f"({pct(passed.curated if passed else None)})",
            pp(passed.difference if passed else None, ""),
            pp(agent.access.difference if agent.access else None, ""),
        ])
    tables.append((f"Per agent ({analysis.source}, raw)",
                   ["Agent", "Full pass", "Curated pass", "Pass Δ pp", "Access Δ pp"],
                   agent_rows))
    return tables, reasons


def packet_table(source: str, summary: PacketSummary) -> TableSpec:
    """Table 1 for one source's packets."""
    means = " / ".join(f"{name} {value:.1f}" for name, value in summary.size_mean_by_packet.items())
    median = summary.size_median
    rows = [
        ["Curated packets", str(summary.packets)],
        ["Packet size, median (range)",
         f"{median:g} ({summary.size_range[0]}–{summary.size_range[1]})"],
        ["Packet size, mean by curator", means],
        ["Task pairs with different source sets", f"{summary.pairs_differing}/{summary.task_pairs}"],
    ]
    if summary.jaccard_mean is not None and summary.jaccard_range is not None:
        rows.append(["Curator source-set Jaccard, mean (range)",
                     f"{summary.jaccard_mean:.2f} ({summary.jaccard_range[0]:.2f}–"
                     f"{summary.jaccard_range[1]:.2f})"])
    if summary.initially_sufficient is not None:
        rows.append(["Initially sufficient criterion–packet pairs",
                     f"{summary.initially_sufficient}/{summary.criterion_packet_pairs}"])
    if summary.revised is not None:
        rows.append(["Packets revised for completeness", f"{summary.revised}/{summary.packets}"])
    if summary.adjudicator_added is not None:
        rows.append(["Adjudicator additions", f"{summary.adjudicator_added} sources"])
    if summary.finally_sufficient is not None:
        rows.append(["Final criterion–packet coverage",
                     f"{summary.finally_sufficient}/{summary.criterion_packet_pairs}"])
    if summary.retained_range is not None:
        low, high = summary.retained_range
        rows.append(["Share of the seat's files retained, range",
                     f"{100 * low:.2f}% to {100 * high:.2f}%"])
    return (f"Curated packets ({source}, Table 1)", ["Measure", "Result"], rows)

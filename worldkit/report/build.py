"""The paper's tables from result rows: pass, access, pass given access, joint access/pass
counts and search burden — by condition, by curated packet, by task and by agent.

Definitions (WorkWorlds §4 and Table E1):
- pass rate: passed / graded executions; ungraded rows are counted apart, never guessed;
- access rate: accessed / observable executions (unknown labels excluded), with bounds that
  count every unknown as not accessed or as accessed;
- pass given access (descriptive): accessed-and-passed / accessed-and-graded;
- joint counts: graded executions with an observable label, by access × pass;
- search burden: the mean over runs (not rows) of each per-run figure, over the runs that
  recorded it.
Percentages and means are rounded half to even from exact fractions. Output depends only on
the rows, never on their order or on the clock.
"""

from __future__ import annotations

import io
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from decimal import ROUND_HALF_EVEN, Decimal
from fractions import Fraction
from pathlib import Path
from typing import Literal

from pydantic import computed_field
from rich import box
from rich.console import Console
from rich.table import Table

from worldkit._model import Model
from worldkit.analysis import DEFAULT_REPLICATES, DEFAULT_SEED, Analysis, analyze
from worldkit.analysis.ledgers import find_ledgers, read_ledgers, read_task_labels
from worldkit.analysis.overlay_packets import overlay_packets
from worldkit.analysis.small_sample import INTERVALS, MANCL_METHOD, SmallSampleEstimate, small_sample_estimates
from worldkit.analysis.packets import (
    PacketSummary,
    read_matched_packets,
    summarize_packets,
)
from worldkit.errors import UsageError
from worldkit.record.execution import RUNS_SOURCE, record_rows
from worldkit.record.results import ResultRow, check_rows
from worldkit.report.analysis_tables import analysis_tables, packet_table
from worldkit.report.provenance import Provenance, ledger_provenance, records_provenance

__all__ = [
    "REPORT_SCHEMA_VERSION",
    "Mean",
    "Report",
    "Summary",
    "build_report",
    "load_report",
    "analysis_reasons",
    "analysis_specs",
    "report_tables",
    "render_text",
    "report_json",
    "summarize",
]

REPORT_SCHEMA_VERSION = 2
_STATS = ("inspections", "tool_calls", "tool_calls_before_first_access")


def _ratio(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


class Mean(Model):
    """A per-run figure summed over the runs that recorded it."""


    total: int
    """Sum of the figure over `runs`."""
    runs: int
    """Runs that recorded the figure."""
    missing: int
    """Runs that did not record it (excluded from the mean)."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def mean(self) -> float | None:
        """total / runs, or None without runs."""
        return _ratio(self.total, self.runs)


class Summary(Model):
    """Counts for one group of result rows (e.g. one condition, or one task under one)."""


    runs: int
    """Distinct runs."""
    executions: int
    """Criterion executions (rows)."""
    passed: int
    """Graded executions that passed."""
    failed: int
    """Graded executions that failed."""
    ungraded: int
    """Executions without a verdict."""
    accessed: int
    """Executions whose evidence was accessed."""
    not_accessed: int
    """Executions whose evidence was not accessed."""
    unknown: int
    """Executions whose access label is unknown."""
    accessed_pass: int
    """Accessed and passed."""
    accessed_fail: int
    """Accessed and failed."""
    not_accessed_pass: int
    """Not accessed and passed."""
    not_accessed_fail: int
    """Not accessed and failed."""
    inspections: Mean
    """File/record inspections per run."""
    tool_calls: Mean
    """Tool calls per run."""
    tool_calls_before_first_access: Mean
    """Tool calls before the first sufficient access, per run."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def graded(self) -> int:
        """Executions with a verdict (the pass denominator)."""
        return self.passed + self.failed

    @computed_field  # type: ignore[prop-decorator]
    @property
    def observable(self) -> int:
        """Executions with a known access label (the access denominator)."""
        return self.accessed + self.not_accessed

    @computed_field  # type: ignore[prop-decorator]
    @property
    def pass_rate(self) -> float | None:
        """passed / graded."""
        return _ratio(self.passed, self.graded)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def access_rate(self) -> float | None:
        """accessed / observable (unknown labels excluded)."""
        return _ratio(self.accessed, self.observable)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def access_bounds(self) -> tuple[float, float] | None:
        """Access rate over all executions with unknowns as not accessed, then as accessed."""
        if not self.executions:
            return None
        return (self.accessed / self.executions,
                (self.accessed + self.unknown) / self.executions)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def pass_given_access(self) -> float | None:
        """accessed & passed / accessed & graded (descriptive)."""
        return _ratio(self.accessed_pass, self.accessed_pass + self.accessed_fail)


def summarize(rows: Iterable[ResultRow]) -> Summary:
    """Count one group of rows; per-run figures are taken once per run."""
    counts: dict[str, int] = defaultdict(int)
    runs: dict[tuple[str, str], ResultRow] = {}
    for row in rows:
        runs.setdefault(row.run_key, row)
        counts["executions"] += 1
        verdict = {True: "pass", False: "fail", None: "ungraded"}[row.passed]
        label = {True: "accessed", False: "not_accessed", None: "unknown"}[row.accessed]
        counts[{"pass": "passed", "fail": "failed", "ungraded": "ungraded"}[verdict]] += 1
        counts[label] += 1
        if row.passed is not None and row.accessed is not None:
            counts[f"{label}_{verdict}"] += 1
    means = {}
    for name in _STATS:
        values = [getattr(row, name) for row in runs.values()]
        known = [value for value in values if value is not None]
        means[name] = Mean(total=sum(known), runs=len(known), missing=len(values) - len(known))
    fields = ("executions", "passed", "failed", "ungraded", "accessed", "not_accessed", "unknown",
              "accessed_pass", "accessed_fail", "not_accessed_pass", "not_accessed_fail")
    return Summary(runs=len(runs), **{name: counts[name] for name in fields}, **means)


class Report(Model):
    """Every table of a report, keyed by column label (a condition, or source and condition)."""


    schema_version: Literal[2] = REPORT_SCHEMA_VERSION
    """Version of the report format."""
    columns: list[str]
    """Column labels in display order (full before curated)."""
    overall: dict[str, Summary]
    """Column → summary of all its rows."""
    by_packet: dict[str, Summary]
    """Column split by curated packet → summary; empty when no run names a packet."""
    by_task: dict[str, dict[str, Summary]]
    """Task → column → summary."""
    by_agent: dict[str, dict[str, Summary]]
    """Agent → column → summary."""
    task_labels: dict[str, str]
    """Task id → readable label, where known."""
    analyses: list[Analysis] = []
    """The paper's estimates, one per source (empty when not asked for)."""
    packets: dict[str, PacketSummary] = {}
    """Source → its curated packets' characteristics (Table 1), where known."""
    notes: list[str] = []
    """What the report could not include, and why."""
    provenance: list[Provenance] = []
    """What each source was computed from."""
    small_sample: list[SmallSampleEstimate] = []
    """With `--interval mancl`: each source's pass and access difference with the
    small-sample-corrected interval (`worldkit.analysis.small_sample`); empty otherwise."""


def _grouped(rows: list[ResultRow], key: Callable[[ResultRow], str]) -> dict[str, Summary]:
    groups: dict[str, list[ResultRow]] = defaultdict(list)
    for row in rows:
        groups[key(row)].append(row)
    return {label: summarize(members) for label, members in groups.items()}


def build_report(rows: Iterable[ResultRow], task_labels: dict[str, str] | None = None) -> Report:
    """Summarize rows into every table; rows from several sources stay in separate columns.

    Raises `InvalidResults` if the rows do not describe coherent runs (see `check_rows`).
    """
    ordered = check_rows(rows)
    sources = sorted({row.source for row in ordered})

    def column(row: ResultRow) -> str:
        return row.condition if len(sources) == 1 else f"{row.source} {row.condition}"

    def packet(row: ResultRow) -> str:
        return f"{column(row)} ({row.packet})" if row.packet else column(row)

    rank = {"full": 0, "curated": 1}
    columns = sorted({column(row) for row in ordered},
                     key=lambda label: (label.rsplit(" ", 1)[0] if len(sources) > 1 else "",
                                        rank[label.rsplit(" ", 1)[-1]]))
    by_packet: dict[str, Summary] = {}
    if any(row.packet for row in ordered):
        by_packet = _grouped(ordered, packet)
    return Report(
        columns=columns,
        overall=_grouped(ordered, column),
        by_packet=by_packet,
        by_task={task: _grouped([r for r in ordered if r.task == task], column)
                 for task in sorted({row.task for row in ordered})},
        by_agent={agent: _grouped([r for r in ordered if r.agent == agent], column)
                  for agent in sorted({row.agent for row in ordered})},
        task_labels=dict(task_labels or {}),
    )


def load_report(runs: Sequence[Path] = (), ledgers: Path | None = None, *,
                stores: Sequence[str] = (), run_ids: Sequence[str] | None = None,
                analysis: bool = True, replicates: int = DEFAULT_REPLICATES,
                seed: int = DEFAULT_SEED, workers: int | None = None, interval: str = "paper") -> Report:
    """Read execution records under `runs` and in `stores` (only `run_ids`' when given) and/or a
    ledger release, and build the report.

    With `analysis`, each source also gets the paper's estimates (`replicates` task-cluster
    bootstrap replicates from `seed`, over `workers` processes; 0 replicates: no intervals),
    its curated packets' characteristics and its provenance; with `interval="mancl"`, also the
    small-sample-corrected interval of each GEE difference.
    """
    from worldkit.report.campaigns import campaign_notes
    from worldkit.report.records import gather_records

    if not runs and not stores and ledgers is None:
        raise UsageError("nothing to report: give one or more RUNS (folders or stores) or --ledgers DIR")
    if replicates < 0:
        raise UsageError(f"--replicates must be 0 or more (got {replicates})")
    if interval not in INTERVALS:
        raise UsageError(f"--interval {interval}: choose among {', '.join(INTERVALS)}")
    records, notes = gather_records(runs, stores, run_ids) if runs or stores else ([], [])
    notes = campaign_notes(runs, records) + notes
    rows = record_rows(records)
    labels: dict[str, str] = {}
    packets: dict[str, PacketSummary] = {}
    provenance: list[Provenance] = []
    if runs or stores:
        packet_rows, packet_notes, titles = overlay_packets(records)
        labels.update(titles)
        notes += packet_notes
        summary = summarize_packets(packet_rows)
        if summary is not None:
            packets[RUNS_SOURCE] = summary
        provenance.append(records_provenance(records))
    if ledgers is not None:
        ledger_rows = read_ledgers(ledgers)
        source = ledger_rows[0].source if ledger_rows else ledgers.resolve().name
        rows += ledger_rows
        labels.update(read_task_labels(ledgers))
        matched = read_matched_packets(find_ledgers(ledgers))
        summary = summarize_packets(matched or [])
        if summary is not None:
            packets[source] = summary
        else:
            notes.append(f"{source}: no matched_results.json, so no packet table")
        seen = sorted({row.run_id for row in ledger_rows})
        agents = sorted({row.agent for row in ledger_rows})
        provenance.append(ledger_provenance(ledgers, source).model_copy(
            update={"run_ids": seen, "agents": agents}))
    report = build_report(rows, labels)
    if not analysis:
        return report
    return report.model_copy(update={
        "analyses": analyze(rows, replicates=replicates, seed=seed, workers=workers),
        "packets": packets, "notes": notes, "provenance": provenance,
        "small_sample": small_sample_estimates(rows) if interval == "mancl" else [],
    })


def report_json(report: Report) -> dict:
    """The report as plain JSON data (counts, and rates as floats)."""
    return report.model_dump(mode="json")


# Formatting ------------------------------------------------------------------------------------

def _fixed(value: Fraction, places: int = 1) -> str:
    exact = Decimal(value.numerator) / Decimal(value.denominator)
    return str(exact.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_EVEN))


def _pct(numerator: int, denominator: int) -> str:
    return _fixed(Fraction(numerator * 100, denominator)) + "%" if denominator else "–"


def _share(numerator: int, denominator: int) -> str:
    return f"{numerator}/{denominator} ({_pct(numerator, denominator)})" if denominator else "–"


def _mean(mean: Mean) -> str:
    if not mean.runs:
        return "–"
    text = _fixed(Fraction(mean.total, mean.runs))
    return f"{text} (n={mean.runs})" if mean.missing else text


def _delta(later: Fraction | None, earlier: Fraction | None, unit: str = " pp") -> str:
    if later is None or earlier is None:
        return "–"
    text = _fixed(later - earlier)
    return f"{'' if text.startswith('-') else '+'}{text}{unit}"


def _rates(summary: Summary) -> tuple[Fraction | None, ...]:
    def frac(numerator: int, denominator: int) -> Fraction | None:
        return Fraction(100 * numerator, denominator) if denominator else None

    def mean(value: Mean) -> Fraction | None:
        return Fraction(value.total, value.runs) if value.runs else None

    return (
        frac(summary.passed, summary.graded),
        frac(summary.accessed, summary.observable),
        frac(summary.accessed_pass, summary.accessed_pass + summary.accessed_fail),
        *(mean(getattr(summary, name)) for name in _STATS),
    )


TableSpec = tuple[str, list[str], list[list[str]]]


def _outcome_table(title: str, summaries: dict[str, Summary], order: Sequence[str]) -> TableSpec:
    cols = [summaries[label] for label in order]

    def line(name: str, cell: Callable[[Summary], str]) -> list[str]:
        return [name, *(cell(s) for s in cols)]

    rows = [
        line("Runs", lambda s: str(s.runs)),
        line("Criterion executions", lambda s: str(s.executions)),
        line("Passed / graded", lambda s: _share(s.passed, s.graded)),
        line("Ungraded", lambda s: str(s.ungraded)),
        line("Accessed / observable", lambda s: _share(s.accessed, s.observable)),
        line("Unknown access labels", lambda s: f"{s.unknown} ({_pct(s.unknown, s.executions)})"),
        line("Access bounds (unknown as not / as accessed)",
             lambda s: f"{_pct(s.accessed, s.executions)} – "
                       f"{_pct(s.accessed + s.unknown, s.executions)}"),
        line("Pass given access",
             lambda s: _share(s.accessed_pass, s.accessed_pass + s.accessed_fail)),
        line("Accessed, pass", lambda s: str(s.accessed_pass)),
        line("Accessed, fail", lambda s: str(s.accessed_fail)),
        line("Not accessed, pass", lambda s: str(s.not_accessed_pass)),
        line("Not accessed, fail", lambda s: str(s.not_accessed_fail)),
        line("Mean file/record inspections per run", lambda s: _mean(s.inspections)),
        line("Mean tool calls per run", lambda s: _mean(s.tool_calls)),
        line("Mean tool calls before first access",
             lambda s: _mean(s.tool_calls_before_first_access)),
    ]
    return title, ["Outcome", *order], rows


def _pairs(columns: list[str]) -> list[tuple[str, str, str]]:
    """(label, full column, curated column) for each source that has both conditions."""
    pairs = []
    for full in columns:
        if full.endswith("full"):
            curated = full[: -len("full")] + "curated"
            if curated in columns:
                pairs.append((f"{full[: -len('full')]}Δ curated - full", full, curated))
    return pairs


def _group_table(title: str, name: str, groups: dict[str, dict[str, Summary]],
                 columns: list[str], labels: dict[str, str]) -> TableSpec:
    header = [name, "Condition", "Runs", "Pass", "Access", "Pass | access", "Inspections",
              "Tool calls", "Before access"]
    rows = []
    for group, summaries in groups.items():
        title_cell = f"{group} {labels[group]}" if group in labels else group
        for label in columns:
            if label not in summaries:
                continue
            s = summaries[label]
            rows.append([title_cell, label, str(s.runs), _share(s.passed, s.graded),
                         _share(s.accessed, s.observable),
                         _pct(s.accessed_pass, s.accessed_pass + s.accessed_fail),
                         *(_mean(getattr(s, stat)) for stat in _STATS)])
            title_cell = ""
        for delta_label, full, curated in _pairs(columns):
            if full in summaries and curated in summaries:
                after, before = _rates(summaries[curated]), _rates(summaries[full])
                rows.append(["", delta_label, "",
                             *(_delta(a, b, " pp" if i < 3 else "")
                               for i, (a, b) in enumerate(zip(after, before, strict=True)))])
    return title, header, rows


def report_tables(report: Report) -> list[TableSpec]:
    """The raw tables: outcomes by condition and by packet, by task, by agent."""
    tables = [_outcome_table("Raw outcomes by condition", report.overall, report.columns)]
    if report.by_packet:
        tables.append(_outcome_table("Raw outcomes by curated packet", report.by_packet,
                                     sorted(report.by_packet, key=_packet_rank(report))))
    tables.append(_group_table("By task", "Task", report.by_task, report.columns,
                               report.task_labels))
    tables.append(_group_table("By agent", "Agent", report.by_agent, report.columns, {}))
    return tables


def analysis_specs(report: Report) -> list[TableSpec]:
    """The estimate tables of every source, then each source's packet table."""
    tables: list[TableSpec] = []
    for result in report.analyses:
        tables += analysis_tables(result, report.task_labels)[0]
    if report.small_sample:
        tables.append(_small_sample_table(report.small_sample))
    for source, summary in sorted(report.packets.items()):
        tables.append(packet_table(source, summary))
    return tables


def _small_sample_table(estimates: list[SmallSampleEstimate]) -> TableSpec:
    rows = []
    for e in estimates:
        if e.difference is None or e.lower is None or e.upper is None:
            rows.append([e.source, e.outcome, "–", "–", "–", f"– ({e.reason})"])
        else:
            rows.append([e.source, e.outcome, f"{100 * e.difference:+.1f}", f"{100 * (e.se or 0):.1f}", f"{e.df:.1f}",
                         f"[{100 * e.lower:.1f}, {100 * e.upper:.1f}]"])
    return (f"GEE difference with the small-sample-corrected 95% interval (mancl: {MANCL_METHOD})", ["Source", "Outcome", "Δ curated - full", "SE", "df", "95% interval"], rows)


def analysis_reasons(report: Report) -> list[str]:
    """What could not be estimated and why, and the report's notes."""
    lines = []
    for result in report.analyses:
        lines += analysis_tables(result, report.task_labels)[1]
    return lines + [f"Note: {note}" for note in report.notes]


def _packet_rank(report: Report) -> Callable[[str], tuple[int, str]]:
    def rank(label: str) -> tuple[int, str]:
        base = next(i for i, c in enumerate(report.columns)
                    if label == c or label.startswith(c + " ("))
        return base, label
    return rank


def render_text(report: Report, width: int = 240) -> str:
    """The tables as plain text (no colour), identical on every terminal."""
    out = io.StringIO()
    console = Console(file=out, width=width, color_system=None, force_terminal=False,
                      highlight=False, emoji=False, markup=False)
    for title, header, rows in report_tables(report) + analysis_specs(report):
        table = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left", highlight=False)
        for index, name in enumerate(header):
            text = index == 0 or name == "Condition"
            table.add_column(name, justify="left" if text else "right", no_wrap=True)
        for row in rows:
            table.add_row(*row)
        console.print(table)
    for line in analysis_reasons(report):
        console.print(line)
    for line in sorted({c for p in report.provenance for c in p.calibrations if ": calibration " in c}):
        console.print(f"Judge {line}")
    return "\n".join(line.rstrip() for line in out.getvalue().splitlines()) + "\n"

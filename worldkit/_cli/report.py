"""`worldkit report`: the paper's tables and estimates from execution records and/or a
WorkWorlds ledger."""

from __future__ import annotations

from pathlib import Path

import typer

from worldkit.canon import pretty_json
from worldkit.errors import UsageError

REPLICATES = 2_000
"""`worldkit.analysis.DEFAULT_REPLICATES`, repeated so `--help` does not import numpy."""
SEED = 20_270_908
"""`worldkit.analysis.DEFAULT_SEED` (the public WorkWorlds artifact's seed)."""


def register(app: typer.Typer) -> None:
    @app.command("report")
    def report(
        runs: list[str] = typer.Argument(  # noqa: B008 - typer declares options this way
            None,
            metavar="RUNS",
            help="Run or campaign folders holding execution-record.json files (or InfoOrgBench packet runs), or stores "
                 "(sqlite:///…/store.db, postgresql://…, a store file) holding runs' records.",
            show_default=False,
        ),
        ledgers: Path | None = typer.Option(
            None, "--ledgers", metavar="DIR",
            help="A WorkWorlds ledger release (criterion_results.csv, run_ledger.csv).",
        ),
        as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
        html: Path | None = typer.Option(
            None, "--html", metavar="OUT",
            help="Also write a self-contained HTML report with the paper's figure panels.",
        ),
        estimates: bool = typer.Option(
            True, "--estimates/--no-estimates",
            help="Compute the GEE estimates, bootstrap intervals and sensitivity analyses.",
        ),
        replicates: int = typer.Option(
            REPLICATES, "--replicates", min=0,
            help="Task-cluster bootstrap replicates (0: point estimates only).",
        ),
        seed: int = typer.Option(SEED, "--seed", help="Bootstrap seed (numpy default_rng)."),
        interval: str = typer.Option(
            "paper", "--interval", metavar="METHOD",
            help="`paper`: the study's percentile task-cluster bootstrap only (reproduces the paper); `mancl`: "
                 "also each GEE difference with a small-sample-corrected interval (bias-reduced sandwich, t with "
                 "Bell–McCaffrey df), which covers at 8 tasks where the paper's undercovers (docs/experiment.md).",
        ),
        workers: int | None = typer.Option(
            None, "--workers", min=1, help="Processes for the GEE bootstrap [default: one per CPU]."
        ),
        store: str | None = typer.Option(
            None, "--store", metavar="URL",
            help="A store whose runs' execution records to report (as a RUNS store is).",
        ),
        run_id: list[str] = typer.Option(  # noqa: B008 - typer declares options this way
            None, "--run-id", metavar="ID",
            help="Report only these runs (repeatable); each must be found in RUNS.",
        ),
        packets: list[Path] = typer.Option(  # noqa: B008 - typer declares options this way
            None, "--packets", metavar="DIR",
            help="InfoOrgBench: packet folders (or folders of them) where a packet campaign's packets are, for Table 4's "
                 "Vote; used only where they match the campaign's frozen digests (default: the paths its design named).",
        ),
    ) -> None:
        """Pass, access, pass given access, joint counts and search burden, by condition,
        curated packet, task and agent; the GEE-standardized estimates with task-cluster
        bootstrap intervals, sensitivity analyses and curated-packet characteristics.

        A store (--store URL, or a store file or URL among RUNS) gives the execution records
        its runs stored beside their logs, each checked against its run's log head; of a
        campaign, each planned run's recorded attempt. A store with logs but no records is
        refused with what it holds (exit 2).

        Folders of InfoOrgBench packet runs (`infoorg run`, or a packet campaign) give the
        paper's Tables 3, 4, 10, 11, 12, 13, 16 and Figure 2's data instead (--html adds the
        figure; --json gives every table)."""
        from worldkit._cli.runs_args import split_runs
        from worldkit.report.build import load_report, render_text, report_json
        from worldkit.report.html import render_html

        folders, stores = split_runs(runs, store)
        if folders and not stores and ledgers is None and _packet_runs_only(folders):
            _packet_report(folders, as_json=as_json, html=html, run_ids=run_id or None, packets=packets or [])
            return
        result = load_report(folders, ledgers, stores=stores, run_ids=run_id or None,
                             analysis=estimates, replicates=replicates, seed=seed, workers=workers,
                             interval=interval)
        if html is not None:
            try:
                html.write_text(render_html(result), encoding="utf-8")
            except OSError as error:
                raise UsageError(
                    f"cannot write {html}: {error.strerror}; pass --html a path in an existing, "
                    "writable directory"
                ) from error
            typer.echo(f"wrote {html}", err=True)
        if as_json:
            typer.echo(pretty_json(report_json(result)), nl=False)
        else:
            typer.echo(render_text(result), nl=False)


def _packet_runs_only(folders: list[Path]) -> bool:
    """True when the folders hold InfoOrgBench packet runs (result.json beside workspace/) and
    no execution record: a packet campaign or a folder of `infoorg run` runs."""
    found = False
    for folder in folders:
        if folder.is_file():
            return False
        if next(folder.rglob("execution-record.json"), None) is not None:
            return False
        found = found or any((r.parent / "workspace").is_dir() for r in folder.rglob("result.json"))
    return found


def _packet_report(folders: list[Path], *, as_json: bool, html: Path | None, run_ids: list[str] | None,
                   packets: list[Path]) -> None:  # fmt: skip
    """Tables 3, 4, 10, 11, 12, 13, 16 and Figure 2's data over packet runs."""
    from worldkit.report.infoorg import find_packet_runs, packet_tables
    from worldkit.report.infoorg_text import render_html, render_text

    runs = find_packet_runs(folders)
    if run_ids:
        missing = sorted(set(run_ids) - {r.run_id for r in runs})
        if missing:
            raise UsageError(f"no packet run {', '.join(missing)} under {', '.join(map(str, folders))}")
        runs = [r for r in runs if r.run_id in run_ids]
    for folder in packets:
        if not folder.is_dir():
            raise UsageError(f"--packets {folder}: not a folder; pass a packet folder or a folder of packets")
    tables = packet_tables(runs, packets)
    if html is not None:
        try:
            html.write_text(render_html(tables), encoding="utf-8")
        except OSError as error:
            raise UsageError(f"cannot write {html}: {error.strerror}; pass --html a path in an existing, writable "
                             "directory") from error
        typer.echo(f"wrote {html}", err=True)
    if as_json:
        typer.echo(pretty_json(tables.as_json()), nl=False)
    else:
        typer.echo(render_text(tables), nl=False)

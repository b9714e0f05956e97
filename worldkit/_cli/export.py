"""`worldkit export`: write worldkit runs in other tools' formats (a sub-app; one command each)."""

from __future__ import annotations

from pathlib import Path

import typer

export_app = typer.Typer(
    name="export", help="Write worldkit runs in other tools' formats.", no_args_is_help=True,
    add_completion=False,
)


@export_app.command("ledgers")
def ledgers(
    runs: list[Path] = typer.Argument(  # noqa: B008 - typer declares arguments this way
        ..., metavar="RUNS_DIR", help="Directories holding execution-record.json files.",
    ),
    out: Path = typer.Option(..., "--out", metavar="DIR",
                             help="A new (or empty) directory for the ledger files."),
) -> None:
    """Write runs as WorkWorlds ledgers (criterion_results.csv, run_ledger.csv, and
    task_mapping.csv when every overlay's title is known), readable by
    `worldkit report --ledgers` and by the study's own analysis code."""
    from worldkit.run.analysis.overlay_packets import overlay_packets
    from worldkit.run.export_ledgers import export_ledgers
    from worldkit.run.record import find_records

    _, _, titles = overlay_packets(find_records(runs))
    written = export_ledgers(runs, out, titles)
    for name, count in written.items():
        typer.echo(f"wrote {out / name} ({count} rows)", err=True)


def register(app: typer.Typer) -> None:
    app.add_typer(export_app, name="export")

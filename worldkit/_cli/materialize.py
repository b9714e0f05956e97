"""`worldkit materialize`: one seat's projection on one date of one revision."""

from __future__ import annotations

from pathlib import Path

import typer

from worldkit._cli.output import echo_json


def materialize_command(
    world: str = typer.Option(..., "--world", help="World name under worlds/ or a path."),
    rev: str = typer.Option(..., "--rev", help="Revision name, e.g. r1."),
    date: str = typer.Option(..., "--date", help="Projection date, YYYY-MM-DD."),
    seat: str = typer.Option(..., "--seat", help="Seat id, e.g. EMP-QC-001."),
    out: Path = typer.Option(..., "--out", help="Output directory (must be empty or absent)."),
    force: bool = typer.Option(False, "--force", help="Replace a non-empty output directory."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Materialize what a seat sees on a date into a digested projection."""
    from worldkit._cli.process import owns_process
    from worldkit._process import freeze_process
    from worldkit.materialize import materialize
    from worldkit.world import load_world

    package = load_world(world)
    package.revision(rev)  # resolved (and kept by the package) before the freeze below
    ends = owns_process()
    if ends:
        # The program ends with the projection: the world stays loaded until the process exits, so it
        # goes out of the collector's sight now (as `main` froze its start-up), and no later step reads
        # what workers render into their caches. Called in-process (`run()`), the caller's heap and
        # caches are left as they are.
        freeze_process()
    result = materialize(package, rev, date, seat, out, force=force, office_workers=ends)
    summary = result.summary()
    end = package.revision(rev).history_end
    if end is not None and str(summary["date"]) > end.isoformat():
        typer.echo(f"note: {summary['date']} is after the end of {summary['world']} {rev}'s history ({end.isoformat()}): "
                   "nothing happens after that day, so the projection is the world as it stood then", err=True)  # fmt: skip
    if as_json:
        echo_json(summary)
        return
    typer.echo(f"{summary['world']} {summary['rev']} {summary['date']} {summary['seat']} → {summary['out']}")
    typer.echo("files: " + str(summary["files"]) + " (" + ", ".join(f"{k} {v}" for k, v in summary["surfaces"].items()) + ")")
    typer.echo(f"revision digest: {summary['revision_digest']}")
    typer.echo(f"tool bundle:     {summary['tool_bundle_sha256']}")
    typer.echo(f"fingerprint:     {summary['fingerprint']}")


def register(app: typer.Typer) -> None:
    app.command("materialize")(materialize_command)

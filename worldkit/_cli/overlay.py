"""`worldkit overlay new|check|apply|freeze|pin`: author task overlays and package them."""

from __future__ import annotations

from pathlib import Path

import typer

from worldkit._cli.output import echo_json
from worldkit.errors import ExitCode

overlay_app = typer.Typer(help="Author task overlays and apply them to projections.", no_args_is_help=True)


@overlay_app.command("new")
def new(
    world: str = typer.Option(..., "--world", help="World name under worlds/ or a path."),
    rev: str = typer.Option(..., "--rev", help="Starting revision, e.g. r2."),
    date: str = typer.Option(..., "--date", help="Task date, YYYY-MM-DD."),
    seat: str = typer.Option(..., "--seat", help="Seat id, e.g. EMP-QC-001."),
    overlay_id: str = typer.Option(..., "--id", help="Task id, e.g. stability-update."),
    out: Path = typer.Option(None, "--out", help="Overlay file to write (default: overlays/<world>/<id>.yaml)."),
    force: bool = typer.Option(False, "--force", help="Replace an existing file."),
) -> None:
    """Scaffold a valid overlay pinned to the projection's current fingerprint."""
    from worldkit.overlay import new_overlay

    path = new_overlay(world, rev, date, seat, overlay_id, out, force=force)
    typer.echo(f"wrote {path}")
    typer.echo(f"next: fill in the TODOs, then `worldkit overlay check {path}`")


@overlay_app.command("check")
def check(
    overlay: str = typer.Argument(..., help="Overlay YAML (or its folder, or its id)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Report every problem of an overlay against its projection.

    Exit 0: no error (warnings allowed). 1: the overlay has errors (listed). 3: it cannot be read
    (not YAML, or not an overlay at all). 2: no such overlay.
    """
    from worldkit.grade.reference_access import check_overlay_fully

    report = check_overlay_fully(overlay)
    if as_json:
        echo_json(report.as_json())
    else:
        for problem in report.problems:
            typer.echo(problem.line())
        verdict = "ok" if report.ok else "FAILED"
        warnings = len(report.problems) - len(report.errors)
        typer.echo(f"{report.overlay}: {verdict} ({len(report.errors)} error(s), {warnings} warning(s))")
    if not report.ok:
        raise typer.Exit(int(ExitCode.CHECK_FAILED))


@overlay_app.command("apply")
def apply(
    overlay: str = typer.Argument(..., help="Overlay YAML (or its folder, or its id)."),
    out: Path = typer.Option(..., "--out", help="Package folder to write (must be empty or absent)."),
    condition: str = typer.Option("full", "--condition", help="`full` or `curated:NAME`."),
    force: bool = typer.Option(False, "--force", help="Replace a non-empty output folder."),
    allow_stale: bool = typer.Option(False, "--allow-stale", help="Apply even if the pinned fingerprint is stale."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Write the candidate and verifier packages of an overlay."""
    from worldkit.overlay import apply_overlay

    result = apply_overlay(overlay, out, condition, force=force, allow_stale=allow_stale)
    summary = result.summary()
    if as_json:
        echo_json(summary)
        return
    typer.echo(f"{summary['overlay']} [{summary['condition']}] {summary['world']} {summary['rev']} "
               f"{summary['date']} {summary['seat']} → {summary['out']}")  # fmt: skip
    typer.echo(f"fingerprint: {summary['fingerprint']}")
    typer.echo(f"candidate:   {summary['candidate_sha256']}")
    typer.echo(f"verifier:    {summary['verifier_sha256']}")


@overlay_app.command("freeze")
def freeze(
    overlay: str = typer.Argument(..., help="Overlay YAML (or its folder, or its id)."),
    manifests: Path = typer.Option(Path("manifests"), "--manifests", help="Manifests folder."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Check, then record the overlay and package digests in manifests/<world>/overlays/."""
    from worldkit.grade.reference_access import check_overlay_fully
    from worldkit.overlay import freeze_overlay

    result = freeze_overlay(overlay, manifests, check=check_overlay_fully)
    if as_json:
        echo_json({"path": str(result.path), **result.lock.model_dump(mode="json")})
        return
    typer.echo(f"wrote {result.path}")
    for condition, digests in result.lock.conditions.items():
        typer.echo(f"  {condition:<20} candidate {digests.candidate_sha256}  verifier {digests.verifier_sha256}")


@overlay_app.command("pin")
def pin(
    overlays: list[str] = typer.Argument(..., help="Overlay YAML files to re-pin."),
) -> None:
    """Set pinned_fingerprint to the projection's current fingerprint (after reviewing the change)."""
    from worldkit.overlay import pin_overlay

    for overlay in overlays:
        result = pin_overlay(overlay)
        state = f"{result.previous[:12]} → {result.fingerprint[:12]}" if result.changed else "unchanged"
        typer.echo(f"{result.path}: {state}")


def register(app: typer.Typer) -> None:
    app.add_typer(overlay_app, name="overlay")

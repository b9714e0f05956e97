"""`worldkit overlay new|check|mutate|apply|freeze|pin`: author task overlays, grade generated variants of their rubrics, package them."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

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

    Once the overlay has no other error, the rubric's mutation campaign runs too (`overlay
    mutate`): a generated right variant failing a criterion (mutation-right-fails), a criterion
    catching fewer than 95% of the wrong variants touching it (mutation-undercaught) and a
    do-nothing variant passing a criterion (do-nothing-passes) are errors.

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


@overlay_app.command("mutate")
def mutate(
    overlay: str = typer.Argument(..., help="Overlay YAML (or its folder, or its id)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the generator's choices (same seed, same variants)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Grade generated right and wrong deliverables; print, per criterion, wrong variants caught /
    touching it and right variants passed.

    The do-nothing family (empty workspace, the request saved as each deliverable, a memo restating
    the question, header-only tables, copies of the evidence) is graded on every criterion, the
    semantic ones by the offline `facts` judge. An absence ("no prohibited change", "nothing
    extra") is credited only when the same state passes a criterion that asks for content.
    `overlay check`, `overlay freeze` and `verify` (rubric-mutation) run the same campaign; its
    reports are cached under WORLDKIT_CACHE.

    Exit 0: every right variant passes, each criterion catches at least 95% of the wrong variants
    touching it, and the do-nothing family passes nothing. 1: not so (the failures are listed).
    """
    from worldkit._cli.output import progress_bar
    from worldkit.mutate.gate import mutate_overlay

    with progress_bar("mutate", enabled=not as_json) as progress:
        report = mutate_overlay(overlay, seed=seed, progress=progress)
    if as_json:
        echo_json(report.as_json())
    else:
        _print_mutation(report)
    if not report.ok:
        raise typer.Exit(int(ExitCode.CHECK_FAILED))


def _print_mutation(report: Any) -> None:
    rows = [(t.criterion, f"{t.caught}/{t.touching}", f"{t.right_passed}/{t.right_graded}", "ok" if t.ok else "FAIL")
            for t in report.tallies]  # fmt: skip
    title = f"{report.overlay} (seed {report.seed})"
    if sys.stdout.isatty():
        from rich.console import Console
        from rich.table import Table

        table = Table(title=title)
        for name in ("criterion", "wrong caught/touching", "right passed", "verdict"):
            table.add_column(name)
        for row in rows:
            table.add_row(*row)
        Console().print(table)
    else:
        typer.echo(title)
        typer.echo(f"{'criterion':<12} {'wrong caught/touching':<22} {'right passed':<13} verdict")
        for criterion, caught, passed, verdict in rows:
            typer.echo(f"{criterion:<12} {caught:<22} {passed:<13} {verdict}")
    for line in report.failures():
        typer.echo(f"  {line}")
    if report.semantic:
        typer.echo(f"semantic criteria (graded by the judge, outside this gate): {', '.join(report.semantic)}")
    typer.echo(f"wrong variants no criterion watches: {len(report.unwatched)}")
    typer.echo(f"{report.overlay}: {'ok' if report.ok else 'FAILED'}")



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
    """Check, then record the overlay and package digests in manifests/<world>/overlays/.

    The check is `overlay check`'s, mutation campaign included: a rubric where a generated right
    variant fails, a criterion catches fewer than 95% of the wrong variants touching it, or a
    do-nothing variant passes a criterion is not frozen (exit 1, the criteria named; see
    `worldkit overlay mutate`). There is no flag to freeze anyway.
    """
    from worldkit.grade.reference_access import check_overlay_fully
    from worldkit.mutate.gate import freeze_overlay_gated

    result = freeze_overlay_gated(overlay, manifests, check=check_overlay_fully)
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

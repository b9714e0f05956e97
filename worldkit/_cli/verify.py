"""`worldkit verify` and `worldkit freeze`: adapters over `worldkit.verify`.

Exit codes: 0 every check passed; 1 a check failed (or an injected fault went undetected);
2 bad arguments; 3 the world or an overlay is invalid; 4 a check could not run.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import typer

from worldkit._cli.output import echo_json, progress_bar
from worldkit.canon import pretty_json
from worldkit.errors import ExitCode, UsageError, WorldkitError

T = TypeVar("T")


def verify_command(
    world: str = typer.Option(None, "--world", help="World name under worlds/ or a path."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    workspace: Path = typer.Option(
        None, "--workspace",
        help="Check a staged folder against its own manifest and against the frozen manifests of its world.",
    ),
    seeded: bool = typer.Option(False, "--seeded", help="Also inject the known faults (seeded violations) into a scratch copy."),
    mutations: int = typer.Option(0, "--mutations", min=0, help="Also run N random single mutations."),
    seed: int = typer.Option(1, "--seed", help="Seed of the mutation campaign."),
    manifests: Path = typer.Option(None, "--manifests", help="Frozen manifests folder (default manifests/<world>/)."),
    overlays: Path = typer.Option(None, "--overlays", help="The world's overlay folder (default overlays/<world>/)."),
    summary: Path = typer.Option(None, "--summary", help="Write the validation record (JSON) to this file."),
    only: str = typer.Option(None, "--only", help="Comma-separated check ids to run (default: all)."),
    store: str = typer.Option(None, "--store", help="Store URL whose run event logs to check (default: not checked)."),
    runs: Path = typer.Option(None, "--runs", help="Run folders whose log anchors the event-log check compares."),
    trust_staged: bool = typer.Option(
        False, "--trust-staged",
        help="--workspace: accept a staged folder that is not a frozen one (reported as TRUSTED, not refused).",
    ),
) -> int:
    """Prove the world, its frozen projections and staged tasks are what was frozen.

    Exit 0: every check passed. 1: a check failed, or a seeded fault or view-changing mutation went undetected. 3: the world or an overlay is invalid. 4: a check could not run.
    """  # noqa: E501 - one line, so the help text wraps it cleanly
    from worldkit.frozen.workspace import verify_workspace
    from worldkit.verify import verify_world
    from worldkit.verify.checks import check_ids
    from worldkit.verify.report import render_text, validation_record
    from worldkit.verify.runner import VerifyReport

    if world is None and workspace is None:
        raise UsageError("pass --world W to verify a world, or --workspace DIR to check a staged folder")
    if world is None and (seeded or mutations):
        raise UsageError("--seeded and --mutations need --world W")
    if trust_staged and workspace is None:
        raise UsageError("--trust-staged applies to --workspace DIR")
    selected = [c.strip() for c in only.split(",") if c.strip()] if only else None
    if selected:
        unknown = sorted(set(selected) - set(check_ids()))
        if unknown:
            raise UsageError(f"unknown check {', '.join(unknown)}; valid checks: {', '.join(check_ids())}")
    report = VerifyReport(world=None)
    if world is not None:
        with progress_bar("verify", enabled=not as_json) as tick:
            report = _guarded(lambda: verify_world(world, manifests=manifests, overlays=overlays, only=selected,
                                                      store=store, runs=runs, progress=tick))
        if seeded:
            from worldkit.verify.seeded import run_seeded

            with progress_bar("seeded", enabled=not as_json) as tick:
                report.seeded = _guarded(
                    lambda: run_seeded(world, manifests=manifests, overlays=overlays, progress=tick)
                ).as_json()
        if mutations:
            from worldkit.verify.mutations import run_mutations

            with progress_bar("mutations", enabled=not as_json) as tick:
                report.mutations = _guarded(
                    lambda: run_mutations(world, mutations, seed, manifests=manifests, overlays=overlays, progress=tick)
                ).as_json()
    if workspace is not None:
        from worldkit.frozen.staged import verify_frozen

        report.checks.append(verify_workspace(workspace))
        report.checks.append(_guarded(lambda: verify_frozen(workspace, manifests=manifests, world=world,
                                                            trust_staged=trust_staged)))
    if summary is not None:
        summary.parent.mkdir(parents=True, exist_ok=True)
        summary.write_text(pretty_json(validation_record(report)), encoding="utf-8")
    if as_json:
        echo_json(report.as_json())
    else:
        typer.echo(render_text(report), nl=False)
    return int(report.exit_code)


def _guarded(call: Callable[[], T]) -> T:
    """Run a library call; a crash that is not a WorldkitError means verify could not run (exit 4, not 1)."""
    try:
        return call()
    except WorldkitError:
        raise
    except Exception as error:  # noqa: BLE001 - e.g. a world generator that raises
        raise WorldkitError(
            f"verify could not run: {type(error).__name__}: {error}. Nothing was proven; fix the cause "
            "(use --debug for the traceback) and run verify again"
        ) from error


def freeze_command(
    world: str = typer.Option(..., "--world", help="World name under worlds/ or a path."),
    date: list[str] = typer.Option(
        None, "--date", help="Projection date to freeze (repeatable; default: the dates frozen before, else the world's default date)."
    ),
    manifests: Path = typer.Option(None, "--manifests", help="Frozen manifests folder (default manifests/<world>/)."),
    overlays: bool = typer.Option(
        False, "--overlays", help="Also re-pin and freeze the world's overlays (overlays/<world>/), and print what changed."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Write the frozen revision digests and every (rev, date, seat) projection manifest.

    With --overlays, the one step after a world edit: the world, each overlay's pin and each
    overlay's lock are frozen together, and every digest that changed is listed (exit 1 if an
    overlay fails its check, the mutation gate of `overlay check` included; its old lock is
    kept)."""
    if overlays:
        _refreeze(world, date or None, manifests, as_json)
        return
    from worldkit.verify import freeze_world

    result = freeze_world(world, date or None, manifests=manifests)
    if as_json:
        echo_json(result.summary())
        return
    typer.echo(f"froze {result.index.world} in {result.folder}")
    for rev in result.index.revisions:
        typer.echo(f"  {rev.name:<6} {rev.digest}")
    for proj in result.index.projections:
        typer.echo(f"  {proj.rev:<6} {proj.date} {proj.seat:<14} {proj.fingerprint}  ({proj.files} files)")
    for rel in result.removed:
        typer.echo(f"  removed {rel}")


def _refreeze(world: str, dates: list[str] | None, manifests: Path | None, as_json: bool) -> None:
    from worldkit.verify.refreeze import refreeze

    result = refreeze(world, dates, manifests=manifests)
    if as_json:
        echo_json(result.as_json())
    else:
        typer.echo(f"froze {result.world} and {len(result.overlays)} overlay(s) in {result.folder}")
        for change in result.changes:
            typer.echo(f"  {change.line()}")
        if not result.changes:
            typer.echo("  nothing changed")
        for overlay, problems in result.failed.items():
            typer.echo(f"  overlay {overlay} NOT frozen (its old lock is kept):")
            for line in problems:
                typer.echo(f"    {line.strip()}")
    if not result.ok:
        raise typer.Exit(int(ExitCode.CHECK_FAILED))


def register(app: typer.Typer) -> None:
    app.command("verify")(verify_command)
    app.command("freeze")(freeze_command)

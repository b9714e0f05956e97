"""`worldkit tasks list`: every task a user can run (shipped and local overlays, InfoOrgBench packets)."""

from __future__ import annotations

from pathlib import Path

import typer

from worldkit._cli.output import echo_json

tasks_app = typer.Typer(help="The tasks worldkit can run: shipped and local overlays, InfoOrgBench packets.",
                        no_args_is_help=True)  # fmt: skip


@tasks_app.command("list")
def list_command(
    world: str | None = typer.Option(None, "--world", help="Only the tasks of this world."),
    packets: list[Path] = typer.Option(  # noqa: B008 - typer declares options this way
        [], "--packets", metavar="DIR", help="Also list the InfoOrgBench packets of DIR (a packet or a folder of them)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """List every task overlay on the search path (see `--worlds`), with its world, seat, date, conditions,
    criteria counts and inspect_ai task name; with --packets, InfoOrgBench packets too."""
    from worldkit.errors import UsageError
    from worldkit.overlay.catalog import list_tasks

    tasks = list_tasks(world)
    if world is not None and not tasks:
        raise UsageError(f"no tasks for world {world!r}; `worldkit tasks list` shows every world's")
    found = _packets(packets)
    if as_json:
        echo_json({"tasks": [t.as_json() for t in tasks], "packets": found})
        return
    rows = [(t.world, t.id, t.origin, t.rev, t.date, t.seat, ",".join(t.conditions) or "-",
             f"{t.deterministic}+{t.semantic}" if not t.problem else "-", t.inspect) for t in tasks]  # fmt: skip
    _table(("world", "task", "from", "rev", "date", "seat", "conditions", "criteria (det+sem)", "inspect"), rows)
    for t in tasks:
        if t.problem:
            typer.echo(f"note: {t.path} does not load: {t.problem}")
    if found:
        typer.echo("")
        _table(("packet", "family", "world", "date", "seat", "records", "path"),
               [(p["id"], p["family"], p["world"], p["date"], p["seat"], str(p["records"]), p["path"]) for p in found])
    typer.echo(f"{len(tasks)} task(s)" + (f", {len(found)} packet(s)" if found else ""))


def _packets(paths: list[Path]) -> list[dict[str, object]]:
    if not paths:
        return []
    from worldkit._cli.infoorg_run import _expand_packets
    from worldkit.infoorg.overlays import load_overlay

    found = []
    for packet in _expand_packets(list(paths)):
        overlay = load_overlay(packet)
        found.append({"id": overlay.id, "family": str(overlay.family), "world": overlay.world, "rev": overlay.rev,
                      "date": overlay.date.isoformat(), "seat": overlay.seat, "records": overlay.packet.record_count,
                      "path": str(packet), "inspect": f"worldkit/infoorg -T packet={packet}"})  # fmt: skip
    return found


def _table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> None:
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows, strict=False)]
    for row in (header, *rows):
        typer.echo("  ".join(str(cell).ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())


def register(app: typer.Typer) -> None:
    app.add_typer(tasks_app, name="tasks")

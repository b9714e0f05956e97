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
    runs: list[str] = typer.Argument(  # noqa: B008 - typer declares arguments this way
        ..., metavar="RUNS",
        help="Folders holding execution-record.json files, or stores holding runs' records.",
    ),
    out: Path = typer.Option(..., "--out", metavar="DIR",
                             help="A new (or empty) directory for the ledger files."),
) -> None:
    """Write runs as WorkWorlds ledgers (criterion_results.csv, run_ledger.csv, and
    task_mapping.csv when every overlay's title is known), readable by
    `worldkit report --ledgers` and by the study's own analysis code."""
    from worldkit._cli.runs_args import split_runs
    from worldkit.analysis.export import export_ledgers
    from worldkit.analysis.overlay_packets import overlay_packets
    from worldkit.report.records import gather_records

    records, _ = gather_records(*split_runs(runs))
    _, _, titles = overlay_packets(records)
    written = export_ledgers(records, out, titles)
    for name, count in written.items():
        typer.echo(f"wrote {out / name} ({count} rows)", err=True)


@export_app.command("harbor")
def harbor(
    overlay: list[str] = typer.Option(  # noqa: B008 - typer declares options this way
        None, "--overlay", metavar="T", help="Task overlay id or path (repeatable)."
    ),
    condition: list[str] = typer.Option(  # noqa: B008
        None, "--condition", help="full or curated:NAME (repeatable); default full, with --all every condition."
    ),
    packet: list[Path] = typer.Option(  # noqa: B008
        None, "--packet", metavar="DIR",
        help="InfoOrgBench packet directory, or a folder of packets (repeatable); excludes --overlay/--all.",
    ),
    every: bool = typer.Option(False, "--all", help="Every overlay of --world."),
    world: str | None = typer.Option(None, "--world", help="With --all: the world whose overlays to export."),
    out: Path = typer.Option(..., "--out", metavar="DIR", help="Folder to write one task directory per (task, condition) into."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Write Harbor task directories: instruction.md, task.toml, environment/ (the seat's tools as an
    MCP sidecar), tests/test.sh (`worldkit grade` → reward.json) and solution/solve.sh (the oracle)."""
    from worldkit._cli.output import echo_json
    from worldkit.errors import UsageError

    if packet:
        if overlay or every or world or condition:
            raise UsageError("--packet excludes --overlay/--all/--world/--condition: a packet is one InfoOrgBench task")
        from worldkit._cli.infoorg_run import _expand_packets
        from worldkit.interop.harbor_infoorg import export_harbor_packet

        exported = [export_harbor_packet(p, out) for p in _expand_packets(list(packet))]
    else:
        exported = _export_overlays(out, overlay, condition, every, world)
    if as_json:
        echo_json({"tasks": [{"path": str(e.path), "name": e.name, "overlay": e.overlay, "condition": e.condition}
                             for e in exported]})  # fmt: skip
        return
    for e in exported:
        typer.echo(f"wrote {e.path} ({e.name})", err=True)


def _export_overlays(out: Path, overlay: list[str] | None, condition: list[str] | None, every: bool,
                     world: str | None) -> list:  # fmt: skip
    from worldkit.errors import UsageError
    from worldkit.interop.harbor import export_harbor

    if every and world is None:
        raise UsageError("--all needs --world W: the world whose overlays to export")
    if every and overlay:
        raise UsageError("--all and --overlay exclude each other: export every overlay of a world, or the ones named")
    if world is not None and not every:
        raise UsageError("--world is for --all; name single tasks with --overlay T")
    return export_harbor(out, overlays=overlay or None, world=world if every else None, conditions=condition or None)


def register(app: typer.Typer) -> None:
    app.add_typer(export_app, name="export")

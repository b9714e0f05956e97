"""`worldkit world show|load|stats|new`: describe a world package, store its revisions."""

from __future__ import annotations

from pathlib import Path

import typer

from worldkit._cli.output import echo_json, echo_table

world_app = typer.Typer(help="Inspect and load world packages.", no_args_is_help=True)


@world_app.command("show")
def show(
    world: str = typer.Argument(..., help="World name under worlds/ or a path."),
    rev: str = typer.Option(None, "--rev", help="Revision for seats and counts (default: latest)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Revisions with digests, seats, the history's date span and counts."""
    from worldkit.access.summary import describe_world
    from worldkit.world import load_world

    info = describe_world(load_world(world), rev)
    if as_json:
        echo_json(info)
        return
    typer.echo(f"{info['world']} — {info['company']}, history {info['dates']['first']} … {info['dates']['last']}")
    echo_table(["REVISION", "DIGEST", "PARENT"],
               [[r["name"], r["digest"], r["parent"] or "-"] for r in info["revisions"]], title="Revisions")
    echo_table(["SEAT", "PERSON", "NAME", "ROLES"],
               [[s["id"], s["person"], s["name"], ", ".join(s["roles"])] for s in info["seats"]], title="Seats")
    counts = info["counts"]
    echo_table([name.upper() for name in counts], [[str(value) for value in counts.values()]],
               title=f"Counts ({info['rev']})" if info.get("rev") else "Counts", right={name.upper() for name in counts})


@world_app.command("load")
def load(
    world: str = typer.Argument(..., help="World name under worlds/ or a path."),
    store: str = typer.Option(None, "--store", help="Store URL (default: $WORLDKIT_STORE or .worldkit/store.db)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Validate a world and store every revision with its digest."""
    from worldkit.store import Store
    from worldkit.store.worlds import store_world
    from worldkit.world import load_world

    package = load_world(world)
    with Store.open(store) as opened:
        stored = store_world(opened, package)
    if as_json:
        echo_json({"world": package.id, "revisions": stored})
        return
    echo_table(["REVISION", "DIGEST", "STATUS"], [[r["name"], r["digest"], r["status"]] for r in stored],
               title=f"{package.id}: revisions in the store")


@world_app.command("stats")
def stats(
    world: str = typer.Argument(..., help="World name under worlds/ or a path."),
    date: str = typer.Option(None, "--date", help="Date YYYY-MM-DD (default: the world's default date)."),
    rev: str = typer.Option(None, "--rev", help="Revision (default: latest)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """People, seats, files per seat, records, messages, overlays and criteria at a date."""
    from worldkit.errors import UsageError
    from worldkit.materialize import parse_date
    from worldkit.overlay.stats import world_stats
    from worldkit.world import load_world

    package = load_world(world)
    if date is None and package.spec.default_date is None:
        raise UsageError(f"world {package.id} has no default date; pass --date YYYY-MM-DD")
    info = world_stats(package, parse_date(date) if date else package.spec.default_date, rev).as_json()
    if as_json:
        echo_json(info)
        return
    typer.echo(f"{info['world']} {info['rev']} at {info['date']}")
    totals = {"PEOPLE": info["people"], "SEATS": len(info["seats"]), "RECORDS": info["records"],
              "MESSAGES": info["messages"], "OVERLAYS": info["overlays"], "CRITERIA": info["criteria"]}
    echo_table(list(totals), [[str(value) for value in totals.values()]], title="Counts", right=set(totals))
    formats = info.get("formats_per_seat") or {}  # the office mix per seat, where the stats have it

    def mix(seat: str) -> str:
        kinds = sorted((formats.get(seat) or {}).items(), key=lambda item: (-item[1], item[0]))
        return ", ".join(f"{n} {kind}" for kind, n in kinds) or "-"

    echo_table(["SEAT", "FILES", "FORMATS"], [[seat, str(count), mix(seat)] for seat, count in info["files_per_seat"].items()],
               title="Files per seat", right={"FILES"})
    for path, problem in info["overlay_errors"].items():
        typer.echo(f"overlay not loaded: {path}: {problem}")


@world_app.command("new")
def new(
    name: str = typer.Argument(..., help="World id, e.g. my_world (lower-case letters, digits, `_`)."),
    out: Path = typer.Option(Path("."), "--out", help="Project folder receiving worlds/NAME/ and overlays/NAME/."),
    force: bool = typer.Option(False, "--force", help="Replace an existing world or overlay folder."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Scaffold a runnable world with every surface (documents, records with events, mail, chat) and one checked task."""
    from worldkit.scaffold import new_world

    made = new_world(name, out, force=force)
    if as_json:
        echo_json({"world": str(made.world), "overlays": str(made.overlays), "overlay": str(made.overlay),
                   "manifests": str(made.manifests), "fingerprint": made.fingerprint,
                   "files": [str(p) for p in made.files], "next": made.next_steps()})  # fmt: skip
        return
    for path in made.files:
        typer.echo(f"wrote {path}")
    typer.echo("next:")
    for step in made.next_steps():
        typer.echo(f"  {step}")


def register(app: typer.Typer) -> None:
    app.add_typer(world_app, name="world")

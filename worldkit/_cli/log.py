"""`worldkit log …`: show, verify and list the event logs of runs (over `worldkit.store`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from worldkit._cli.output import echo_json, echo_table
from worldkit.canon import canonical_json
from worldkit.errors import LogTampered, UsageError

if TYPE_CHECKING:
    from worldkit.store import Event, LogAnchor

STORE_HELP = (
    "Store URL (sqlite:///path or postgresql+psycopg://…); default $WORLDKIT_STORE, "
    "else .worldkit/store.db here."
)
RUN_HELP = "Run id (see `worldkit log list`)."
SHORT_LIMIT = 120
"""Longest string argument `log show` prints whole without --full."""
SHORT_KEEP = 60
"""Characters of a longer string kept, followed by how many were cut."""

log_app = typer.Typer(
    help="Inspect and check the hash-chained event logs of runs.",
    no_args_is_help=True,
)


def register(app: typer.Typer) -> None:
    app.add_typer(log_app, name="log")


@log_app.command("show")
def show(
    run_id: str = typer.Argument(..., metavar="RUN", help=RUN_HELP),
    store: str | None = typer.Option(None, "--store", help=STORE_HELP),
    full: bool = typer.Option(
        False, "--full", help=f"Print every argument whole (by default strings over {SHORT_LIMIT} characters, "
        "such as write_file bodies, are cut short)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object (always whole)."),
) -> None:
    """Print a run's events in order (as stored; `log verify` checks them)."""
    from worldkit.store import Store, get_run, read_events

    with Store.open(store, create=False) as opened:
        head = get_run(opened, run_id)
        events = read_events(opened, run_id)
        if as_json:
            echo_json(
                {
                    "run_id": run_id,
                    "seat": head.seat,
                    "meta": head.meta,
                    "events": [event.model_dump(mode="json") for event in events],
                }
            )
            return
        typer.echo(f"run {run_id}  seat {head.seat}  {head.seq} events")
        if head.meta:
            typer.echo(f"meta {canonical_json(head.meta).strip()}")
            if head.meta.get("trusted_staged"):
                typer.echo("TRUSTED STAGED: the server served a folder that is not a frozen one (--trust-staged)")
        if events:
            echo_table(
                ["SEQ", "TIME", "OUTCOME", "RESULT", "TOOL", "ARGUMENTS", "STATE CHANGE"],
                [_event_row(event, full=full) for event in events],
                right={"SEQ"},
                wrap={"ARGUMENTS"},
            )


@log_app.command("verify")
def verify(
    run_id: str = typer.Argument(..., metavar="RUN", help=RUN_HELP),
    store: str | None = typer.Option(None, "--store", help=STORE_HELP),
    record: Path | None = typer.Option(
        None, "--record", help="Check against the anchor in this execution record (execution-record.json)."
    ),
    run_dir: Path | None = typer.Option(
        None, "--run-dir", help="Check against the run folder's log-anchor.json (and its record, if any)."
    ),
    anchor: Path | None = typer.Option(None, "--anchor", help="Check against this anchor file (e.g. from `serve`)."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as one JSON object."),
) -> None:
    """Check a run's hash chain; exit 1 naming the first bad event if it is broken.

    Given the run's anchor (--run-dir, --record or --anchor), the log must also hold the
    anchored head and, for a final anchor, end there: a log cut short, rewritten or recomputed
    fails. With WORLDKIT_LOG_KEY set, the anchor must carry that key's signature.
    """
    from worldkit.store import Store, verify_chain

    found = _anchor(run_id, record=record, run_dir=run_dir, anchor=anchor)
    with Store.open(store, create=False) as opened:
        report = verify_chain(opened, run_id, anchor=found)
    if as_json:
        echo_json({**report.model_dump(mode="json"), "message": report.message})
    if not report.ok:
        raise LogTampered(report.message)
    if not as_json:
        typer.echo(f"ok: {report.message}")
        if found is None:
            typer.echo(
                "note: no anchor given, so a log cut short together with its head, or recomputed, "
                "cannot be told from an intact one; pass --run-dir, --record or --anchor",
                err=True,
            )
        else:
            typer.echo(f"checked against the {found.describe()}")


def _anchor(
    run_id: str, *, record: Path | None, run_dir: Path | None, anchor: Path | None
) -> LogAnchor | None:
    from worldkit.record.execution import RECORD_FILENAME, read_record
    from worldkit.run.logcheck import run_anchor
    from worldkit.store import ANCHOR_FILENAME, read_anchor
    from worldkit.store.anchor import parse_anchor

    given = [name for name, value in (("--record", record), ("--run-dir", run_dir), ("--anchor", anchor)) if value]
    if len(given) > 1:
        raise UsageError(f"give one of {', '.join(given)}: each names the run's anchor")
    found: LogAnchor | None = None
    if anchor is not None:
        found = read_anchor(anchor)
    elif run_dir is not None:
        if not run_dir.is_dir():
            raise UsageError(f"--run-dir {run_dir} is not a directory; pass the run's folder")
        record_file = run_dir / RECORD_FILENAME
        if record_file.is_file():
            found = run_anchor(run_dir, read_record(record_file))
        else:
            found = read_anchor(run_dir / ANCHOR_FILENAME)
    elif record is not None:
        loaded = read_record(record)
        if (record.parent / ANCHOR_FILENAME).exists():
            found = run_anchor(record.parent, loaded)
        elif loaded.log_anchor is None:
            raise LogTampered(f"execution record {record} has no log_anchor; it was edited or predates anchors")
        else:
            found = parse_anchor(loaded.log_anchor, source=str(record))
    if found is not None and found.run_id != run_id:
        raise UsageError(f"the anchor given is for run {found.run_id}, not {run_id}; pass the anchor of run {run_id}")
    return found


@log_app.command("list")
def list_(
    store: str | None = typer.Option(None, "--store", help=STORE_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """List the runs in the store with their seat and event count."""
    from worldkit.store import Store, list_runs

    with Store.open(store, create=False) as opened:
        runs = list_runs(opened)
    if as_json:
        echo_json({"runs": [run.model_dump(mode="json") for run in runs]})
        return
    if not runs:
        typer.echo("no runs")
        return
    echo_table(
        ["RUN", "SEAT", "EVENTS", "LAST EVENT"],
        [
            [
                run.run_id,
                run.seat,
                str(run.events),
                run.last_time.strftime("%Y-%m-%dT%H:%M:%SZ") if run.last_time else "-",
            ]
            for run in runs
        ],
        right={"EVENTS"},
    )


def shorten(value: Any) -> Any:
    """`value` with every string longer than SHORT_LIMIT cut to SHORT_KEEP characters and a count of the rest."""
    if isinstance(value, str) and len(value) > SHORT_LIMIT:
        return f"{value[:SHORT_KEEP]}… [+{len(value) - SHORT_KEEP} chars; --full shows all]"
    if isinstance(value, dict):
        return {key: shorten(item) for key, item in value.items()}
    if isinstance(value, list):
        return [shorten(item) for item in value]
    return value


def _event_row(event: Event, *, full: bool) -> list[str]:
    arguments = event.arguments if full else shorten(event.arguments)
    return [
        str(event.seq),
        event.time.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        event.outcome,
        event.result_digest[:12] if event.result_digest else "-",
        event.tool,
        canonical_json(arguments).rstrip("\n"),
        "yes" if event.state_change is not None else "-",
    ]

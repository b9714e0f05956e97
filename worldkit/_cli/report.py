"""`worldkit report`: the paper's tables and estimates from execution records and/or a
WorkWorlds ledger."""

from __future__ import annotations

import re
from pathlib import Path

import typer

from worldkit.canon import pretty_json
from worldkit.errors import UsageError

REPLICATES = 2_000
"""`worldkit.run.analysis.DEFAULT_REPLICATES`, repeated so `--help` does not import numpy."""
SEED = 20_270_908
"""`worldkit.run.analysis.DEFAULT_SEED` (the public WorkWorlds artifact's seed)."""
_SQLITE_MAGIC = b"SQLite format 3\x00"


def _store_url(path: Path) -> str | None:
    """The store a RUNS argument names (a URL, or a SQLite database file), else None."""
    # A URL given as a path has lost one slash of its `://`.
    url = re.fullmatch(r"([A-Za-z][A-Za-z0-9+.-]*):/+(.*)", str(path))
    if url is not None and not path.exists():
        return f"{url.group(1)}://{url.group(2)}"
    try:
        with path.open("rb") as handle:
            return str(path) if handle.read(len(_SQLITE_MAGIC)) == _SQLITE_MAGIC else None
    except OSError:
        return None


def _store_lacks(url: str) -> UsageError:
    """What a store holds and why it cannot be reported: it keeps runs' event logs, never their
    execution records (the criterion results live in the run folders)."""
    from worldkit.store import Store, list_runs

    with Store.open(url, create=False) as store:
        where, runs = store.url, list_runs(store)
    if runs:
        shown = ", ".join(r.run_id for r in runs[:3]) + (", …" if len(runs) > 3 else "")
        held = f"the event logs of {len(runs)} run(s) ({shown})"
    else:
        held = "no run logs"
    return UsageError(
        f"{where} is a worldkit store: it holds {held} but no execution records — a store keeps "
        "what the agent did, not the criterion results the report counts, which `worldkit run "
        "--out DIR` writes to the run folder (a campaign to DIR/runs); pass those folders (or "
        "the campaign folder) to `worldkit report`"
    )


def register(app: typer.Typer) -> None:
    @app.command("report")
    def report(
        runs: list[Path] = typer.Argument(  # noqa: B008 - typer declares options this way
            None,
            metavar="RUNS_DIR",
            help="Directories holding execution-record.json files written by `worldkit run`.",
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
        workers: int | None = typer.Option(
            None, "--workers", min=1, help="Processes for the GEE bootstrap [default: one per CPU]."
        ),
        store: str | None = typer.Option(
            None, "--store", metavar="URL",
            help="A store: reported as what it holds (run logs, no execution records).",
        ),
    ) -> None:
        """Pass, access, pass given access, joint counts and search burden, by condition,
        curated packet, task and agent; the GEE-standardized estimates with task-cluster
        bootstrap intervals, sensitivity analyses and curated-packet characteristics.

        A store (--store URL, or a store file or URL among RUNS_DIR) holds event logs but no
        execution records; it is refused with what it holds (exit 2)."""
        stores = [url for url in [store, *map(_store_url, runs or [])] if url]
        if stores:
            raise _store_lacks(stores[0])
        from worldkit.run.report import load_report, render_text, report_json
        from worldkit.run.report_html import render_html

        result = load_report(runs or [], ledgers, analysis=estimates, replicates=replicates,
                             seed=seed, workers=workers)
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

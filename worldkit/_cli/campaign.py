"""`worldkit campaign plan|run|status`: thin adapters over `worldkit.campaign`.

Progress goes to stderr (rich); results to stdout.
"""

from __future__ import annotations

import time
from pathlib import Path

import typer

from worldkit._cli.output import echo_json, echo_table

campaign_app = typer.Typer(
    help="Campaigns: a designed experiment (tasks × agents × conditions) run once, in parallel, resumably.",
    no_args_is_help=True,
)

STORE_HELP = (
    "Store URL shared by the workers (postgresql+psycopg://… when Ray nodes run on several machines); "
    "default: DIR/store.db (SQLite)."
)


@campaign_app.command("plan")
def plan_command(
    design: Path = typer.Argument(..., metavar="DESIGN", help="Campaign design file (YAML)."),
    as_json: bool = typer.Option(False, "--json", help="Print the plan as JSON (its canonical content)."),
) -> None:
    """Expand a design into its interleaved schedule and print it (nothing is run or written)."""
    import json

    from worldkit.campaign.executor import load_plan
    from worldkit.campaign.plan import plan_bytes

    plan, _ = load_plan(design)
    if as_json:
        echo_json({**json.loads(plan_bytes(plan)), "digest": plan.digest, "campaign_id": plan.campaign_id})
        return
    typer.echo(f"campaign {plan.campaign_id}: {len(plan.runs)} runs, {plan.design.block_count} block(s), plan sha256 {plan.digest}")
    if plan.judge_calibration is not None:
        found, overall = plan.judge_calibration, plan.judge_calibration["overall"]
        agreement = "undefined" if overall.get("agreement") is None else f"{100 * overall['agreement']:.1f}%"
        typer.echo(f"judge {found['judge']}: calibration {str(found['sha256'])[:12]}, agreement {agreement} "
                   f"on n={overall.get('n')} labelled items")  # fmt: skip
    echo_table(["SEQ", "BLOCK", "ORDER", "TASK", "AGENT", "CONDITION"],
               [[str(run.seq), str(run.block), str(run.order), run.task, run.agent, run.condition] for run in plan.runs],
               right={"SEQ", "BLOCK", "ORDER"})


@campaign_app.command("run")
def run_command(
    design: Path = typer.Argument(..., metavar="DESIGN", help="Campaign design file (YAML)."),
    out: Path = typer.Option(..., "--out", metavar="DIR", help="Campaign folder: plan, run records, state."),
    workers: int = typer.Option(1, "--workers", min=1, help="Worker processes on this host (local executor)."),
    executor: str = typer.Option("local", "--executor", help="local (worker processes on this host) or ray (a Ray cluster)."),
    ray_address: str | None = typer.Option(None, "--ray-address", metavar="ADDR",
                                           help="The Ray cluster to use (`ray start --head` prints it); default: start Ray here."),
    cpus_per_run: float = typer.Option(1.0, "--cpus-per-run", min=0.01, help="CPUs each run reserves (ray)."),
    memory_mb: int = typer.Option(0, "--memory-mb", min=0, help="Memory each run reserves, MiB (ray; 0: none declared)."),
    endpoint_resource: str | None = typer.Option(
        None, "--endpoint-resource", metavar="NAME",
        help="A custom Ray resource each run takes one unit of, to cap an agent endpoint's concurrency (ray)."),
    store: str | None = typer.Option(None, "--store", help=STORE_HELP),
    retry_failed: bool = typer.Option(False, "--retry-failed", help="Run failed runs again."),
    runs_per_worker: int = typer.Option(
        50, "--runs-per-worker", min=0, help="Replace a worker process after this many runs (0: never; local)."
    ),
    max_worker_rss_mb: int = typer.Option(
        1024, "--max-worker-rss-mb", min=0,
        help="Replace a worker process once its memory passes this many MiB after a run (0: no ceiling; local)."),
    as_json: bool = typer.Option(False, "--json", help="Print the final status as JSON."),
) -> None:
    """Run (or resume) a campaign: every planned run staged, verified, executed, graded, recorded once.

    Start it again with the same arguments after any interruption: finished runs are kept,
    interrupted ones redone. One coordinator runs a campaign; to use several machines, start a Ray
    cluster (`ray start --head` on one, `ray start --address ADDR` on the others) and pass
    `--executor ray --ray-address ADDR` with a PostgreSQL --store every node reaches.
    """
    import sys
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from worldkit.campaign.executor import CampaignCounts, run_campaign
    from worldkit.errors import CheckFailed

    console = Console(stderr=True)
    progress = Progress(
        TextColumn("campaign"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
        TextColumn("done {task.fields[done]} · failed {task.fields[failed]} · running {task.fields[running]}"),
        TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), console=console, transient=False,
    )  # fmt: skip
    bar: dict[str, object] = {}

    def show(state: CampaignCounts) -> None:
        finished = state.done + state.failed
        if "id" not in bar:
            bar["id"] = progress.add_task("campaign", total=state.planned, done=0, failed=0, running=0)
            bar["base"] = finished  # runs finished before this start do not speed up the ETA
            bar["t0"] = time.monotonic()
            progress.update(bar["id"], completed=0, total=state.planned - finished)  # type: ignore[arg-type]
        progress.update(
            bar["id"], completed=finished - bar["base"], done=state.done, failed=state.failed,  # type: ignore[arg-type, operator]
            running=state.running,
        )  # fmt: skip

    if executor not in ("local", "ray"):
        from worldkit.errors import UsageError

        raise UsageError(f"--executor {executor}: use local or ray")
    tty = console.is_terminal

    def finished(line: str) -> None:
        if not tty:
            print(line, file=sys.stderr, flush=True)

    with progress if tty else _quiet():
        if executor == "ray":
            from worldkit.campaign.ray_executor import RayOptions, run_campaign_ray

            options = RayOptions(address=ray_address, cpus_per_run=cpus_per_run, memory_mb=memory_mb,
                                 endpoint_resource=endpoint_resource)
            state = run_campaign_ray(design, out, options=options, store_url=store, retry_failed=retry_failed,
                                     on_progress=show if tty else None, on_finished=finished)  # fmt: skip
        else:
            state = run_campaign(design, out, workers=workers, store_url=store, retry_failed=retry_failed,
                                 runs_per_worker=runs_per_worker, max_worker_rss_mb=max_worker_rss_mb,
                                 on_progress=show if tty else _lines(finished))  # fmt: skip
    summary = state.as_dict()
    if as_json:
        echo_json(summary)
    else:
        typer.echo(f"{state.planned} planned, {state.done} done, {state.failed} failed; records in {out / 'runs'}")
        for failure in state.failures:
            typer.echo(f"  failed {failure['seq']:04d} {failure['run_id']}: {failure['error']}")
        _packet_tables(out)
    if state.failed:
        raise CheckFailed(f"{state.failed} of {state.planned} runs failed; see `worldkit campaign status {out}`, fix, then rerun with --retry-failed")


class _quiet:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def _lines(say):  # noqa: ANN001, ANN202 - a progress callback that prints one line per finished run
    seen = {"finished": None}

    def show(state) -> None:  # noqa: ANN001
        finished = state.done + state.failed
        if seen["finished"] is not None and finished != seen["finished"]:
            say(f"{finished}/{state.planned} finished (done {state.done}, failed {state.failed}, "
                f"running {state.running})")
        seen["finished"] = finished

    return show


def _packet_tables(out: Path) -> None:
    from worldkit.report.infoorg import find_packet_runs
    from worldkit.report.infoorg_text import render_tables

    results = find_packet_runs([out / "runs"])
    if results:
        typer.echo(render_tables(results))


@campaign_app.command("status")
def status_command(
    out: Path = typer.Argument(..., metavar="DIR", help="Campaign folder (the --out of `campaign run`)."),
    store: str | None = typer.Option(None, "--store", help="The campaign's store URL, when DIR/campaign.json names one with a password (or $WORLDKIT_STORE)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Where a campaign stands: planned, done, failed, running, pending, records on disk."""
    from worldkit.campaign.status import campaign_status

    status = campaign_status(out, store)
    if as_json:
        echo_json(status)
        return
    typer.echo(
        f"campaign {status['campaign_id']}: {status['planned']} planned, {status['done']} done, "
        f"{status['failed']} failed, {status['running']} running, {status['pending']} pending; "
        f"{status['records']} records in {out / 'runs'}"
    )
    for failure in status["failures"]:
        typer.echo(f"  failed {failure['seq']:04d} {failure['run_id']}: {failure['error']}")
    for dropped in status["discarded"]:
        typer.echo(f"  discarded {dropped['seq']:04d} {dropped['run_id']}: {dropped['reason']} (not recorded)")


def register(app: typer.Typer) -> None:
    app.add_typer(campaign_app, name="campaign")

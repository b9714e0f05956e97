"""`worldkit run` and `worldkit regrade`: run an agent on a task, grade a finished run again."""

from __future__ import annotations

from pathlib import Path

import typer

from worldkit._cli.output import echo_json


def run_command(
    overlay: str = typer.Option(..., "--overlay", help="Overlay id (under overlays/<world>/) or path."),
    agent: str = typer.Option(..., "--agent", help="Agent: noop, oracle or openai."),
    condition: str = typer.Option("full", "--condition", help="full or curated:NAME."),
    out: Path = typer.Option(Path("runs"), "--out", help="Folder that receives the run's folder."),
    store: str = typer.Option(None, "--store", help="Store URL for the event log."),
    judge: str = typer.Option("none", "--judge", help="Judge for semantic criteria: openai or none."),
    base_url: str = typer.Option(None, "--base-url", help="OpenAI-compatible endpoint (agent and judge)."),
    model: str = typer.Option(None, "--model", help="Model name at the endpoint."),
    max_steps: int = typer.Option(40, "--max-steps", help="Step budget of the openai agent."),
    max_tokens: int = typer.Option(200_000, "--max-tokens", help="Token budget of the openai agent."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Stage a task, run an agent through the seat's tools, grade it and write an execution record."""
    from worldkit.run.judge import make_judge
    from worldkit.run.runner import run_task

    options = {"base_url": base_url, "model": model, "max_steps": max_steps, "max_tokens": max_tokens}
    result = run_task(
        overlay, agent, condition=condition, runs_dir=out, store_url=store,
        agent_options=options, judge=make_judge(judge, options),
    )  # fmt: skip
    summary = result.summary()
    if as_json:
        echo_json(summary)
        return
    typer.echo(f"run {summary['run_id']}: {summary['task']} · {summary['agent']} · {summary['condition']}")
    for cid, verdict in summary["criteria"].items():
        typer.echo(f"  {cid:<12} {verdict:<9} {summary['access'][cid]}")
    typer.echo(f"deterministic: {summary['deterministic_passed']}/{summary['deterministic_total']} passed")
    typer.echo(f"record: {summary['record']}")


def regrade_command(
    run_dir: Path = typer.Argument(..., help="A run folder holding execution-record.json."),
    store: str = typer.Option(
        None, "--store", help="Also check the run's log in this store against the anchor and the record."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Grade a finished run again from disk and compare with its execution record.

    The log is checked first against the run folder's anchor (log-anchor.json); a log cut short,
    rewritten or recomputed is refused (exit 1).
    """
    from worldkit.errors import CheckFailed
    from worldkit.run.runner import regrade_run

    record, graded = regrade_run(run_dir, store_url=store)
    recorded = {c.id: c.result for c in record.criteria}
    again = {cid: result for cid, _route, result, _detail in graded}
    differs = sorted(cid for cid in recorded if recorded[cid] != again.get(cid))
    if as_json:
        echo_json({"run_id": record.run_id, "criteria": again, "same_as_record": not differs, "differs": differs})
    else:
        typer.echo(f"{record.run_id}: {'same results as the record' if not differs else 'DIFFERS on ' + ', '.join(differs)}")
    if differs:
        raise CheckFailed(f"re-grading {run_dir} differs from its record on {', '.join(differs)}")


def register(app: typer.Typer) -> None:
    app.command("run")(run_command)
    app.command("regrade")(regrade_command)

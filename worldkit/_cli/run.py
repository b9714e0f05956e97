"""`worldkit run` and `worldkit regrade`: run an agent on a task, grade a finished run again."""

from __future__ import annotations

from pathlib import Path

import typer

from worldkit._cli.grade import (
    AGENT_METAVAR,
    CALIBRATION_HELP,
    JUDGE_HELP,
    JUDGE_METAVAR,
    build_judge,
    fail_if_judge_failed,
    print_summary,
)
from worldkit._cli.output import echo_json


def run_command(
    overlay: str = typer.Option(..., "--overlay", help="Overlay id (under overlays/<world>/) or path."),
    agent: str = typer.Option(
        ..., "--agent", metavar=AGENT_METAVAR,
        help="Agent: noop, oracle, openai, a baseline:* (InfoOrgBench) or one an installed plug-in registers.",
    ),
    condition: str = typer.Option("full", "--condition", help="full or curated:NAME."),
    out: Path = typer.Option(Path("runs"), "--out", help="Folder that receives the run's folder."),
    store: str = typer.Option(None, "--store", help="Store URL for the event log."),
    judge: str = typer.Option("none", "--judge", metavar=JUDGE_METAVAR, help=JUDGE_HELP),
    judge_base_url: str = typer.Option(None, "--judge-base-url", help="The judge's own OpenAI-compatible endpoint (default $WORLDKIT_JUDGE_BASE_URL)."),
    judge_model: str = typer.Option(None, "--judge-model", help="The judge's model (default $WORLDKIT_JUDGE_MODEL)."),
    judge_retries: int = typer.Option(None, "--judge-retries", help="Retries of a failing judge request (default 3)."),
    judge_backoff: float = typer.Option(None, "--judge-backoff", help="Seconds before the first judge retry, doubled each time (default 1)."),
    judge_calibration: Path = typer.Option(None, "--judge-calibration", help=CALIBRATION_HELP),
    base_url: str = typer.Option(None, "--base-url", help="The agent's OpenAI-compatible endpoint (default $WORLDKIT_OPENAI_BASE_URL)."),
    model: str = typer.Option(None, "--model", help="The agent's model (default $WORLDKIT_OPENAI_MODEL)."),
    max_steps: int = typer.Option(40, "--max-steps", help="Step budget of the openai agent."),
    max_tokens: int = typer.Option(200_000, "--max-tokens", help="Token budget of the openai agent."),
    retries: int = typer.Option(2, "--retries", help="Retries of a failing request to the agent's endpoint."),
    backoff: float = typer.Option(1.0, "--backoff", help="Seconds before the agent endpoint's first retry, doubled each time."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    trust_staged: bool = typer.Option(
        False, "--trust-staged",
        help="Run even if the staged package is not a frozen one (recorded in the execution record).",
    ),
) -> None:
    """Stage a task, run an agent through the seat's tools, grade it and write an execution record."""
    from worldkit.run.runner import run_task

    options = {"base_url": base_url, "model": model, "max_steps": max_steps, "max_tokens": max_tokens,
               "max_retries": retries, "backoff_s": backoff}  # fmt: skip
    judging = build_judge(judge, judge_base_url, judge_model, judge_retries, judge_backoff, judge_calibration)
    result = run_task(
        overlay, agent, condition=condition, runs_dir=out, store_url=store,
        agent_options=options, judge=judging, trust_staged=trust_staged,
    )  # fmt: skip
    print_summary(result.summary(), as_json)
    fail_if_judge_failed(result.record.judge_failure)


def regrade_command(
    run_dir: Path = typer.Argument(..., help="A run folder holding execution-record.json."),
    judge: str = typer.Option("none", "--judge", metavar=JUDGE_METAVAR, help=JUDGE_HELP + " Without one, the recorded semantic verdicts are kept."),
    judge_base_url: str = typer.Option(None, "--judge-base-url", help="The judge's own endpoint (default $WORLDKIT_JUDGE_BASE_URL)."),
    judge_model: str = typer.Option(None, "--judge-model", help="The judge's model (default $WORLDKIT_JUDGE_MODEL)."),
    judge_retries: int = typer.Option(None, "--judge-retries", help="Retries of a failing judge request (default 3)."),
    judge_backoff: float = typer.Option(None, "--judge-backoff", help="Seconds before the first judge retry (default 1)."),
    judge_calibration: Path = typer.Option(None, "--judge-calibration", help=CALIBRATION_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    store: str = typer.Option(
        None, "--store", help="Also check the run's log in this store against the anchor and the record."
    ),
) -> None:
    """Grade a finished run again from disk (re-judging with --judge) and compare with its record; exit 1 if it differs.

    The log is checked first against the run folder's anchor (log-anchor.json) and, with --store, the stored log
    too; a log cut short, rewritten or recomputed is refused (exit 1).
    """
    from worldkit.errors import CheckFailed, UsageError
    from worldkit.record.execution import RECORD_FILENAME
    from worldkit.run.regrade import regrade_run

    if not (run_dir / RECORD_FILENAME).is_file():
        raise UsageError(f"{run_dir} holds no {RECORD_FILENAME}; pass a run folder written by `worldkit run`, "
                         f"or grade a staged one first with `worldkit grade {run_dir}`")  # fmt: skip

    judging = build_judge(judge, judge_base_url, judge_model, judge_retries, judge_backoff, judge_calibration)
    record, grades = regrade_run(run_dir, judging, store_url=store)
    recorded = {c.id: c.result for c in record.criteria}
    again = {c.id: c.result for c in grades.outcomes}
    differs = sorted(cid for cid in set(recorded) | set(again) if recorded.get(cid) != again.get(cid))
    from worldkit.grade.grading import judge_failure

    failure = judge_failure(grades.outcomes, grades.judge)
    if as_json:
        echo_json({"run_id": record.run_id, "criteria": again, "same_as_record": not differs, "differs": differs,
                   "judge": grades.judge, "judge_failure": failure})  # fmt: skip
    else:
        typer.echo(f"{record.run_id}: {'same results as the record' if not differs else 'DIFFERS on ' + ', '.join(differs)}")
    fail_if_judge_failed(failure)
    if differs:
        raise CheckFailed(f"re-grading {run_dir} differs from its record on {', '.join(differs)}")


def register(app: typer.Typer) -> None:
    app.command("run")(run_command)
    app.command("regrade")(regrade_command)

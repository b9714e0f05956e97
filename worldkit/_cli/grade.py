"""`worldkit grade` (a workspace or a run folder, no agent) and `worldkit judge-batch` (many runs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from worldkit._cli.output import echo_json

JUDGE_METAVAR = "[none|facts|openai|PLUGIN]"
"""The built-in judges (worldkit.grade.judge); plug-ins add theirs through the `worldkit.judges` entry points."""
AGENT_METAVAR = "[noop|oracle|openai|baseline:NAME|PLUGIN]"
"""The built-in agents (worldkit.agents.registry.BUILTIN_AGENTS); plug-ins add theirs through entry points."""
JUDGE_HELP = "Judge for semantic criteria: openai (its own endpoint), facts (offline, from the truth section) or none (ungraded)."


CALIBRATION_HELP = "The judge's calibration (`worldkit judge calibrate --out`), recorded with its verdicts; refused if made with another judge configuration."


def build_judge(
    name: str | None, base_url: str | None, model: str | None, retries: int | None, backoff: float | None,
    calibration: Path | None = None,
) -> Any:
    """The judge the options name; its endpoint is its own (never the agent's --base-url).
    With `calibration`, the calibration file is checked against this judge and attached to it."""
    from worldkit.errors import UsageError
    from worldkit.grade.judge import make_judge

    options = {"base_url": base_url, "model": model, "max_retries": retries, "backoff_s": backoff}
    judge = make_judge(name, {k: v for k, v in options.items() if v is not None})
    if calibration is not None:
        from worldkit.grade.calibration import attach_calibration, read_calibration

        if judge is None:
            raise UsageError("--judge-calibration needs a judge (--judge facts|openai|…)")
        attach_calibration(judge, read_calibration(calibration), str(calibration))
    return judge


def fail_if_judge_failed(failure: str) -> None:
    """Exit 1 with the one line naming the judge's endpoint and the criteria it left `grader_error`."""
    if failure:
        from worldkit.grade.judge import JudgeFailed

        raise JudgeFailed(failure)


def print_summary(summary: dict[str, Any], as_json: bool) -> None:
    if as_json:
        echo_json(summary)
        return
    typer.echo(f"run {summary['run_id']}: {summary['task']} · {summary['agent']} · {summary['condition']}")
    listed = summary.get("seen_in_listing") or {}
    for cid, verdict in summary["criteria"].items():
        seen = f"  (seen in a listing: {', '.join(listed[cid])})" if listed.get(cid) else ""
        typer.echo(f"  {cid:<12} {verdict:<12} {summary['access'][cid]}{seen}")
    unknown = sum(verdict == "unknown" for verdict in summary["criteria"].values())
    typer.echo(f"deterministic: {summary['deterministic_passed']}/{summary['deterministic_total']} passed"
               + (f", {unknown} unknown without the event log (pass --log RUN_ID)" if unknown else ""))  # fmt: skip
    if summary.get("record"):
        typer.echo(f"record: {summary['record']}")


def grade_command(
    run_dir: Path | None = typer.Argument(None, help="A run folder (written by `run` or `serve --overlay T --out DIR`)."),
    overlay: str | None = typer.Option(None, "--overlay", help="Task overlay id or path (with --workspace)."),
    workspace: Path | None = typer.Option(None, "--workspace", help="The workspace folder to grade (with --overlay)."),
    condition: str = typer.Option("full", "--condition", help="With --overlay: full or curated:NAME."),
    log: str | None = typer.Option(None, "--log", help="Run id of the session's event log (state changes, access)."),
    store: str | None = typer.Option(None, "--store", help="Store URL holding the log (default: the folder's, or $WORLDKIT_STORE)."),
    judge: str = typer.Option("none", "--judge", metavar=JUDGE_METAVAR, help=JUDGE_HELP),
    judge_base_url: str = typer.Option(None, "--judge-base-url", help="The judge's own endpoint (default $WORLDKIT_JUDGE_BASE_URL)."),
    judge_model: str = typer.Option(None, "--judge-model", help="The judge's model (default $WORLDKIT_JUDGE_MODEL)."),
    judge_retries: int = typer.Option(None, "--judge-retries", help="Retries of a failing judge request (default 3)."),
    judge_backoff: float = typer.Option(None, "--judge-backoff", help="Seconds before the first judge retry (default 1)."),
    judge_calibration: Path = typer.Option(None, "--judge-calibration", help=CALIBRATION_HELP),
    record: Path | None = typer.Option(None, "--record", help="With --workspace: also write the execution record here."),
    force: bool = typer.Option(False, "--force", help="With RUN_DIR: replace an existing execution record."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object (the shape of `run --json`)."),
) -> None:
    """Grade a workspace against a task, or a run folder, without running an agent.

    Without --log, mail and record changes are unknown and every access label is `unknown`.
    """
    from worldkit.errors import UsageError
    from worldkit.grade.grading import summary
    from worldkit.record.execution import write_record
    from worldkit.run.regrade import grade_folder, grade_workspace

    judging = build_judge(judge, judge_base_url, judge_model, judge_retries, judge_backoff, judge_calibration)
    if run_dir is not None:
        if overlay is not None or workspace is not None or log is not None:
            raise UsageError("RUN_DIR excludes --overlay/--workspace/--log: the run folder names its task and log")
        result = grade_folder(run_dir, judge=judging, store_url=store, force=force)
        print_summary(summary(result, Path(run_dir).absolute() / "execution-record.json"), as_json)
        fail_if_judge_failed(result.judge_failure)
        return
    if overlay is None or workspace is None:
        raise UsageError("give a run folder, or --overlay T and --workspace DIR (optionally --log RUN_ID --store URL)")
    result = grade_workspace(overlay, workspace, condition=condition, log=log, store_url=store, judge=judging)
    if record is not None:
        write_record(result, record)
    print_summary(summary(result, record), as_json)
    fail_if_judge_failed(result.judge_failure)


def judge_batch_command(
    runs: list[Path] = typer.Argument(..., help="Run folders or directories holding execution records."),  # noqa: B008
    judge: str = typer.Option("openai", "--judge", metavar=JUDGE_METAVAR, help="Judge for the semantic criteria."),
    judge_base_url: str = typer.Option(None, "--judge-base-url", help="The judge's own endpoint (default $WORLDKIT_JUDGE_BASE_URL)."),
    judge_model: str = typer.Option(None, "--judge-model", help="The judge's model (default $WORLDKIT_JUDGE_MODEL)."),
    judge_retries: int = typer.Option(None, "--judge-retries", help="Retries of a failing judge request (default 3)."),
    judge_backoff: float = typer.Option(None, "--judge-backoff", help="Seconds before the first judge retry (default 1)."),
    judge_calibration: Path = typer.Option(None, "--judge-calibration", help=CALIBRATION_HELP),
    seed: int = typer.Option(0, "--seed", help="Seed of the shuffle the items are judged in."),
    write: bool = typer.Option(False, "--write", help="Write the verdicts and the judge's configuration into the records."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Judge the semantic criteria of many finished runs in one blinded, shuffled batch."""
    from worldkit.errors import UsageError
    from worldkit.run.batch import judge_batch

    judging = build_judge(judge, judge_base_url, judge_model, judge_retries, judge_backoff, judge_calibration)
    if judging is None:
        raise UsageError("judge-batch needs a judge: pass --judge openai (with its endpoint and model)")
    result = judge_batch(runs, judging, seed=seed, write=write)
    if as_json:
        echo_json(result.as_json())
    else:
        for run_id, verdicts in sorted(result.runs.items()):
            typer.echo(f"{run_id}: " + ", ".join(f"{cid} {verdict}" for cid, verdict in sorted(verdicts.items())))
        typer.echo(result.counts_line() + (f"; {len(result.written)} records updated" if write else ""))
    fail_if_judge_failed(result.failure)


def register(app: typer.Typer) -> None:
    app.command("grade")(grade_command)
    app.command("judge-batch")(judge_batch_command)

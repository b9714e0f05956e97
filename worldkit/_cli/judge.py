"""`worldkit judge calibrate`: a judge over the labelled counterfactuals (`worldkit.grade.calibration`).

Parses, calls `calibrate`, prints the figures (progress on stderr), writes the calibration file.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import typer

from worldkit._cli.grade import JUDGE_METAVAR, build_judge
from worldkit._cli.output import echo_json

judge_app = typer.Typer(help="Judges of semantic criteria: calibrate one on the labelled counterfactuals.",
                        no_args_is_help=True)  # fmt: skip


def _tasks(world: str | None, tasks: list[str] | None) -> list[Any]:
    from worldkit.errors import UsageError
    from worldkit.overlay.load import find_overlays, load_overlay, resolve_overlay

    paths: list[Path] = []
    if world:
        paths += find_overlays(world)
        if not paths:
            raise UsageError(f"no overlays of world {world!r} found; pass --tasks with overlay paths or ids")
    for task in tasks or []:
        for name in (t for t in task.split(",") if t.strip()):
            paths.append(resolve_overlay(name.strip()))
    if not paths:
        raise UsageError("name the tasks to calibrate on: --world W (every overlay of W) and/or --tasks T1,T2")
    return [load_overlay(p) for p in sorted(set(paths))]


def _pct(value: Any) -> str:
    return "undefined" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{100 * value:.1f}%"


def _num(value: Any) -> str:
    return "undefined" if value is None else f"{value:.2f}"


def _line(label: str, figures: dict[str, Any]) -> str:
    def ci(key: str, fmt: Any) -> str:
        found = figures.get(key)
        return f" [{fmt(found[0])}, {fmt(found[1])}]" if found else ""

    return (f"  {label:<28} n={figures['n']:<4} agreement {_pct(figures['agreement'])}{ci('agreement_ci', _pct)}  "
            f"κ {_num(figures['kappa'])}{ci('kappa_ci', _num)}  AC1 {_num(figures['ac1'])}{ci('ac1_ci', _num)}")  # fmt: skip


@judge_app.command("calibrate")
def calibrate_command(
    judge: str = typer.Option(..., "--judge", metavar=JUDGE_METAVAR, help="The judge to calibrate."),
    judge_base_url: str = typer.Option(None, "--judge-base-url", help="The judge's own endpoint (default $WORLDKIT_JUDGE_BASE_URL)."),
    judge_model: str = typer.Option(None, "--judge-model", help="The judge's model (default $WORLDKIT_JUDGE_MODEL)."),
    judge_retries: int = typer.Option(None, "--judge-retries", help="Retries of a failing judge request (default 3)."),
    judge_backoff: float = typer.Option(None, "--judge-backoff", help="Seconds before the first judge retry (default 1)."),
    world: str = typer.Option(None, "--world", help="Calibrate on every overlay of this world (e.g. pharmaco_demo)."),
    tasks: list[str] = typer.Option(None, "--tasks", help="Overlay ids or paths, comma-separated or repeated."),  # noqa: B008
    bootstrap: int = typer.Option(2000, "--bootstrap", min=0, help="Cluster-bootstrap resamples for the intervals."),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap."),
    out: Path = typer.Option(None, "--out", help="Write the calibration (canonical JSON with its sha256) here."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object (the calibration's summary and disagreements)."),
) -> None:
    """Run a judge over every semantic criterion's labelled counterfactuals; print agreement, κ and AC1.

    Labels: the reference and every correct counterfactual pass, nothing done fails, a wrong one fails
    the criteria it names. Intervals are 95% cluster-bootstrap ones (tasks overall, variants per task).
    Give the file written with --out to run, grade, regrade or judge-batch (--judge-calibration) and the
    calibration's digest and figures go into every execution record the judge grades.
    """
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from worldkit.errors import UsageError
    from worldkit.grade.calibration import calibrate

    judging = build_judge(judge, judge_base_url, judge_model, judge_retries, judge_backoff)
    if judging is None:
        raise UsageError("judge calibrate needs a judge: --judge facts, or --judge openai with its endpoint and model")
    overlays = _tasks(world, tasks)
    progress = Progress(TextColumn("calibrating {task.fields[overlay]}"), BarColumn(),
                        TextColumn("{task.completed}/{task.total} items"), TimeElapsedColumn(),
                        console=Console(stderr=True), transient=True)  # fmt: skip
    bar: dict[str, Any] = {}

    def show(task_id: str, done: int, total: int) -> None:
        if "id" not in bar:
            bar["id"] = progress.add_task("calibrate", total=total, overlay=task_id)
        progress.update(bar["id"], completed=done, overlay=task_id)

    with progress:
        calibration = calibrate(overlays, judging, resamples=bootstrap, seed=seed, progress=show)
    document = calibration.document
    if out is not None:
        from worldkit.canon import pretty_json

        out.write_text(pretty_json(document), encoding="utf-8")
    if as_json:
        echo_json({**calibration.summary(), "disagreement_items": document["disagreements"],
                   "out": str(out) if out else None})  # fmt: skip
        return
    typer.echo(f"judge {document['judge'].get('id')}: {document['overall']['n']} labelled items over "
               f"{len(document['tasks'])} task(s); 95% cluster-bootstrap intervals ({bootstrap} resamples)")  # fmt: skip
    typer.echo(_line("overall (task clusters)", document["overall"]))
    for task_id, figures in document["per_task"].items():
        typer.echo(_line(task_id, figures))
    if document["undecided"]:
        typer.echo(f"undecided verdicts (ungraded or grader_error): {document['undecided']}")
    disagreements = document["disagreements"]
    typer.echo(f"disagreements: {len(disagreements)}")
    for item in disagreements:
        typer.echo(f"  {item['task']} {item['variant']} ({item['kind']}) {item['criterion']}: expected "
                   f"{item['expected']}, got {item['got']} — {item['reason'][:160]}")  # fmt: skip
    typer.echo(f"calibration sha256 {calibration.sha256}" + (f" written to {out}" if out else ""))


def register(app: typer.Typer) -> None:
    app.add_typer(judge_app, name="judge")

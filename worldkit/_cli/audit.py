"""`worldkit audit sample` and `worldkit audit score`: the paper's human audit (`worldkit.audit`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from worldkit._cli.output import echo_json

audit_app = typer.Typer(help="The human audit of a campaign: blinded coding sheets, then agreement figures.",
                        no_args_is_help=True)  # fmt: skip


@audit_app.command("sample")
def sample_command(
    runs: list[Path] = typer.Argument(..., help="Run folders or directories holding execution records."),  # noqa: B008
    criteria: int = typer.Option(..., "--criteria", min=0, help="Criterion executions to sample."),
    access: int = typer.Option(..., "--access", min=0, help="Evidence-access labels to sample."),
    seed: int = typer.Option(..., "--seed", help="Seed of the stratified draw and of the item order."),
    out: Path = typer.Option(..., "--out", help="New folder for the coding sheets and the sealed key."),
    coders: str = typer.Option("A,B", "--coders", help="Coder names, comma-separated (one sheet each)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Draw a stratified, blinded sample (task, condition, route, verdict) into one coding sheet per coder.

    Sheets (coder-X.csv and coder-X.xlsx) show the task, criterion, deliverable excerpt, evidence locators and,
    for access items, the run's tool calls — never the agent, condition, run id or automated verdict; key.json
    maps items back and is sealed by its sha256.
    """
    from worldkit.audit import draw_sample

    names = [c.strip() for c in coders.split(",") if c.strip()]
    result = draw_sample(runs, out, criteria=criteria, access=access, seed=seed, coders=names)
    if as_json:
        echo_json(result.as_json())
        return
    typer.echo(f"{result.items} items in {out}: {result.criteria} criterion executions (of {result.available['criteria']}) "
               f"and {result.access} access labels (of {result.available['access']}), {len(result.strata)} strata")  # fmt: skip
    typer.echo(f"coding sheets: {', '.join(f'coder-{c}.csv/.xlsx' for c in result.coders)}; sealed key: key.json")
    typer.echo(f"when every sheet is filled: worldkit audit score {out}")


def _pct(value: Any) -> str:
    return "undefined" if value is None else f"{100 * value:.1f}%"


def _num(value: Any) -> str:
    return "undefined" if value is None else f"{value:.2f}"


def _ci(figures: dict[str, Any], key: str, fmt: Any) -> str:
    found = figures.get(f"{key}_ci")
    return f" [{fmt(found[0])}, {fmt(found[1])}]" if found else ""


@audit_app.command("score")
def score_command(
    folder: Path = typer.Argument(..., help="The folder `audit sample --out` wrote, with the filled sheets."),
    bootstrap: int = typer.Option(2000, "--bootstrap", min=0, help="Task-cluster bootstrap resamples."),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Score filled coding sheets: agreement, Cohen's κ and Gwet's AC1 between coders and with the automation.

    Criterion verdicts and access labels apart; 95% task-cluster bootstrap intervals; each coder's agreement
    with the automated verdicts also by condition.
    """
    from worldkit.audit import score_audit

    result = score_audit(folder, resamples=bootstrap, seed=seed)
    if as_json:
        echo_json(result.as_json())
        return
    titles = {"criteria": "criterion verdicts", "access": "access labels"}
    for kind, figures in result.kinds.items():
        typer.echo(f"{titles[kind]}: {figures['n']} items over {figures['tasks']} task(s)")
        for pair, f in figures["pairs"].items():
            typer.echo(f"  {pair:<22} agreement {_pct(f['agreement'])}{_ci(f, 'agreement', _pct)}  "
                       f"κ {_num(f['kappa'])}{_ci(f, 'kappa', _num)}  AC1 {_num(f['ac1'])}{_ci(f, 'ac1', _num)}")  # fmt: skip
        for condition, shares in figures["coder_vs_automated_by_condition"].items():
            coders = ", ".join(f"{c} {_pct(v)}" for c, v in shares.items() if c != "n")
            typer.echo(f"  vs automated, {condition} (n={shares['n']}): {coders}")


def register(app: typer.Typer) -> None:
    app.add_typer(audit_app, name="audit")

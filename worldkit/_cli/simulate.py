"""`worldkit simulate ledgers` and `worldkit power`: planted-effect calibration and power (adapters over
`worldkit.analysis.simulate` and `worldkit.analysis.power`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from worldkit.errors import UsageError

simulate_app = typer.Typer(
    name="simulate", help="Synthetic ledgers from a stated model, analysed by worldkit.", no_args_is_help=True,
    add_completion=False,
)

_DESIGN_HELP = "`paper` (the WorkWorlds study: 8 tasks, 72 criteria, 3 agents) or a campaign design YAML file."


def _model(path: Path | None) -> Any:
    from pydantic import ValidationError

    from worldkit.analysis.simulate import SimModel

    if path is None:
        return SimModel()
    import yaml

    try:
        return SimModel.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")) or {})
    except OSError as error:
        raise UsageError(f"--model {path}: cannot read it ({error.strerror}); give a YAML or JSON file") from None
    except (yaml.YAMLError, ValidationError) as error:
        raise UsageError(f"--model {path}: not a simulation model ({str(error).splitlines()[0]}); see "
                         "`worldkit.analysis.simulate.SimModel` for its fields") from None  # fmt: skip


def _pp(value: float | None, se: float | None = None) -> str:
    if value is None:
        return "–"
    text = f"{value * 100:+.1f}"
    return text if se is None else f"{text} ± {se * 100:.1f}"


def _share(value: float | None, se: float | None) -> str:
    return "–" if value is None else f"{value * 100:.1f}% ± {(se or 0) * 100:.1f}"


def _metric_rows(report: Any) -> list[list[str]]:
    rows = []
    for name, by_method in (("pass", report.passed), ("access", report.access)):
        for method, m in by_method.items():
            rows.append([
            name, method, f"{m.truth * 100:+.1f}", f"{m.estimated}/{report.sims}", _pp(m.bias, m.bias_se),
            "–" if m.rmse is None else f"{m.rmse * 100:.1f} ± {(m.rmse_se or 0) * 100:.1f}",
            _share(m.coverage, m.coverage_se), _share(m.rejection, m.rejection_se),
            "–" if m.mean_width is None else f"{m.mean_width * 100:.1f} ± {(m.width_se or 0) * 100:.1f}",
            ])  # fmt: skip
    return rows


_INTERVAL_HELP = ("`paper`: the study's percentile task-cluster GEE bootstrap (reproduces the paper); `mancl`: "
                  "GEE with the bias-reduced (Mancl–DeRouen) sandwich and t with Bell–McCaffrey df, calibrated for few "
                  "tasks.")


def _intervals(text: str) -> list[str]:
    from worldkit.analysis.simulate import check_intervals

    return check_intervals([part.strip() for part in text.split(",") if part.strip()])


def _ticker(title: str, total: int, enabled: bool) -> Any:
    from contextlib import contextmanager

    from worldkit._cli.output import progress_bar

    @contextmanager
    def bar() -> Any:
        with progress_bar(title, enabled=enabled) as tick:
            def step(done: int) -> None:
                if tick is not None:
                    tick(f"{done}/{total} simulated campaigns", done, total)
            yield step

    return bar()


@simulate_app.command("ledgers")
def ledgers(
    design: str = typer.Option("paper", "--design", metavar="D", help=_DESIGN_HELP),
    effect: float = typer.Option(..., "--effect", metavar="PASS_PP", help="Planted pass effect, curated − full, in percentage points."),
    access_effect: float = typer.Option(..., "--access-effect", metavar="ACCESS_PP", help="Planted access effect in percentage points."),
    tasks: int | None = typer.Option(None, "--tasks", metavar="N", help="Number of tasks (criteria per task cycle over the design's)."),
    repeats: int | None = typer.Option(None, "--repeats", metavar="R", min=1, help="Full runs per task × agent (curated: as many over the packets)."),
    seed: int = typer.Option(1, "--seed", metavar="S", help="Seed: ledger k is drawn with numpy default_rng([S, k])."),
    sims: int = typer.Option(200, "--sims", metavar="K", min=2, help="Simulated ledgers."),
    replicates: int = typer.Option(100, "--replicates", metavar="B", min=1, help="Bootstrap replicates per ledger (the paper: 2,000)."),
    model: Path | None = typer.Option(None, "--model", metavar="FILE", help="The model's parameters (YAML/JSON, SimModel fields); default: stated assumptions."),
    interval: str = typer.Option("paper,mancl", "--interval", metavar="METHODS", help="Interval methods to evaluate, comma-separated. " + _INTERVAL_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Draw K synthetic ledgers with a planted condition effect on access and on pass (task,
    criterion and run random effects, agent effects) and analyse each with worldkit's own
    analysis: bias, RMSE, 95% interval coverage and rejection rate per interval method, with Monte
    Carlo errors."""
    from worldkit._cli.output import echo_json, render_table
    from worldkit.analysis.power import stated_design
    from worldkit.analysis.simulate import simulate

    methods = _intervals(interval)
    shaped = stated_design(design, tasks=tasks, repeats=repeats)
    with _ticker("simulate", sims, not as_json) as step:
        report = simulate(shaped, _model(model), pass_effect=effect / 100, access_effect=access_effect / 100,
                          sims=sims, replicates=replicates, seed=seed, intervals=methods, progress=step)  # fmt: skip
    if as_json:
        echo_json(report.model_dump(mode="json"))
        return
    typer.echo(
        f"{len(shaped.criteria)} tasks ({sum(shaped.criteria)} criteria) × {shaped.agents} agents × {shaped.repeats} full "
        f"+ {shaped.per_packet} per packet × {shaped.packets} packets = {shaped.runs} runs; {sims} ledgers, "
        f"{replicates} bootstrap replicates each, seed {seed}"
    )
    typer.echo(render_table(
        ["outcome", "interval", "planted (pp)", "estimated", "bias (pp)", "RMSE (pp)", "95% coverage", "rejection", "width (pp)"],
        _metric_rows(report), title="Planted-effect calibration (± Monte Carlo SE)",
        right={"planted (pp)", "estimated", "bias (pp)", "RMSE (pp)", "95% coverage", "rejection", "width (pp)"},
    ))  # fmt: skip


def register(app: typer.Typer) -> None:
    app.add_typer(simulate_app, name="simulate")

    @app.command("power")
    def power_command(
        ledgers: Path | None = typer.Option(None, "--ledgers", metavar="PILOT", help="A pilot's WorkWorlds ledgers (`worldkit export ledgers` writes worldkit runs so)."),
        design: str | None = typer.Option(None, "--design", metavar="D", help=_DESIGN_HELP + " Without --ledgers."),
        effect: float | None = typer.Option(None, "--effect", metavar="PP", help="Pass effect to detect, in percentage points (default with --ledgers: the pilot's)."),
        access_effect: float | None = typer.Option(None, "--access-effect", metavar="PP", help="Access effect in points (default: the pilot's, or as --effect)."),
        repeats: str = typer.Option("2,4,8", "--repeats", metavar="COUNTS", help="Full runs per task × agent to try, comma-separated (e.g. 2,4,8)."),
        tasks: int | None = typer.Option(None, "--tasks", metavar="N", help="Number of tasks (default: the pilot's or the design's)."),
        sims: int = typer.Option(200, "--sims", metavar="K", min=2, help="Simulated campaigns per repeats count."),
        replicates: int = typer.Option(100, "--replicates", metavar="B", min=1, help="Bootstrap replicates per campaign."),
        seed: int = typer.Option(1, "--seed", help="Seed (the same ledgers' random numbers at every repeats count)."),
        model: Path | None = typer.Option(None, "--model", metavar="FILE", help="With --design: the model's parameters (YAML/JSON)."),
        interval: str = typer.Option("paper", "--interval", metavar="METHOD", help=_INTERVAL_HELP),
        as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    ) -> None:
        """For each number of repeats, the probability that the 95% interval of the pass (and
        access) difference excludes 0 and its expected width, from a pilot's fitted task,
        criterion, run and agent variation, or from stated assumptions."""
        from worldkit._cli.output import echo_json, render_table
        from worldkit.analysis.power import fit_pilot, power, stated_design

        methods = _intervals(interval)
        if len(methods) != 1:
            raise UsageError(f"--interval {interval}: power takes one method, `paper` or `mancl`")
        method = methods[0]
        try:
            counts = [int(part) for part in repeats.split(",") if part.strip()]
        except ValueError:
            raise UsageError(f"--repeats {repeats!r}: give whole numbers separated by commas, e.g. 2,4,8") from None
        if (ledgers is None) == (design is None):
            raise UsageError("give either --ledgers PILOT or --design D (with --effect)")
        if ledgers is not None:
            from worldkit.analysis.ledgers import read_ledgers

            if model is not None:
                raise UsageError("--model goes with --design; with --ledgers the model is fitted to the pilot")
            pilot = fit_pilot(read_ledgers(ledgers))
            shaped, fitted, source = pilot.design, pilot.model, f"pilot {ledgers} ({pilot.rows} executions)"
            pass_pp = pilot.pass_effect if effect is None else effect / 100
            access_pp = pilot.access_effect if access_effect is None else access_effect / 100
        else:
            if effect is None:
                raise UsageError("--design needs --effect PP (the pass effect to detect)")
            shaped, fitted, source = stated_design(str(design)), _model(model), "stated assumptions"
            pass_pp = effect / 100
            access_pp = pass_pp if access_effect is None else access_effect / 100
        if tasks is not None:
            if tasks < 2:
                raise UsageError(f"--tasks must be at least 2 (task-cluster intervals need 2 clusters; got {tasks})")
            shaped = shaped.model_copy(update={"criteria": [shaped.criteria[i % len(shaped.criteria)] for i in range(tasks)]})
        with _ticker("power", sims * len(counts), not as_json) as step:
            report = power(shaped, fitted, counts, pass_effect=pass_pp, access_effect=access_pp, sims=sims,
                           replicates=replicates, seed=seed, source=source, interval=method,
                           progress=step)  # fmt: skip
        if as_json:
            echo_json(report.model_dump(mode="json"))
            return
        typer.echo(f"{source}; {len(shaped.criteria)} tasks ({sum(shaped.criteria)} criteria) × {shaped.agents} agents; "
                   f"planted pass {pass_pp * 100:+.1f} pp, access {access_pp * 100:+.1f} pp; {sims} campaigns per row, "
                   f"{replicates} bootstrap replicates each, seed {seed}; interval {method}")  # fmt: skip
        rows = [[str(r.repeats), str(r.runs), _share(r.passed.rejection, r.passed.rejection_se),
                 "–" if r.passed.mean_width is None else f"{r.passed.mean_width * 100:.1f} ± {(r.passed.width_se or 0) * 100:.1f}",
                 _share(r.access.rejection, r.access.rejection_se),
                 "–" if r.access.mean_width is None else f"{r.access.mean_width * 100:.1f} ± {(r.access.width_se or 0) * 100:.1f}"]
                for r in report.rows]  # fmt: skip
        typer.echo(render_table(
            ["repeats", "runs", "pass: P(excludes 0)", "pass: width (pp)", "access: P(excludes 0)", "access: width (pp)"],
            rows, title=f"Power of the 95% task-cluster interval, {method} (± Monte Carlo SE)",
            right={"repeats", "runs", "pass: P(excludes 0)", "pass: width (pp)", "access: P(excludes 0)", "access: width (pp)"},
        ))  # fmt: skip


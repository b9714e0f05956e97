"""Power before a campaign: how often the 95% interval excludes 0, and how wide it is, per repeats.

Two sources of the data-generating model (`worldkit.analysis.simulate.SimModel`):

- a **pilot** (`worldkit.analysis.pilot.fit_pilot`): result rows of earlier runs, to which the
  model is fitted (a mixed model for the within-task variation, simulated moments for the
  between-task variation of the condition effects). The pilot's design (criteria per task,
  agents, full runs per task × agent, packets) is the design whose repeats vary, and the effects
  to plant default to the pilot's own GEE estimates (worldkit's analysis, no bootstrap);
- **stated assumptions**: a `SimDesign` and `SimModel` given directly.

`power` then runs `simulate` at each repeats count and reports, for the pass and the access
contrast and one interval method (`paper` or `mancl`, see `worldkit.analysis.small_sample`), the
rejection rate (the interval excludes 0) and the mean interval width, each with its Monte Carlo
standard error.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from worldkit._model import Model
from worldkit.analysis.pilot import Pilot, fit_pilot
from worldkit.analysis.simulate import Metric, SimDesign, SimModel, check_intervals, simulate
from worldkit.errors import UsageError

__all__ = ["Pilot", "PowerReport", "PowerRow", "fit_pilot", "power", "stated_design"]


class PowerRow(Model):
    """One repeats count."""

    repeats: int
    """Full runs per task × agent (curated: as many, over the packets)."""
    runs: int
    """Runs in the design."""
    passed: Metric
    """The pass contrast over the simulated campaigns."""
    access: Metric
    """The access contrast."""


class PowerReport(Model):
    """What `worldkit power` prints."""

    design: SimDesign
    """The design at the pilot's (or stated) repeats."""
    model: SimModel
    """The data-generating model."""
    source: str
    """`pilot PATH` or `stated assumptions`."""
    pass_effect: float
    """Planted pass effect (proportion)."""
    access_effect: float
    """Planted access effect (proportion)."""
    sims: int
    """Simulated campaigns per repeats count."""
    replicates: int
    """Bootstrap replicates per simulated campaign."""
    seed: int
    """Seed (the same for every repeats count: common random numbers)."""
    interval: str
    """The interval method whose rejection rate and width are reported."""
    rows: list[PowerRow]
    """One per repeats count, in the order given."""


def power(
    design: SimDesign,
    model: SimModel,
    repeats: Sequence[int],
    *,
    pass_effect: float,
    access_effect: float,
    sims: int,
    replicates: int,
    seed: int,
    source: str,
    interval: str = "paper",
    progress: Callable[[int], None] | None = None,
) -> PowerReport:
    """Simulate the design at each repeats count (see the module docstring)."""
    (method,) = check_intervals([interval])
    if not repeats or any(r < 1 for r in repeats):
        raise UsageError(f"--repeats takes counts of at least 1, e.g. 2,4,8 (got {','.join(map(str, repeats))})")
    done = 0
    rows = []
    for count in repeats:
        shaped = design.with_repeats(count)

        def tick(k: int, base: int = done) -> None:
            if progress is not None:
                progress(base + k)

        report = simulate(shaped, model, pass_effect=pass_effect, access_effect=access_effect, sims=sims,
                          replicates=replicates, seed=seed, intervals=[method], progress=tick)  # fmt: skip
        done += sims
        rows.append(PowerRow(repeats=count, runs=shaped.runs, passed=report.passed[method],
                             access=report.access[method]))
    return PowerReport(
        design=design, model=model, source=source, pass_effect=pass_effect, access_effect=access_effect, sims=sims,
        replicates=replicates, seed=seed, interval=method, rows=rows,
    )  # fmt: skip



def stated_design(ref: str, *, tasks: int | None = None, repeats: int | None = None) -> SimDesign:
    """The design `ref` names: `paper` (the WorkWorlds study) or a campaign design file, whose
    overlays give the criteria per task (tasks it cannot load count the mean of the others, or
    9); `tasks` and `repeats` override (criteria per task cycle over the tasks)."""
    from pathlib import Path

    from worldkit.analysis.simulate import PAPER_DESIGN

    if ref == "paper":
        design = PAPER_DESIGN
    else:
        from worldkit.campaign.design import load_design
        from worldkit.overlay import load_overlay, resolve_overlay

        path = Path(ref)
        if not path.is_file():
            raise UsageError(f"--design {ref}: no such file; give `paper` or a campaign design YAML file")
        campaign = load_design(path)
        counts: list[int | None] = []
        for task in campaign.tasks:
            local = path.parent / task
            try:
                counts.append(len(load_overlay(resolve_overlay(str(local if local.exists() else task))).rubric))
            except Exception:  # noqa: BLE001 - an unreadable task counts as an average one, said in the docstring
                counts.append(None)
        known = [c for c in counts if c]
        fill = round(sum(known) / len(known)) if known else 9
        criteria = [c or fill for c in counts]
        if len(criteria) < 2:
            criteria = criteria * 2
        design = SimDesign(criteria=criteria, agents=len(campaign.agents), repeats=max(1, campaign.conditions.full),
                           packets=2)  # fmt: skip
    if tasks is not None:
        if tasks < 2:
            raise UsageError(f"--tasks must be at least 2 (task-cluster intervals need 2 clusters; got {tasks})")
        design = design.model_copy(update={"criteria": [design.criteria[i % len(design.criteria)] for i in range(tasks)]})
    if repeats is not None:
        design = design.with_repeats(repeats)
    return design

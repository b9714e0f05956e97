"""`worldkit infoorg build` and `worldkit infoorg baselines`: packets from local sources, baselines.

Thin adapters: parse, call `worldkit.infoorg.packets.build_to_disk` or
`worldkit.infoorg.baselines.baselines_from_source`, print. Progress goes to stderr (rich) and
only when stderr is a terminal, so piped and JSON output stay clean. The library (numpy, scipy,
scikit-learn, the organizer, MCP) is imported inside the commands, so importing this module costs
only typer: `worldkit infoorg score-trees` never pays for it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from worldkit._cli.infoorg_group import infoorg_app
from worldkit._cli.output import echo_json

if TYPE_CHECKING:
    from worldkit.infoorg.baselines import BaselineReport, TreeApplier

DEFAULT_SEED = 0
"""Build seed default (`worldkit.infoorg.packets.DEFAULT_SEED`; a test keeps them equal)."""
DEFAULT_LAMBDA = 0.2
"""λ default (`worldkit.infoorg.scoring.ECONOMY_LAMBDA`; a test keeps them equal)."""


class FamilyChoice(str, Enum):
    design = "design"
    recap = "recap"
    thread = "thread"


class ApplyChoice(str, Enum):
    tree = "tree"
    mcp = "mcp"
    organizer = "organizer"
    disk = "disk"


_LABELS = {"flat": "Filed flat", "fixed": "Fixed cuts", "random": "Random shape",
           "silhouette": "Silhouette"}


@contextmanager
def _progress() -> Iterator[Callable[[str, int, int], None]]:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    console = Console(stderr=True)
    with Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
        console=console, transient=True, disable=not console.is_terminal,
    ) as bar:
        tasks: dict[str, int] = {}

        def report(what: str, done: int, total: int) -> None:
            if what not in tasks:
                tasks[what] = bar.add_task(what, total=total)
            bar.update(tasks[what], completed=done, total=total)

        yield report


def move_through_mcp(workspace: Path, tree: Mapping[str, Sequence[str]]) -> None:
    """Carry out a tree by calling the organizer server's `move_files` through an in-memory client."""
    import asyncio

    from mcp import Client

    from worldkit.errors import CheckFailed
    from worldkit.infoorg.baselines import destinations
    from worldkit.mcp.organizer import build_organizer_server

    async def run() -> None:
        async with Client(build_organizer_server(workspace)) as client:
            for destination, ids in destinations(tree):
                result = await client.call_tool(
                    "move_files", {"ids": ids, "destination": list(destination)}
                )
                if result.is_error:
                    raise CheckFailed(
                        f"{workspace}: move_files refused {destination}: {result.content}; "
                        "the baseline tree is not valid for the organizer"
                    )

    asyncio.run(run())


def _applier(choice: ApplyChoice) -> TreeApplier | None:
    """None scores the trees directly; the others carry them out on a workspace first."""
    from worldkit.infoorg.baselines import move_on_disk, move_with_organizer

    return {
        ApplyChoice.tree: None,
        ApplyChoice.mcp: move_through_mcp,
        ApplyChoice.organizer: move_with_organizer,
        ApplyChoice.disk: move_on_disk,
    }[choice]


_COUNT_LABELS = {
    "silhouette_beats_fixed": "silhouette > fixed cuts (tasks)",
    "silhouette_beats_random": "silhouette > random mean (tasks)",
    "silhouette_at_max_parents": "silhouette at max parents (tasks)",
    "silhouette_parents_mean": "silhouette parent groups (mean)",
    "fixed_parents_mean": "fixed-cut parent groups (mean)",
    "reference_parents_mean": "reference parent groups (mean)",
    "exact_recoveries": "exact recoveries (tasks)",
}


def render_table(report: BaselineReport) -> str:
    """The baseline means next to the paper's Table 12 (0-100), then Appendix F's counts (rich tables)."""
    from worldkit._cli.output import render_table as table

    summary = report.summary()
    ours, paper = summary["mean_S"], summary["paper_S"]
    counts, paper_counts = summary["counts"], summary["paper_counts"]
    means = []
    for name, label in _LABELS.items():
        mine = ours[name]  # type: ignore[index]
        theirs = paper.get(name)  # type: ignore[union-attr]
        means.append([label, f"{mine:.1f}", "-" if theirs is None else f"{theirs:.1f}",
                      "-" if theirs is None else f"{mine - theirs:+.1f}"])
    tallies = []
    for key, label in _COUNT_LABELS.items():
        theirs = paper_counts.get(key)  # type: ignore[union-attr]
        tallies.append([label, f"{counts[key]:g}", "-" if theirs is None else f"{theirs:g}"])  # type: ignore[index]
    title = (f"{report.family}: mean Structure Score of the text-only baselines over {len(report.tasks)} tasks "
             f"(0-100, λ = {report.economy_lambda:g})")
    numbers = {"worldkit", "paper", "diff"}
    return (title + "\n" + table(["baseline", "worldkit", "paper", "diff"], means, right=numbers)
            + table(["Appendix F", "worldkit", "paper"], tallies, right=numbers))


def _default_manifest(family: str, write: bool) -> Path:
    """`manifests/infoorg/<family>.json` on the search path (`worldkit.locate`); a new one goes to ./manifests."""
    from worldkit.locate import find_manifest

    found = None if write else find_manifest("infoorg", f"{family}.json")
    return found or Path("manifests") / "infoorg" / f"{family}.json"


@infoorg_app.command("build")
def build(
    family: FamilyChoice = typer.Option(..., "--family", help="Task family to build."),
    source: Path = typer.Option(
        ..., "--source", metavar="PATH", exists=True,
        help="Local source: a kubernetes/enhancements checkout (design), the AMI manual "
        "annotations (recap), or a Jira REST v2 JSON export (thread).",
    ),
    out: Path = typer.Option(..., "--out", metavar="DIR", help="Where to write the packets."),
    tasks: int = typer.Option(50, "--tasks", min=1, help="Number of tasks to build."),
    seed: int = typer.Option(DEFAULT_SEED, "--seed", help="Seed for shuffling and Design selection."),
    manifest: Path | None = typer.Option(
        None, "--manifest", metavar="FILE",
        help="Manifest to compare with (default: manifests/infoorg/<family>.json).",
    ),
    write_manifest: bool = typer.Option(
        False, "--write-manifest", help="Write the manifest instead of comparing with it."
    ),
    force: bool = typer.Option(False, "--force", help="Replace the packets already in --out."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Build InfoOrgBench packets from a local source and check them against the manifest."""
    from worldkit.infoorg.packets import build_to_disk

    manifest_path = manifest or _default_manifest(family.value, write_manifest)
    with _progress() as progress:
        result = build_to_disk(
            family.value, source, out, manifest_path, tasks=tasks, seed=seed,
            write=write_manifest, force=force, progress=progress,
        )
    if as_json:
        echo_json(result.model_dump(mode="json"))
        return
    typer.echo(f"built {result.tasks} {result.family} packets ({result.records} records) in {out}")
    notes = {
        "match": "matches",
        "prefix-match": "matches (the first tasks of the committed manifest)",
        "written": "written",
        "absent": "absent; pass --write-manifest to create it",
    }
    typer.echo(f"manifest {result.manifest}: {notes[result.manifest_status]}")


@infoorg_app.command("baselines")
def baselines(
    family: FamilyChoice = typer.Option(..., "--family", help="Task family."),
    source: Path = typer.Option(..., "--source", metavar="PATH", exists=True, help="Local source, as for build."),
    tasks: int = typer.Option(50, "--tasks", min=1, help="Number of tasks to build and score."),
    seed: int = typer.Option(DEFAULT_SEED, "--seed", help="Build seed."),
    economy_lambda: float = typer.Option(
        DEFAULT_LAMBDA, "--lambda", min=0.0, max=1.0,
        help="λ of the folder economy (paper: 0.2; Appendix F also reports 0 and 0.4).",
    ),
    apply: ApplyChoice = typer.Option(
        ApplyChoice.tree, "--apply",
        help="tree: score each baseline tree directly (fast); mcp, organizer or disk: carry it "
        "out on a fresh workspace (organizer tools over MCP, the organizer library, plain moves) "
        "and score the captured workspace.",
    ),
    per_task: Path | None = typer.Option(
        None, "--per-task", metavar="FILE",
        help="Also write every task's scores, parent-group counts and silhouette cut as JSON.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object (with per_task)."),
) -> None:
    """Run the text-only baselines (Appendix F) on freshly built packets and print Table 12."""
    from worldkit.infoorg.baselines import baselines_from_source

    with _progress() as progress:
        report = baselines_from_source(
            family.value, source, tasks=tasks, seed=seed, apply=_applier(apply),
            progress=progress, economy_lambda=economy_lambda,
        )
    rows = [t.model_dump(mode="json") for t in report.tasks]
    if per_task is not None:
        per_task.parent.mkdir(parents=True, exist_ok=True)
        per_task.write_text(
            json.dumps({**report.summary(), "per_task": rows}, sort_keys=True, indent=2) + "\n",
            encoding="utf-8",
        )
    if as_json:
        echo_json({**report.summary(), "per_task": rows})
        return
    typer.echo(render_table(report), nl=False)


def register(app: typer.Typer) -> None:
    """Commands live on `infoorg_app`, which `infoorg_group` mounts; nothing to add here."""

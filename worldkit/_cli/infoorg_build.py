"""`worldkit infoorg build` and `worldkit infoorg baselines`: packets from local sources, baselines.

Thin adapters: parse, call `worldkit.infoorg.packets.build_to_disk` or
`worldkit.infoorg.baselines.baselines_from_source`, print. Progress goes to stderr (rich) and
only when stderr is a terminal, so piped and JSON output stay clean.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from enum import Enum
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from worldkit._cli.infoorg_group import infoorg_app
from worldkit._cli.output import echo_json
from worldkit.errors import CheckFailed
from worldkit.infoorg.baselines import (
    BASELINES,
    PAPER_TABLE_12,
    BaselineReport,
    TreeApplier,
    baselines_from_source,
    destinations,
    move_on_disk,
    move_with_organizer,
)
from worldkit.infoorg.packets import DEFAULT_SEED, build_to_disk


class FamilyChoice(str, Enum):
    design = "design"
    recap = "recap"
    thread = "thread"


class ApplyChoice(str, Enum):
    mcp = "mcp"
    organizer = "organizer"
    disk = "disk"


_LABELS = {"flat": "Filed flat", "fixed": "Fixed cuts", "random": "Random shape",
           "silhouette": "Silhouette"}


@contextmanager
def _progress() -> Iterator[Callable[[str, int, int], None]]:
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
    from mcp import Client

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


_APPLIERS: dict[ApplyChoice, TreeApplier] = {
    ApplyChoice.mcp: move_through_mcp,
    ApplyChoice.organizer: move_with_organizer,
    ApplyChoice.disk: move_on_disk,
}


def render_table(report: BaselineReport) -> str:
    """The baseline means next to the paper's Table 12 (0-100)."""
    summary = report.summary()
    ours, paper = summary["mean_S"], PAPER_TABLE_12.get(report.family, {})
    lines = [
        f"{report.family}: mean Structure Score of the text-only baselines over "
        f"{len(report.tasks)} tasks (0-100)",
        f"{'baseline':<14}{'worldkit':>9}{'paper':>8}",
    ]
    for name in BASELINES:
        theirs = f"{paper[name]:.1f}" if name in paper else "-"
        lines.append(f"{_LABELS[name]:<14}{ours[name]:>9.1f}{theirs:>8}")  # type: ignore[index]
    lines.append(
        f"silhouette parent groups: mean {summary['silhouette_parents_mean']}, at the largest "
        f"permitted count in {summary['silhouette_at_max_parents']} of {len(report.tasks)} tasks"
    )
    return "\n".join(lines)


@infoorg_app.command("build")
def build(
    family: FamilyChoice = typer.Option(..., "--family", help="Task family to build."),
    source: Path = typer.Option(
        ..., "--source", metavar="DIR",
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
    manifest_path = manifest or Path("manifests") / "infoorg" / f"{family.value}.json"
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
    source: Path = typer.Option(..., "--source", metavar="DIR", help="Local source, as for build."),
    tasks: int = typer.Option(50, "--tasks", min=1, help="Number of tasks to build and score."),
    seed: int = typer.Option(DEFAULT_SEED, "--seed", help="Build seed."),
    apply: ApplyChoice = typer.Option(
        ApplyChoice.mcp, "--apply",
        help="How baseline trees are carried out: organizer tools over MCP, the organizer "
        "library, or plain moves on disk.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Run the text-only baselines (Appendix F) on freshly built packets and print Table 12."""
    with _progress() as progress:
        report = baselines_from_source(
            family.value, source, tasks=tasks, seed=seed, apply=_APPLIERS[apply],
            progress=progress,
        )
    if as_json:
        echo_json({**report.summary(), "per_task": [t.model_dump(mode="json") for t in report.tasks]})
        return
    typer.echo(render_table(report))


def register(app: typer.Typer) -> None:
    """Commands live on `infoorg_app`, which `infoorg_group` mounts; nothing to add here."""

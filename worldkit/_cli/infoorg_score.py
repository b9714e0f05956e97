"""`worldkit infoorg score` and `worldkit infoorg score-trees`: the Structure Score of one output.

Parses, calls `worldkit.infoorg.scoring`, prints (JSON on the 0–1 scale, or a 0–100 table) and
exits: 0 for a valid output, 1 when the output is invalid (S = 0; the problems are printed),
3 when an input file is malformed.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from worldkit._cli.infoorg_group import infoorg_app
from worldkit.errors import CheckFailed, UsageError

if TYPE_CHECKING:
    from worldkit.infoorg.scoring import StructureScore

# The scorer is imported inside each command: importing this module costs only typer, and the
# commands load the scoring modules alone (no store, SQLAlchemy, overlays or scikit-learn).


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.2f}"


def render_table(score: StructureScore) -> str:
    """The human-readable report (scores on the 0–100 scale)."""
    lines = [f"{'valid':<14}{'yes' if score.valid else 'no'}", f"{'records':<14}{score.n_records}"]
    if not score.valid:
        lines.append(f"{'S':<14}0.00")
        lines += ["problems:"] + [f"  - {problem}" for problem in score.problems]
        return "\n".join(lines) + "\n"
    lines += [
        f"{'S':<14}{_pct(score.S)}",
        f"{'F1_bal':<14}{_pct(score.f1_bal)}  "
        f"(recall {_pct(score.recall_bal)}, precision {_pct(score.precision_bal)})",
        f"{'E':<14}{_pct(score.E)}  (penalty {_pct(score.penalty)})",
        f"{'triplet F1':<14}{_pct(score.triplet_f1)}",
        f"{'category':<14}{score.category}",
        f"{'clade F1':<14}{_pct(score.clade_f1)}",
        f"{'exact':<14}{'yes' if score.exact else 'no'}",
    ]
    from worldkit._cli.output import render_table as table

    columns = ["level", "g", "o", "m", "agreed", "conflict", "unres"]
    levels = [
        [{0: "parent", 1: "leaf"}.get(depth, str(depth)), *map(str, (c.g, c.o, c.m, c.agreed, c.conflicting, c.unresolved))]
        for depth, c in score.levels.items()
    ]
    return ("\n".join(lines) + "\n\n" + table(columns, levels, title="Triples by level", right=set(columns[1:]))
            + f"unsupported refinement: {score.unsupported_refinement} triples\n")


def _report(score: StructureScore, as_json: bool, what: str) -> None:
    if as_json:
        from worldkit._cli.output import echo_json

        echo_json(score.model_dump(mode="json"))
    else:
        typer.echo(render_table(score), nl=False)
    if not score.valid:
        more = len(score.problems) - 1
        extra = f" (and {more} more problem{'s' * (more > 1)})" if more > 0 else ""
        raise CheckFailed(f"{what} is not a valid output, so S = 0: {score.problems[0]}{extra}")


def _existing_dir(path: Path, option: str) -> Path:
    if not path.is_dir():
        raise UsageError(f"{option} {path} is not a directory; pass an existing directory")
    return path


def score_command(
    packet: Path = typer.Option(..., "--packet", metavar="DIR", help="Packet directory."),
    workspace: Path = typer.Option(
        ..., "--workspace", metavar="DIR", help="The captured workspace (the agent's tree root)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object (0–1 scale)."),
    economy_lambda: float = typer.Option(
        0.2, "--lambda", min=0.0, max=1.0, help="λ of the folder economy (paper: 0.2)."
    ),
) -> None:
    """Check a workspace against its packet, then print its Structure Score.

    Valid: every record once, bytes unchanged, no stray file, allowed names.
    Exits 1 when the workspace is invalid (S = 0).
    """
    from worldkit.infoorg.scoring import score_workspace

    score = score_workspace(
        _existing_dir(packet, "--packet"), _existing_dir(workspace, "--workspace"), economy_lambda
    )
    _report(score, as_json, f"workspace {workspace}")


def score_trees_command(
    reference: Path = typer.Argument(..., metavar="REF.json", help="Reference hierarchy."),
    output: Path = typer.Argument(..., metavar="OUT.json", help="Output hierarchy."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object (0–1 scale)."),
    economy_lambda: float = typer.Option(
        0.2, "--lambda", min=0.0, max=1.0, help="λ of the folder economy (paper: 0.2)."
    ),
) -> None:
    """Score an output hierarchy against a reference, both given as JSON files.

    Each file maps record ids to folder lists: {"F001": ["meeting", "section"]}.
    Exits 1 when the output is invalid (S = 0), 3 when a file is malformed (including a
    record id given twice).
    """
    from worldkit.infoorg.scoring import score_trees
    from worldkit.infoorg.tree import InvalidHierarchy, load_tree_file

    ref_paths, out_paths = load_tree_file(reference), load_tree_file(output)
    try:
        score = score_trees(ref_paths, out_paths, economy_lambda)
    except InvalidHierarchy as error:
        raise InvalidHierarchy(f"{reference}: {error.message}") from error
    _report(score, as_json, str(output))


def register(app: typer.Typer) -> None:  # noqa: ARG001 - commands live on the infoorg group
    infoorg_app.command("score")(score_command)
    infoorg_app.command("score-trees")(score_trees_command)

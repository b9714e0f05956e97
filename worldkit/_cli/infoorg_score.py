"""`worldkit infoorg score` and `worldkit infoorg score-trees`: the Structure Score of one output.

Parses, calls `worldkit.infoorg.scoring`, prints (JSON on the 0–1 scale, or a 0–100 table) and
exits: 0 for a valid output, 1 when the output is invalid (S = 0; the problems are printed),
3 when an input file is malformed.
"""

from __future__ import annotations

from pathlib import Path

import typer

from worldkit._cli.infoorg_group import infoorg_app
from worldkit._cli.score_trees import render_table, report_score
from worldkit.errors import UsageError

# The scorer is imported inside each command: importing this module costs only typer, and the
# commands load the scoring modules alone (no store, SQLAlchemy, overlays or scikit-learn).

__all__ = ["register", "render_table", "score_command", "score_trees_command"]


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
    report_score(score.model_dump(), as_json, f"workspace {workspace}")


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
    from worldkit._cli.score_trees import score_trees_files

    score_trees_files(reference, output, as_json, economy_lambda)


def register(app: typer.Typer) -> None:  # noqa: ARG001 - commands live on the infoorg group
    infoorg_app.command("score")(score_command)
    infoorg_app.command("score-trees")(score_trees_command)

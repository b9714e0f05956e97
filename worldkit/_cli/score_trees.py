"""`worldkit infoorg score-trees` without the command-line toolkit: parse, score, print.

`worldkit._cli.main.run` sends the plain form of the command (`REF OUT [--json] [--lambda X]`)
here directly, so scoring two files costs the scorer and not typer/click (issue 18: ≤ 0.5 s end
to end); any other form (help, unknown options, bad values) goes through typer, whose command
(`infoorg_score.score_trees_command`) calls `score_trees_files` too. The score is printed from
the plain figures of `worldkit.infoorg.structure` (the fields of `StructureScore`, the same JSON
`model_dump` gives), so this path imports neither typer, click nor pydantic.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from worldkit.errors import CheckFailed

__all__ = ["render_table", "report_score", "score_json", "score_trees_fast", "score_trees_files"]


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.2f}"


def render_table(score: Mapping[str, Any]) -> str:
    """The human-readable report (scores on the 0–100 scale) of a score's fields
    (`StructureScore.model_dump()` or `structure.score_figures`)."""
    lines = [f"{'valid':<14}{'yes' if score['valid'] else 'no'}", f"{'records':<14}{score['n_records']}"]
    if not score["valid"]:
        lines.append(f"{'S':<14}0.00")
        lines += ["problems:"] + [f"  - {problem}" for problem in score["problems"]]
        return "\n".join(lines) + "\n"
    lines += [
        f"{'S':<14}{_pct(score['S'])}",
        f"{'F1_bal':<14}{_pct(score['f1_bal'])}  "
        f"(recall {_pct(score['recall_bal'])}, precision {_pct(score['precision_bal'])})",
        f"{'E':<14}{_pct(score['E'])}  (penalty {_pct(score['penalty'])})",
        f"{'triplet F1':<14}{_pct(score['triplet_f1'])}",
        f"{'category':<14}{score['category']}",
        f"{'clade F1':<14}{_pct(score['clade_f1'])}",
        f"{'exact':<14}{'yes' if score['exact'] else 'no'}",
        "",
        f"{'level':<7}{'g':>9}{'o':>9}{'m':>9}{'agreed':>9}{'conflict':>9}{'unres':>9}",
    ]
    for depth, c in score["levels"].items():
        name = {0: "parent", 1: "leaf"}.get(depth, str(depth))
        lines.append(
            f"{name:<7}{c['g']:>9}{c['o']:>9}{c['m']:>9}{c['agreed']:>9}{c['conflicting']:>9}"
            f"{c['unresolved']:>9}"
        )
    lines.append(f"unsupported refinement: {score['unsupported_refinement']} triples")
    return "\n".join(lines) + "\n"


def score_json(score: Mapping[str, Any]) -> dict[str, Any]:
    """A score's fields as `StructureScore.model_dump(mode="json")` gives them (level keys are
    strings)."""
    return {**score, "levels": {str(depth): dict(c) for depth, c in score["levels"].items()}}


def report_score(score: Mapping[str, Any], as_json: bool, what: str) -> None:
    """Print a score's fields (`StructureScore.model_dump()` or `structure.score_figures`) as
    JSON or as the table; an invalid output then raises `CheckFailed` (exit 1)."""
    if as_json:
        from worldkit._cli.output import echo_json

        echo_json(score_json(score))
    else:
        sys.stdout.write(render_table(score))
        sys.stdout.flush()
    if not score["valid"]:
        problems = score["problems"]
        more = len(problems) - 1
        extra = f" (and {more} more problem{'s' * (more > 1)})" if more > 0 else ""
        raise CheckFailed(f"{what} is not a valid output, so S = 0: {problems[0]}{extra}")


def score_trees_files(reference: Path, output: Path, as_json: bool, economy_lambda: float) -> None:
    """Score the output hierarchy file against the reference file and print the score."""
    from worldkit.infoorg.structure import score_figures
    from worldkit.infoorg.tree import InvalidHierarchy, load_tree_file

    ref_paths, out_paths = load_tree_file(reference), load_tree_file(output)
    try:
        score = score_figures(ref_paths, out_paths, economy_lambda)
    except InvalidHierarchy as error:
        raise InvalidHierarchy(f"{reference}: {error.message}") from error
    report_score(score, as_json, str(output))


def score_trees_fast(args: list[str]) -> tuple[Path, Path, bool, float] | None:
    """`infoorg score-trees` arguments parsed without building the CLI, or None when they are
    anything but the plain form (`REF OUT [--json] [--lambda X]`, X in [0, 1]): help, unknown
    options, a missing argument or a bad value go through typer, for its messages.

    """
    positional: list[str] = []
    as_json, economy_lambda = False, 0.2
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        if arg == "--json":
            as_json = True
        elif arg == "--lambda" or arg.startswith("--lambda="):
            value = arg.partition("=")[2] if "=" in arg else (rest.pop(0) if rest else None)
            try:
                economy_lambda = float(value) if value is not None else -1.0
            except ValueError:
                return None
            if not 0.0 <= economy_lambda <= 1.0:
                return None
        elif arg.startswith("-"):
            return None
        else:
            positional.append(arg)
    if len(positional) != 2:
        return None
    return Path(positional[0]), Path(positional[1]), as_json, economy_lambda

"""InfoOrgBench results in the paper's layouts: Table 3 (Trip., Pen., Score per family and Avg)
and Table 13 (triple outcomes by level, output categories), from packet runs' `result.json`.

Family means weigh tasks equally: repeated runs of one task are averaged first, then the tasks
of the family; Avg is the mean of the family means. Every output stays in its family mean (an
invalid one scores 0, Appendix C.5/D.1). A task's family is its id's prefix (`recap-007`).
Table 13's level shares are pooled per system (agent) over its outputs, then the median over
systems is shown; categories are counted over all outputs.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from worldkit.run.infoorg_packet import PacketRun

__all__ = ["FAMILIES", "find_packet_runs", "render_tables", "table3", "table13"]

FAMILIES = ("recap", "thread", "design")
LEVEL_NAMES = {"recap": "meeting / section", "thread": "parent issue / subtask", "design": "SIG / KEP"}
CATEGORIES = ("none", "parent", "leaf", "both")


def family_of(task_id: str) -> str:
    prefix = task_id.split("-", 1)[0]
    return prefix if prefix in FAMILIES else "other"


def find_packet_runs(paths: Iterable[Path]) -> list[PacketRun]:
    """Every packet run (`result.json` beside a `workspace/`) under the given folders."""
    found = []
    for path in paths:
        if not Path(path).is_dir():
            continue
        for result in sorted(Path(path).rglob("result.json")):
            if (result.parent / "workspace").is_dir() and ".inflight" not in result.parts:
                found.append(PacketRun.model_validate_json(result.read_bytes()))
    return found


def _figures(run: PacketRun) -> tuple[float, float, float]:
    score = run.score
    if not score.valid:
        return 0.0, 0.0, 0.0
    return (100 * (score.triplet_f1 or 0.0), 100 * (score.penalty or 0.0), 100 * (score.S or 0.0))


def table3(runs: Iterable[PacketRun]) -> dict[str, Any]:
    """agent → family → {trip, pen, score, tasks}, plus `avg` over the families present."""
    per_task: dict[tuple[str, str, str], list[tuple[float, float, float]]] = defaultdict(list)
    for run in runs:
        per_task[(run.agent, family_of(run.task_id), run.task_id)].append(_figures(run))
    cells: dict[str, dict[str, dict[str, float]]] = defaultdict(dict)
    grouped: dict[tuple[str, str], list[tuple[float, float, float]]] = defaultdict(list)
    for (agent, family, _task), values in per_task.items():
        grouped[(agent, family)].append(tuple(statistics.fmean(column) for column in zip(*values)))  # type: ignore[arg-type]
    for (agent, family), tasks in grouped.items():
        trip, pen, score = (statistics.fmean(column) for column in zip(*tasks))
        cells[agent][family] = {"trip": trip, "pen": pen, "score": score, "tasks": len(tasks)}
    for agent, families in cells.items():
        present = [families[f] for f in sorted(families)]
        families["avg"] = {key: statistics.fmean(c[key] for c in present) for key in ("trip", "pen", "score")}
        families["avg"]["families"] = len(present)
    return dict(sorted(cells.items()))


def table13(runs: Iterable[PacketRun]) -> dict[str, Any]:
    """family → per level (0 parent, 1 leaf) median shares over agents, and category counts."""
    pooled: dict[tuple[str, str], dict[int, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0, 0, 0]))
    categories: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(CATEGORIES, 0))
    for run in runs:
        family = family_of(run.task_id)
        if run.score.category:
            categories[family][run.score.category] += 1
        for level, counts in run.score.levels.items():
            cell = pooled[(family, run.agent)][int(level)]
            cell[0] += counts.g
            cell[1] += counts.agreed
            cell[2] += counts.conflicting
            cell[3] += counts.unresolved
    result: dict[str, Any] = {}
    for family in sorted({f for f, _ in pooled} | set(categories)):
        levels = {}
        for level in (0, 1):
            shares = [
                [n / cells[level][0] for n in cells[level][1:]]
                for (f, _agent), cells in pooled.items() if f == family and level in cells and cells[level][0]
            ]  # fmt: skip
            if shares:
                levels[level] = {k: statistics.median(s[i] for s in shares) for i, k in enumerate(("agreed", "conflicting", "unresolved"))}
        result[family] = {
            "levels": LEVEL_NAMES.get(family, "parent / leaf"),
            "configs": len({a for f, a in pooled if f == family}),
            "parent": levels.get(0), "leaf": levels.get(1), "categories": categories[family],
        }  # fmt: skip
    return result


def _num(value: float | None, scale: str = "{:.1f}") -> str:
    return "–" if value is None else scale.format(value)


def render_tables(runs: list[PacketRun]) -> str:
    """Table 3 and Table 13 as fixed-width text."""
    t3, t13 = table3(runs), table13(runs)
    families = [f for f in (*FAMILIES, "other") if any(f in cells for cells in t3.values())]
    width = max([len("System"), *(len(a) for a in t3)])
    head1 = f"{'':<{width}}" + "".join(f" | {f.capitalize():^20}" for f in [*families, "avg"])
    head2 = f"{'System':<{width}}" + " | Trip.   Pen.  Score" * (len(families) + 1)
    lines = ["Table 3 layout: Trip. pooled triplet F1, Pen. 100(1 − E), Score S (0–100; tasks weigh equally)", head1, head2]
    for agent, cells in t3.items():
        row = f"{agent:<{width}}"
        for family in [*families, "avg"]:
            cell = cells.get(family)
            row += " | " + (f"{cell['trip']:5.1f} {cell['pen']:6.1f} {cell['score']:6.1f}" if cell else f"{'–':>5} {'–':>6} {'–':>6}")
        lines.append(row)
    tasks = {f: max((c[f]["tasks"] for c in t3.values() if f in c), default=0) for f in families}
    lines.append("tasks per family: " + ", ".join(f"{f} {n}" for f, n in tasks.items()))
    lines += ["", "Table 13 layout: triple outcomes by level (median share over systems), outputs by category",
              f"{'Family':<8} {'Parent / leaf':<24} {'Configs':>7}  parent agr. conf. unres.  leaf agr. conf. unres.  "
              "none parent leaf both"]  # fmt: skip
    for family, row in t13.items():
        parent, leaf = row["parent"] or {}, row["leaf"] or {}
        cats = row["categories"]
        lines.append(
            f"{family:<8} {row['levels']:<24} {row['configs']:>7}  "
            f"{_num(parent.get('agreed'), '{:.2f}'):>11} {_num(parent.get('conflicting'), '{:.2f}'):>5} "
            f"{_num(parent.get('unresolved'), '{:.2f}'):>6}  {_num(leaf.get('agreed'), '{:.2f}'):>9} "
            f"{_num(leaf.get('conflicting'), '{:.2f}'):>5} {_num(leaf.get('unresolved'), '{:.2f}'):>6}  "
            f"{cats['none']:>4} {cats['parent']:>6} {cats['leaf']:>4} {cats['both']:>4}"
        )
    return "\n".join(lines)

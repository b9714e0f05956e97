"""InfoOrgBench results in the paper's layouts, from packet runs' `result.json`.

Table 3 (Trip., Pen., Score per family and Avg, one row per Model × Harness), Table 4 (repeated
runs of one configuration), Table 10 (S, clade F1, exact recovery), Table 11 (model means),
Table 12 (text-only baselines, random shape averaged over its seeds), Table 13 (triple outcomes
by level, output categories), Table 16 (quality and token use) and Figure 2's data (error rates
by level). Rendering is `worldkit.report.infoorg_text`.

Aggregation is Appendix D.6's: family means weigh tasks equally (repeated runs of one task are
averaged first); Avg is the mean of the three family means and exists only when all three are
present (otherwise the missing families are named). Every output stays in its family mean: an
invalid one, or the tree a failed run left, counts with its score (0 when invalid). A task's
family is its id's prefix (`recap-007`). This module never reads anything but the run folders.
"""

from __future__ import annotations

import os
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from worldkit.run.infoorg_packet import PacketRun

__all__ = [
    "FAMILIES",
    "PacketTables",
    "config_of",
    "find_packet_runs",
    "packet_tables",
    "table3",
    "table13",
]

FAMILIES = ("recap", "thread", "design")
LEVEL_NAMES = {"recap": ("meeting", "section"), "thread": ("parent issue", "subtask"), "design": ("SIG", "KEP")}
CATEGORIES = ("none", "parent", "leaf", "both")
HARNESS_LABELS = {"react-fc": "ReAct-FC", "codex": "Codex", "pi": "Pi", "deepagents": "Deep Agents"}
BASELINE_LABELS = {"flat": "Filed flat", "fixed": "Fixed cuts", "random": "Random shape", "silhouette": "Silhouette"}
RANDOM_SEEDS = 5
"""Table 12: random shape averages five seeds per task."""
NO_MODEL = "—"


def family_of(task_id: str) -> str:
    prefix = task_id.split("-", 1)[0]
    return prefix if prefix in FAMILIES else "other"


def find_packet_runs(paths: Iterable[Path]) -> list[PacketRun]:
    """Every packet run (`result.json` beside a `workspace/`) under the given folders, with its
    `run_dir` the folder it was found in (a campaign moves runs after they write their result)."""
    found = []
    for path in paths:
        if not Path(path).is_dir():
            continue
        for result in sorted(Path(path).rglob("result.json")):
            if (result.parent / "workspace").is_dir() and ".inflight" not in result.parts:
                loaded = PacketRun.model_validate_json(result.read_bytes())
                found.append(loaded.model_copy(update={"run_dir": str(result.parent.resolve())}))
    return found


def config_of(run: PacketRun) -> tuple[str, str]:
    """(model, harness) of a run: from the harness it recorded, else from its agent name."""
    if run.agent.startswith("baseline:"):
        return NO_MODEL, "baseline:" + run.agent.split(":")[1]
    harness = run.harness or {}
    kind, _, model = run.agent.partition(":")
    name = str(harness.get("harness") or ("react-fc" if kind == "openai" else kind))
    return str(harness.get("model") or model or NO_MODEL), HARNESS_LABELS.get(name, name)


@dataclass(frozen=True)
class _Output:
    run: PacketRun
    model: str
    harness: str
    family: str

    @property
    def config(self) -> tuple[str, str]:
        return self.model, self.harness

    @property
    def figures(self) -> tuple[float, float, float]:
        """(Trip., Pen., Score) on the 0–100 scale; an invalid output scores 0 everywhere."""
        score = self.run.score
        if not score.valid:
            return 0.0, 0.0, 0.0
        return 100 * (score.triplet_f1 or 0.0), 100 * (score.penalty or 0.0), 100 * (score.S or 0.0)

    @property
    def S(self) -> float:  # noqa: N802 - the paper's symbol
        return self.figures[2]

    @property
    def tokens(self) -> int | None:
        usage = self.run.usage
        total = None if usage is None else usage.tokens_in + usage.tokens_out
        return total or None


def _outputs(runs: Iterable[PacketRun]) -> list[_Output]:
    return [_Output(run, *config_of(run), family_of(run.task_id)) for run in runs]


def _mean(values: Iterable[float]) -> float | None:
    values = list(values)
    return statistics.fmean(values) if values else None


def _task_means(outputs: Iterable[_Output], value: Any = lambda o: o.figures) -> dict[str, Any]:
    """task → the mean over its repeated outputs of `value` (a number or a tuple of numbers)."""
    per_task: dict[str, list[Any]] = defaultdict(list)
    for output in outputs:
        per_task[output.run.task_id].append(value(output))
    means = {}
    for task, values in sorted(per_task.items()):
        if isinstance(values[0], tuple):
            means[task] = tuple(statistics.fmean(column) for column in zip(*values))
        else:
            means[task] = statistics.fmean(values)
    return means


def _is_baseline(output: _Output) -> bool:
    return output.harness.startswith("baseline:")


def table3(runs: Iterable[PacketRun]) -> list[dict[str, Any]]:
    """One row per (model, harness): per family {trip, pen, score, tasks}, and `avg` (None
    unless all three families are present; `missing` names the absent ones)."""
    by_config: dict[tuple[str, str], list[_Output]] = defaultdict(list)
    for output in _outputs(runs):
        if not _is_baseline(output):
            by_config[output.config].append(output)
    rows = []
    for (model, harness), outputs in sorted(by_config.items()):
        cells: dict[str, Any] = {}
        for family in sorted({o.family for o in outputs}):
            tasks = _task_means(o for o in outputs if o.family == family)
            trip, pen, score = (statistics.fmean(column) for column in zip(*tasks.values()))
            cells[family] = {"trip": trip, "pen": pen, "score": score, "tasks": len(tasks)}
        missing = [f for f in FAMILIES if f not in cells]
        avg = None if missing else {k: statistics.fmean(cells[f][k] for f in FAMILIES) for k in ("trip", "pen", "score")}
        rows.append({"model": model, "harness": harness, "families": cells, "avg": avg, "missing": missing})
    return rows


def table4(runs: Iterable[PacketRun], references: Mapping[str, Mapping[str, Sequence[str]]] | None = None) -> list[dict[str, Any]]:
    """Per configuration with repeated runs of a task: each repeat's mean, spread, |ΔS|,
    share of tasks whose runs span more than 10 points, best-of-N (uses the reference: an upper
    bound), consensus (per task the run whose tree agrees most with the others'; no reference)
    and vote (`worldkit.report.infoorg_vote`: the majority co-placement tree, scored against the
    task's frozen reference from `references`; None where one is missing), by family and over
    all tasks."""
    by_config: dict[tuple[str, str], list[_Output]] = defaultdict(list)
    for output in _outputs(runs):
        if not _is_baseline(output):
            by_config[output.config].append(output)
    result = []
    for (model, harness), outputs in sorted(by_config.items()):
        per_task: dict[str, list[_Output]] = defaultdict(list)
        for output in sorted(outputs, key=lambda o: o.run.run_id):
            per_task[output.run.task_id].append(output)
        repeats = min((len(v) for v in per_task.values()), default=0)
        if repeats < 2:
            continue
        columns: dict[str, dict[str, Any]] = {}
        for family in ("all", *FAMILIES):
            tasks = {t: v[:repeats] for t, v in per_task.items() if family in ("all", family_of(t))}
            if tasks:
                columns[family] = _repeat_figures(tasks, repeats, references or {})
        result.append({"model": model, "harness": harness, "repeats": repeats, "tasks": len(per_task),
                       "columns": columns})  # fmt: skip
    return result


def _repeat_figures(tasks: dict[str, list[_Output]], repeats: int,
                    references: Mapping[str, Mapping[str, Sequence[str]]]) -> dict[str, Any]:  # fmt: skip
    scores = {t: [o.S for o in outs] for t, outs in tasks.items()}
    means = [statistics.fmean(s[k] for s in scores.values()) for k in range(repeats)]
    pairs = [(i, j) for i in range(repeats) for j in range(i + 1, repeats)]
    delta = statistics.fmean(abs(s[i] - s[j]) for s in scores.values() for i, j in pairs)
    consensus = [_consensus(outs) for outs in tasks.values()]
    return {
        "runs": means,
        "spread": max(means) - min(means),
        "abs_delta": delta,
        "range_over_10": sum(max(s) - min(s) > 10 for s in scores.values()) / len(scores),
        "best_of": statistics.fmean(max(s) for s in scores.values()),
        "consensus": None if any(c is None for c in consensus) else statistics.fmean(consensus),  # type: ignore[arg-type]
        "vote": _vote(tasks, references),
    }


def _vote(tasks: dict[str, list[_Output]], references: Mapping[str, Mapping[str, Sequence[str]]]) -> float | None:
    """Mean S × 100 of the tasks' Vote trees; None unless every task has its reference and trees."""
    from worldkit.infoorg.scoring import score_trees
    from worldkit.report.infoorg_vote import vote_tree

    scores = []
    for task, outputs in tasks.items():
        trees = [_tree(o.run) for o in outputs]
        if task not in references or any(t is None for t in trees):
            return None
        reference = references[task]
        scores.append(100 * (score_trees(reference, vote_tree(trees, reference)).S or 0.0))  # type: ignore[arg-type]
    return statistics.fmean(scores)


def _tree(run: PacketRun) -> dict[str, tuple[str, ...]] | None:
    """record id → folder path of the tree a run left on disk (None if its folder is gone)."""
    root = Path(run.run_dir) / "workspace"
    if not root.is_dir():
        return None
    tree = {}
    for current, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != ".organizer")
        parts = Path(current).relative_to(root).parts
        for name in filenames:
            if name.endswith(".txt"):
                tree[name[:-4]] = parts
    return tree


def _consensus(outputs: Sequence[_Output]) -> float | None:
    """S of the output whose tree agrees most (level-balanced F1, each other tree as reference)."""
    from worldkit.infoorg.scoring import score_trees

    trees = [_tree(o.run) for o in outputs]
    if any(t is None for t in trees):
        return None

    def agreement(i: int) -> float:
        total = 0.0
        for j, other in enumerate(trees):
            if j != i and set(other) == set(trees[i]):  # type: ignore[arg-type]
                total += score_trees(other, trees[i]).f1_bal or 0.0  # type: ignore[arg-type]
        return total

    best = max(range(len(outputs)), key=lambda i: (agreement(i), -i))
    return outputs[best].S


def table10(runs: Iterable[PacketRun]) -> list[dict[str, Any]]:
    """Per family and configuration: mean S, mean clade F1 (0–100) and exact recoveries."""
    grouped: dict[tuple[str, str, str], list[_Output]] = defaultdict(list)
    for output in _outputs(runs):
        grouped[(output.family, *output.config)].append(output)
    rows = []
    for (family, model, harness), outputs in sorted(grouped.items(), key=lambda kv: (_family_rank(kv[0][0]), kv[0])):
        clades = [100 * (o.run.score.clade_f1 or 0.0) if o.run.score.valid else 0.0 for o in outputs]
        rows.append({"family": family, "model": model, "harness": harness, "outputs": len(outputs),
                     "S": statistics.fmean(o.S for o in outputs), "clade_f1": statistics.fmean(clades),
                     "exact": sum(bool(o.run.score.valid and o.run.score.exact) for o in outputs)})  # fmt: skip
    return rows


def _family_rank(family: str) -> int:
    return FAMILIES.index(family) if family in FAMILIES else len(FAMILIES)


def table11(rows3: list[dict[str, Any]]) -> dict[str, Any]:
    """Mean S of each model over its Table 3 rows' Avg (rows without all three families are
    left out and named)."""
    means: dict[str, list[float]] = defaultdict(list)
    left_out: dict[str, list[str]] = defaultdict(list)
    for row in rows3:
        if row["avg"] is None:
            left_out[row["model"]].append(f"{row['harness']} (missing {', '.join(row['missing'])})")
        else:
            means[row["model"]].append(row["avg"]["score"])
    models = sorted(means, key=lambda m: (-statistics.fmean(means[m]), m))
    return {"models": [{"model": m, "mean_S": statistics.fmean(means[m]), "configs": len(means[m])} for m in models],
            "left_out": dict(sorted(left_out.items()))}  # fmt: skip


def table12(runs: Iterable[PacketRun]) -> dict[str, Any]:
    """Baselines × family: mean S; random shape averages its seeds per task first (Table 12:
    five), and the seeds found per task are reported."""
    cells: dict[str, dict[str, float]] = defaultdict(dict)
    seeds: dict[str, int] = {}
    by_name: dict[str, list[_Output]] = defaultdict(list)
    for output in _outputs(runs):
        if _is_baseline(output):
            by_name[output.harness.split(":", 1)[1]].append(output)
    for name, outputs in sorted(by_name.items()):
        for family in sorted({o.family for o in outputs}):
            tasks = _task_means((o for o in outputs if o.family == family), lambda o: o.S)
            cells[name][family] = statistics.fmean(tasks.values())
        if name == "random":
            per_task: dict[str, set[str]] = defaultdict(set)
            for output in outputs:
                per_task[output.run.task_id].add(output.run.agent)
            seeds["min"] = min(len(s) for s in per_task.values())
            seeds["max"] = max(len(s) for s in per_task.values())
    return {"baselines": dict(cells), "random_seeds": seeds or None}


def table13(runs: Iterable[PacketRun]) -> dict[str, Any]:
    """family → per level (0 parent, 1 leaf) median shares over configurations (triples pooled
    per configuration), and category counts over all outputs; baselines left out."""
    pooled: dict[tuple[str, tuple[str, str]], dict[int, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0, 0, 0]))
    categories: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(CATEGORIES, 0))
    for output in _outputs(runs):
        if _is_baseline(output):
            continue
        if output.run.score.category:
            categories[output.family][output.run.score.category] += 1
        for level, counts in output.run.score.levels.items():
            cell = pooled[(output.family, output.config)][int(level)]
            for i, n in enumerate((counts.g, counts.agreed, counts.conflicting, counts.unresolved)):
                cell[i] += n
    result: dict[str, Any] = {}
    for family in sorted({f for f, _ in pooled} | set(categories), key=lambda f: (_family_rank(f), f)):
        levels = {}
        for level in (0, 1):
            shares = [
                [n / cells[level][0] for n in cells[level][1:]]
                for (f, _config), cells in pooled.items() if f == family and level in cells and cells[level][0]
            ]  # fmt: skip
            if shares:
                levels[level] = {k: statistics.median(s[i] for s in shares) for i, k in enumerate(("agreed", "conflicting", "unresolved"))}
        result[family] = {
            "levels": " / ".join(LEVEL_NAMES.get(family, ("parent", "leaf"))),
            "configs": len({c for f, c in pooled if f == family}),
            "parent": levels.get(0), "leaf": levels.get(1), "categories": categories[family],
        }  # fmt: skip
    return result


def figure2(runs: Iterable[PacketRun]) -> list[dict[str, Any]]:
    """Figure 2's bars: per family and level, the median over configurations of the share of
    reference-distinguished triples the output gets wrong (conflicting, unresolved), and the
    share of outputs with at least one error at that level; baselines left out."""
    per_config: dict[tuple[str, int, tuple[str, str]], list[int]] = defaultdict(lambda: [0, 0, 0])
    erring: dict[tuple[str, int], list[bool]] = defaultdict(list)
    for output in _outputs(runs):
        if _is_baseline(output) or not output.run.score.valid:
            continue
        for level, counts in output.run.score.levels.items():
            if int(level) > 1 or not counts.g:
                continue
            cell = per_config[(output.family, int(level), output.config)]
            cell[0] += counts.g
            cell[1] += counts.conflicting
            cell[2] += counts.unresolved
            erring[(output.family, int(level))].append(counts.conflicting + counts.unresolved > 0)
    bars = []
    for family, level in sorted(erring, key=lambda k: (_family_rank(k[0]), k)):
        cells = [c for (f, lv, _), c in per_config.items() if (f, lv) == (family, level)]
        bars.append({
            "family": family, "level": "parent" if level == 0 else "leaf",
            "label": LEVEL_NAMES.get(family, ("parent", "leaf"))[level], "configs": len(cells),
            "conflicting": statistics.median(c[1] / c[0] for c in cells),
            "unresolved": statistics.median(c[2] / c[0] for c in cells),
            "outputs_with_error": sum(erring[(family, level)]) / len(erring[(family, level)]),
        })  # fmt: skip
    return bars


def table16(runs: Iterable[PacketRun]) -> dict[str, Any]:
    """Per model and family: mean S and the median over configurations of mean tokens per task
    (thousands), over configurations whose usage is recorded for every task of the family."""
    outputs = [o for o in _outputs(runs) if not _is_baseline(o)]
    family_tasks = {f: {o.run.task_id for o in outputs if o.family == f} for f in FAMILIES}
    cells: dict[str, dict[str, dict[str, float]]] = defaultdict(dict)
    unrecorded: list[str] = []
    by_config: dict[tuple[str, str], list[_Output]] = defaultdict(list)
    for output in outputs:
        by_config[output.config].append(output)
    for family in FAMILIES:
        per_model: dict[str, list[tuple[float, float]]] = defaultdict(list)
        for (model, harness), mine in sorted(by_config.items()):
            mine = [o for o in mine if o.family == family]
            if not mine:
                continue
            tasks = {o.run.task_id for o in mine}
            if tasks != family_tasks[family] or any(o.tokens is None for o in mine):
                unrecorded.append(f"{model} · {harness} ({family})")
                continue
            scores = _task_means(mine, lambda o: o.S)
            tokens = _task_means(mine, lambda o: float(o.tokens or 0))
            per_model[model].append((statistics.fmean(scores.values()), statistics.fmean(tokens.values()) / 1000))
        for model, values in per_model.items():
            cells[model][family] = {"S": statistics.fmean(v[0] for v in values),
                                    "ktokens": statistics.median(v[1] for v in values), "configs": len(values)}  # fmt: skip
    return {"models": dict(sorted(cells.items())), "unrecorded": unrecorded}


@dataclass(frozen=True)
class PacketTables:
    """Every InfoOrgBench table and Figure 2's data over one set of packet runs."""

    runs: int
    failed: int
    table3: list[dict[str, Any]]
    table4: list[dict[str, Any]]
    table10: list[dict[str, Any]]
    table11: dict[str, Any]
    table12: dict[str, Any]
    table13: dict[str, Any]
    table16: dict[str, Any]
    figure2: list[dict[str, Any]]
    vote_notes: list[str]
    """Why Table 4's Vote could not be scored for some tasks (their frozen packets not found)."""

    def as_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


def packet_tables(runs: Sequence[PacketRun], packets: Sequence[Path] = ()) -> PacketTables:
    """All the tables over `runs` (any mix of models, harnesses, baselines and families).

    Table 4's Vote is scored against each task's reference as the campaign holding its runs
    froze it (`worldkit.report.infoorg_vote.frozen_references`; `packets` adds packet folders to
    look in); runs outside a campaign get no Vote."""
    from worldkit.report.infoorg_vote import frozen_references

    rows3 = table3(runs)
    references, vote_notes = frozen_references([Path(r.run_dir) for r in runs], packets)
    return PacketTables(
        runs=len(runs), failed=sum(r.status == "failed" for r in runs),
        table3=rows3, table4=table4(runs, references), table10=table10(runs), table11=table11(rows3),
        table12=table12(runs), table13=table13(runs), table16=table16(runs), figure2=figure2(runs),
        vote_notes=vote_notes,
    )  # fmt: skip

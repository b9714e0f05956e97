"""Agreement between two sets of labels: percent agreement, Cohen's κ, Gwet's AC1, cluster bootstrap.

Used wherever an instrument is audited: a judge against labelled counterfactuals
(`worldkit.grade.calibration`), two human coders against each other and against the automated
verdicts (`worldkit.audit`). Cohen's κ is scikit-learn's `cohen_kappa_score`; what the libraries
lack is written here: Gwet's AC1 (Gwet 2008, two raters) and the percentile bootstrap that
resamples whole clusters (tasks) with replacement, as the paper's intervals do. The bootstrap
sums per-cluster contingency tables and computes each statistic from the table (thousands of
resamples in well under a second); the point estimates are scikit-learn's κ and the label-level AC1.

AC1 for two raters over categories k = 1..K: pa = share of items on which they agree;
πk = mean of the two raters' shares of category k; pe = Σk πk(1 − πk) / (K − 1);
AC1 = (pa − pe) / (1 − pe). K counts every declared category, not only those observed.

Pure and seeded: the same labels, clusters and seed give the same figures. Never reads a run.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "Agreement",
    "agreement",
    "cluster_interval",
    "cohen_kappa",
    "gwet_ac1",
    "percent_agreement",
    "table_ac1",
    "table_agreement",
    "table_kappa",
]

Labels = Sequence[str]


def percent_agreement(a: Labels, b: Labels) -> float:
    """Share of items with the same label (nan when there are none)."""
    _same_length(a, b)
    return sum(x == y for x, y in zip(a, b, strict=True)) / len(a) if a else math.nan


def cohen_kappa(a: Labels, b: Labels, categories: Sequence[str] | None = None) -> float:
    """Cohen's κ (scikit-learn); nan when it is undefined (both raters use one category only)."""
    from sklearn.metrics import cohen_kappa_score

    _same_length(a, b)
    if not a or len(set(a) | set(b)) < 2:
        return math.nan
    labels = sorted(set(categories or ()) | set(a) | set(b))
    with np.errstate(divide="ignore", invalid="ignore"):
        value = float(cohen_kappa_score(list(a), list(b), labels=labels))
    return value


def gwet_ac1(a: Labels, b: Labels, categories: Sequence[str] | None = None) -> float:
    """Gwet's AC1 for two raters (see the module docstring); nan for no items or one category."""
    _same_length(a, b)
    cats = sorted(set(categories or ()) | set(a) | set(b))
    if not a or len(cats) < 2:
        return math.nan
    n = len(a)
    pa = percent_agreement(a, b)
    pi = [(sum(x == k for x in a) + sum(y == k for y in b)) / (2 * n) for k in cats]
    pe = sum(p * (1 - p) for p in pi) / (len(cats) - 1)
    return (pa - pe) / (1 - pe) if pe < 1 else math.nan


def table_agreement(table: np.ndarray) -> float:
    """Percent agreement from a K×K contingency table (rater A rows, rater B columns)."""
    n = table.sum()
    return float(np.trace(table) / n) if n else math.nan


def table_kappa(table: np.ndarray) -> float:
    """Cohen's κ from a contingency table (the bootstrap's fast path; equals scikit-learn's)."""
    n = table.sum()
    if not n:
        return math.nan
    po = np.trace(table) / n
    pe = float(table.sum(axis=1) @ table.sum(axis=0)) / n**2
    return float((po - pe) / (1 - pe)) if pe < 1 else math.nan


def table_ac1(table: np.ndarray) -> float:
    """Gwet's AC1 from a contingency table (K = the table's size)."""
    n = table.sum()
    k = table.shape[0]
    if not n or k < 2:
        return math.nan
    pi = (table.sum(axis=1) + table.sum(axis=0)) / (2 * n)
    pe = float((pi * (1 - pi)).sum()) / (k - 1)
    return float((np.trace(table) / n - pe) / (1 - pe)) if pe < 1 else math.nan


def cluster_interval(
    a: Labels,
    b: Labels,
    clusters: Sequence[str],
    statistic: Callable[[np.ndarray], float],
    categories: Sequence[str] | None = None,
    *,
    resamples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[float, float] | None:
    """Percentile interval of `statistic` (of a contingency table) over resamples of whole
    clusters with replacement: each resample sums the drawn clusters' tables.

    None when there are fewer than two clusters or no resample gives a defined value."""
    _same_length(a, b)
    if len(clusters) != len(a):
        raise ValueError("one cluster per item")
    cats = sorted(set(categories or ()) | set(a) | set(b))
    index = {c: i for i, c in enumerate(cats)}
    names = sorted(set(clusters))
    if len(names) < 2 or resamples < 1:
        return None
    position = {name: i for i, name in enumerate(names)}
    tables = np.zeros((len(names), len(cats), len(cats)))
    for x, y, cluster in zip(a, b, clusters, strict=True):
        tables[position[cluster], index[x], index[y]] += 1
    rng = np.random.default_rng(seed)
    picked = rng.integers(0, len(names), size=(resamples, len(names)))
    values = [v for row in picked if not math.isnan(v := statistic(tables[row].sum(axis=0)))]
    if not values:
        return None
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return float(low), float(high)


@dataclass(frozen=True)
class Agreement:
    """Two label sets compared: the figures and their cluster-bootstrap intervals."""

    n: int
    clusters: int
    agreement: float
    kappa: float
    ac1: float
    agreement_ci: tuple[float, float] | None
    kappa_ci: tuple[float, float] | None
    ac1_ci: tuple[float, float] | None

    def as_json(self) -> dict[str, object]:
        def num(x: float) -> float | None:
            return None if math.isnan(x) else round(x, 6)

        def ci(x: tuple[float, float] | None) -> list[float] | None:
            return None if x is None else [round(x[0], 6), round(x[1], 6)]

        return {"n": self.n, "clusters": self.clusters, "agreement": num(self.agreement), "kappa": num(self.kappa),
                "ac1": num(self.ac1), "agreement_ci": ci(self.agreement_ci), "kappa_ci": ci(self.kappa_ci),
                "ac1_ci": ci(self.ac1_ci)}  # fmt: skip

    def line(self) -> str:
        def fmt(x: float, ci: tuple[float, float] | None, pct: bool = False) -> str:
            if math.isnan(x):
                return "undefined"
            show = (lambda v: f"{100 * v:.1f}%") if pct else (lambda v: f"{v:.2f}")
            return show(x) + (f" [{show(ci[0])}, {show(ci[1])}]" if ci else "")

        return (f"n={self.n}  agreement {fmt(self.agreement, self.agreement_ci, True)}  "
                f"κ {fmt(self.kappa, self.kappa_ci)}  AC1 {fmt(self.ac1, self.ac1_ci)}")  # fmt: skip


def agreement(
    a: Labels,
    b: Labels,
    clusters: Sequence[str],
    categories: Sequence[str] | None = None,
    *,
    resamples: int = 2000,
    seed: int = 0,
) -> Agreement:
    """Agreement, κ and AC1 of two label sets, with cluster-bootstrap 95% intervals."""
    cats = list(categories or ())

    def interval(statistic: Callable[[np.ndarray], float]) -> tuple[float, float] | None:
        return cluster_interval(a, b, clusters, statistic, cats, resamples=resamples, seed=seed)

    return Agreement(
        n=len(a), clusters=len(set(clusters)), agreement=percent_agreement(a, b), kappa=cohen_kappa(a, b, cats),
        ac1=gwet_ac1(a, b, cats), agreement_ci=interval(table_agreement), kappa_ci=interval(table_kappa),
        ac1_ci=interval(table_ac1),
    )  # fmt: skip


def _same_length(a: Labels, b: Labels) -> None:
    if len(a) != len(b):
        raise ValueError(f"two label lists of different lengths ({len(a)} and {len(b)})")

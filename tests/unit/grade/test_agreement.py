"""Agreement statistics against values computed by hand, and the cluster bootstrap's properties."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score

from worldkit.grade.agreement import (
    agreement,
    cluster_interval,
    cohen_kappa,
    gwet_ac1,
    percent_agreement,
    table_ac1,
    table_kappa,
)

# 10 items: both raters say P 7 times; they agree on 6 P and 2 F.
A = "P P P P P P P F F F".split()
B = "P P P P P P F F F P".split()


def test_two_categories_by_hand() -> None:
    # po = 8/10; pe(κ) = .7·.7 + .3·.3 = .58; κ = .22/.42 = 11/21
    # π = (.7, .3); pe(AC1) = 2·.7·.3 / 1 = .42; AC1 = .38/.58 = 19/29
    assert percent_agreement(A, B) == pytest.approx(0.8)
    assert cohen_kappa(A, B) == pytest.approx(11 / 21)
    assert gwet_ac1(A, B) == pytest.approx(19 / 29)


def test_three_categories_by_hand() -> None:
    a, b = list("xxxyyz"), list("xxyyzz")
    # po = 4/6; pe(κ) = (3·2 + 2·2 + 1·2)/36 = 1/3; κ = 1/2
    # π = (5/12, 1/3, 1/4); pe(AC1) = (35 + 32 + 27)/144 / 2 = 47/144; AC1 = 49/97
    assert cohen_kappa(a, b) == pytest.approx(0.5)
    assert gwet_ac1(a, b) == pytest.approx(49 / 97)


def test_a_declared_category_nobody_used_still_counts_for_ac1() -> None:
    # K = 3 with a third category unused: π = (.7, .3, 0); pe = .42 / 2 = .21; AC1 = .59/.79
    assert gwet_ac1(A, B, ["P", "F", "U"]) == pytest.approx(0.59 / 0.79)


def test_undefined_is_nan_not_a_number_made_up() -> None:
    assert math.isnan(cohen_kappa(["P", "P"], ["P", "P"]))
    assert math.isnan(gwet_ac1([], []))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abc"), st.sampled_from("abc")), min_size=2, max_size=40))
def test_the_bootstraps_table_statistics_equal_the_label_statistics(pairs) -> None:
    import numpy as np

    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    cats = sorted(set(a) | set(b))
    table = np.zeros((len(cats), len(cats)))
    for x, y in pairs:
        table[cats.index(x), cats.index(y)] += 1
    if len(cats) >= 2:
        expected = cohen_kappa_score(a, b)
        assert (math.isnan(expected) and math.isnan(table_kappa(table))) or table_kappa(table) == pytest.approx(expected)
        assert table_ac1(table) == pytest.approx(gwet_ac1(a, b)) or math.isnan(gwet_ac1(a, b))


def test_cluster_bootstrap_is_seeded_and_resamples_whole_clusters() -> None:
    clusters = ["t1"] * 4 + ["t2"] * 3 + ["t3"] * 3
    first = agreement(A, B, clusters, ["P", "F"], resamples=500, seed=7)
    again = agreement(A, B, clusters, ["P", "F"], resamples=500, seed=7)
    assert first == again
    assert first.agreement_ci is not None and first.agreement_ci[0] <= 0.8 <= first.agreement_ci[1]
    # t1 is all agreement; t2 and t3 each hold one disagreement: every resample's agreement is
    # a mix of whole clusters (values 1, 2/3), never a per-item mixture such as 0.9.
    from worldkit.grade.agreement import table_agreement

    low, high = cluster_interval(A, B, clusters, table_agreement, resamples=500, seed=1) or (0, 0)
    assert low >= 0.6 - 1e-9 and high <= 1.0
    assert cluster_interval(A, B, ["one"] * 10, table_agreement) is None  # a single cluster has no spread

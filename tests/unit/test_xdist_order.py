"""The suite's xdist ordering (tests/xdist_order.py): long tests open the worksteal slices, longest
first and balanced between them; every other test keeps its place in order."""

from __future__ import annotations

from types import SimpleNamespace

from tests.xdist_order import DIST_KEY, order, reorder, slice_sizes


def test_slices_are_what_worksteal_hands_out_first() -> None:
    assert slice_sizes(10, 2) == [5, 5]
    assert slice_sizes(11, 2) == [5, 6]
    assert slice_sizes(10, 3) == [3, 3, 4]
    assert slice_sizes(1, 2) == [0, 1]
    assert sum(slice_sizes(1987, 4)) == 1987


def test_long_tests_open_each_slice_longest_first_and_balanced() -> None:
    weights = [0, 0, 30, 0, 100, 0, 0, 60, 0, 50, 0, 0]
    got = order(weights, 2)
    assert sorted(got) == list(range(len(weights)))
    first, second = got[:6], got[6:]
    # 100 | 60, then 50 joins the lighter slice (60), then 30 the lighter one (100 vs 110)
    assert first[:2] == [4, 2] and second[:2] == [7, 9]
    rest = [i for i in got if weights[i] == 0]
    assert rest == sorted(rest)  # the others keep their order


def test_more_long_tests_than_a_slice_holds() -> None:
    weights = [5, 4, 3, 2, 1, 0]
    got = order(weights, 2)
    assert sorted(got) == list(range(6))
    assert got[:3] == [0, 3, 4] and got[3:] == [1, 2, 5]


def test_only_worksteal_workers_reorder() -> None:
    items = list("abc")  # not items at all: reordering them would fail

    def run(workerinput: dict | None) -> list[str]:
        config = SimpleNamespace() if workerinput is None else SimpleNamespace(workerinput=workerinput)
        got = list(items)
        reorder(config, got)  # type: ignore[arg-type]
        return got

    assert run(None) == items
    assert run({"workercount": 2, DIST_KEY: "load"}) == items
    assert run({"workercount": 1, DIST_KEY: "worksteal"}) == items


def test_a_slow_marked_test_opens_a_slice() -> None:
    def item(name: str, slow: bool) -> SimpleNamespace:
        return SimpleNamespace(nodeid=f"tests/x.py::{name}", get_closest_marker=lambda mark: object() if slow and mark == "slow" else None)

    items = [item("a", False), item("b", False), item("c", True)]
    reorder(SimpleNamespace(workerinput={"workercount": 2, DIST_KEY: "worksteal"}), items)  # type: ignore[arg-type]
    assert [i.nodeid[-1] for i in items] == ["c", "a", "b"]

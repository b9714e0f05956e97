"""date-conformance on worlds written by newcomers: probes stay inside the world's history, choose
among what a seat can see, and explain a change by everything that took effect that day."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from tests.builders import WorldSpec
from tests.unit.verify.conftest import Frozen, freeze_copy
from worldkit.check_result import CheckResult
from worldkit.verify.build import Built, build_projection
from worldkit.verify.checks import REGISTRY, run_one
from worldkit.verify.runner import open_context


def _run(frozen: Frozen, **options) -> CheckResult:
    with open_context(frozen.world, manifests=frozen.manifests, repeats=2, **options) as ctx:
        return run_one(REGISTRY["date-conformance"](), ctx)


def test_a_first_item_alone_on_the_first_day_is_not_probed(tmp_path: Path) -> None:
    """The world's earliest item is alone on its day: the day before it is outside the world's
    history, so it cannot be probed (it used to be chosen, and the build of the eve was refused)."""
    spec = WorldSpec()
    spec.item("records", "APP-1")["events"][0]["date"] = "2024-12-01"  # earliest item, an approval, alone
    result = _run(freeze_copy(tmp_path, spec))
    assert result.status == "pass", (result.reason, result.items)
    starts = dt.date(2024, 12, 1)
    assert all(dt.date.fromisoformat(p.rsplit(" on ", 1)[1]) > starts for p in result.counts["probes"])
    assert result.counts["record"] == "CC-1"


def test_a_seat_whose_records_tools_appear_with_its_first_record(tmp_path: Path) -> None:
    """CC-1 is the seat's first record: its tool bundle gains the records tools that day, which is
    what took effect, not a leak."""
    spec = WorldSpec()
    spec.data["records"] = [r for r in spec.data["records"] if r["id"] != "APP-1"]
    result = _run(freeze_copy(tmp_path, spec))
    assert result.counts["record"] == "CC-1" and result.counts["seat"] == "S1"
    assert result.status == "pass", [i.line() for i in result.items]


def test_a_verifier_only_document_does_not_spoil_a_candidate(tmp_path: Path) -> None:
    """A verifier-only document dated the same day as APP-1 changes no seat's view: APP-1 is still
    the only change its seat sees that day, and the best probe."""
    spec = WorldSpec()
    spec.data["documents"].append({"id": "D-GRADER", "path": "Grading/key.md", "system": "drive", "text": "key\n",
                                   "visible_from": "2025-06-10", "verifier_only": True})  # fmt: skip
    result = _run(freeze_copy(tmp_path, spec))
    assert result.status == "pass", [i.line() for i in result.items]
    assert result.counts["record"] == "APP-1"


def test_a_world_dated_on_one_day_is_skipped_with_the_reason(tmp_path: Path) -> None:
    spec = WorldSpec()
    for doc in spec.data["documents"]:
        doc["visible_from"] = "2025-01-01"
    for rec in spec.data["records"]:
        for event in rec["events"]:
            event["date"] = "2025-01-01"
    for msg in spec.data["messages"]:
        msg["date"] = "2025-01-01"
    result = _run(freeze_copy(tmp_path, spec))
    assert result.status == "skip"
    assert result.reason is not None and "no item a seat can see is dated after the world's first day" in result.reason
    assert "2025-01-01" in result.reason


def _leaky_builder(package, rev: str, date: str, seat: str, work: Path) -> Built:
    """A timeline bug: every projection is built a month late."""
    later = (dt.date.fromisoformat(date) + dt.timedelta(days=30)).isoformat()
    built = build_projection(package, rev, later, seat, work)
    built.date = date
    return built


def test_a_failure_names_the_world_file_and_item_never_worldkit_code(mini: Frozen) -> None:
    result = _run(mini, builder=_leaky_builder)
    assert result.status == "fail" and result.fix is not None
    assert "worldkit." not in result.fix and "data/all.yaml (record APP-1)" in result.fix
    early = next(i for i in result.items if i.kind == "visible-before" and i.path == "records/qms/APP-1.json")
    assert early.where == "data/all.yaml (record APP-1)"
    assert early.detail == "record APP-1 is dated 2025-06-10 but the seat sees it the day before"

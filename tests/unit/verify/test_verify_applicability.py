"""Checks that apply to every world: not-applicable seeded cases, no-op mutations, date-conformance
in a world with no dated record."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from tests.builders import WorldSpec
from tests.unit.verify.conftest import Frozen, freeze_copy
from worldkit.verify.build import Built, build_projection
from worldkit.verify.checks import REGISTRY, run_one
from worldkit.verify.inject import Injection
from worldkit.verify.report import render_text
from worldkit.verify.runner import VerifyReport, open_context
from worldkit.verify.seeded import CASES, run_seeded


def _date_conformance(frozen: Frozen, **options):
    with open_context(frozen.world, manifests=frozen.manifests, repeats=1, **options) as ctx:
        return run_one(REGISTRY["date-conformance"](), ctx)


def _leaky(package, rev: str, date: str, seat: str, work: Path) -> Built:
    """A timeline bug: every projection is built a month late."""
    built = build_projection(package, rev, (dt.date.fromisoformat(date) + dt.timedelta(days=30)).isoformat(), seat, work)
    built.date = date
    return built


@pytest.fixture()
def no_records(tmp_path: Path) -> Frozen:
    spec = WorldSpec()
    spec.data["records"] = []
    return freeze_copy(tmp_path, spec)


def test_date_conformance_tests_a_document_when_no_record_is_dated(no_records: Frozen) -> None:
    result = _date_conformance(no_records)
    assert result.status == "pass", result.items
    assert result.counts["item"].startswith(("document ", "mail message ")) and result.counts["record"] is None
    leaky = _date_conformance(no_records, builder=_leaky)
    assert leaky.status == "fail" and "visible-before" in {i.kind for i in leaky.items}


def test_date_conformance_tests_a_mail_when_nothing_else_is_dated(tmp_path: Path) -> None:
    spec = WorldSpec()
    spec.data["records"], spec.data["documents"] = [], []
    spec.world["revisions"][1].pop("update")
    frozen = freeze_copy(tmp_path, spec)
    result = _date_conformance(frozen)
    assert result.status == "pass" and result.counts["item"].startswith("mail message ")
    assert _date_conformance(frozen, builder=_leaky).status == "fail"


def test_seeded_cases_that_do_not_apply_are_not_applicable_never_missed(tmp_path: Path) -> None:
    frozen = freeze_copy(tmp_path)  # no overlays, no store
    chosen = tuple(c for c in CASES if c.name in ("renamed-verifier-file", "tampered-projection-digest"))
    seeded = run_seeded(frozen.world, manifests=frozen.manifests, cases=chosen).as_json()
    rows = {c["name"]: c for c in seeded["cases"]}
    assert rows["renamed-verifier-file"]["applicable"] is False
    assert "no task overlays" in rows["renamed-verifier-file"]["reason"]
    assert rows["tampered-projection-digest"]["detected"] is True
    assert (seeded["attempted"], seeded["detected"], seeded["not_applicable"]) == (1, 1, 1)
    report = VerifyReport(world="mini", seeded=seeded)
    text = render_text(report)
    assert "MISSED" not in text
    assert "  n/a     renamed-verifier-file          not applicable: " in text
    assert "seeded: attempted 1 / detected 1 (1 not applicable)" in text
    assert int(report.exit_code) == 0


def test_a_seeded_case_whose_check_skips_is_not_applicable(tmp_path: Path) -> None:
    from worldkit.verify.seeded import Case

    def touch_nothing_the_check_reads(p, copy, rng) -> Injection:
        return Injection("an event-log fault with no log to check", touches={"log"})

    frozen = freeze_copy(tmp_path)
    seeded = run_seeded(frozen.world, manifests=frozen.manifests,
                        cases=(Case("log-fault", "event-logs", touch_nothing_the_check_reads),)).as_json()  # fmt: skip
    [row] = seeded["cases"]
    assert row["applicable"] is False and row["reason"].startswith("event-logs does not apply to this world: ")
    assert seeded["attempted"] == 0


def test_mutations_that_change_nothing_are_drawn_again_not_counted(tmp_path: Path, monkeypatch) -> None:
    from worldkit.verify import mutations

    def same_value(p, copy, rng) -> Injection:
        return Injection("set a field to the value it already has", touches={"world"})

    monkeypatch.setitem(mutations.MUTATORS, "no-op", same_value)
    frozen = freeze_copy(tmp_path)
    report = mutations.run_mutations(frozen.world, 3, 4, manifests=frozen.manifests,
                                     kinds=["no-op", "manifest-byte-flip"]).as_json()  # fmt: skip
    assert report["attempted"] == 3 and report["by_kind"].keys() == {"manifest-byte-flip"}
    assert report["no_change_redrawn"] and all(m.startswith("no-op: ") for m in report["no_change_redrawn"])
    assert report["undetected_benign"] == [] and report["detected"] == 3

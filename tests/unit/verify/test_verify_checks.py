"""Each check passes on a sound world and fails, naming the item and the fix, on the fault it is for."""

from __future__ import annotations

import datetime as dt
import json
import random
from pathlib import Path

import pytest

from tests.builders import WorldSpec
from tests.unit.verify.conftest import DATE, Frozen, freeze_copy
from worldkit.check_result import CheckResult
from worldkit.materialize.manifest import Manifest
from worldkit.verify.build import Built, build_projection
from worldkit.verify.checks import REGISTRY, check_ids, run_one
from worldkit.verify.inject import edit_changeset, rewrite_frozen
from worldkit.verify.runner import open_context, verify_world
from worldkit.verify.scratch import ScratchCopy
from worldkit.world import load_world

OVERLAY_CHECKS = {"task-pairs-identical", "staged-workspaces", "package-integrity", "overlay-locks", "separation",
                  "evidence-sufficiency", "rubric-sanity", "reference-access", "rubric-discrimination",
                  "rubric-mutation"}


def run(frozen: Frozen, check_id: str, **options) -> CheckResult:
    with open_context(frozen.world, manifests=frozen.manifests, overlays=frozen.overlays, repeats=2, **options) as ctx:
        return run_one(REGISTRY[check_id](), ctx)


def _copy(frozen: Frozen) -> ScratchCopy:
    return ScratchCopy(frozen.world.parent, frozen.world, frozen.manifests, frozen.overlays)


def test_at_least_twelve_checks_with_id_purpose_and_fix() -> None:
    ids = check_ids()
    assert len(ids) >= 12 and len(set(ids)) == len(ids)
    for check_id in ids:
        cls = REGISTRY[check_id]
        assert cls.id == check_id and cls.purpose.endswith(".") and cls.fix


def test_a_sound_world_passes_every_check(mini: Frozen) -> None:
    report = verify_world(mini.world, manifests=mini.manifests, repeats=2)
    status = {c.id: c.status for c in report.checks}
    assert status == {c: ("skip" if c in OVERLAY_CHECKS | {"event-logs"} else "pass") for c in check_ids()}
    assert report.exit_code == 0
    skipped = next(c for c in report.checks if c.id == "separation")
    assert skipped.reason and "no task overlays" in skipped.reason


def test_revision_digest_change_names_the_revision(mini: Frozen) -> None:
    edit_changeset(mini.world, "r2", update={"documents": [{"id": "D-SOP", "set": {"title": "renamed"}}]})
    result = run(mini, "revision-digests")
    assert result.status == "fail" and result.fix and "worldkit freeze" in result.fix
    [item] = result.items
    assert (item.kind, item.rev) == ("changed", "r2")
    assert item.expected != item.actual


def test_rebuild_reports_changed_files_with_both_digests(mini: Frozen) -> None:
    template = mini.world / "templates" / "note.md.j2"
    template.write_text(template.read_text() + "extra\n")
    result = run(mini, "projection-rebuild")
    assert result.status == "fail"
    paths = {(i.kind, i.path, i.seat, i.rev) for i in result.items}
    assert ("changed", "files/Shared/Notes/note.md", "S1", "r1") in paths
    assert all(i.expected and i.actual and i.expected != i.actual for i in result.items)
    assert result.counts["identical"] == 0


def test_rebuild_reports_missing_and_unexpected(mini: Frozen) -> None:
    edit_changeset(mini.world, "r1", update={"documents": [{"id": "D-SOP", "set": {"path": "SOPs/SOP-001 v2.md"}}]})
    items = {(i.kind, i.path) for i in run(mini, "projection-rebuild").items if (i.rev, i.seat) == ("r1", "S2")}
    assert items == {("missing", "files/Shared/SOPs/SOP-001.md"), ("unexpected", "files/Shared/SOPs/SOP-001 v2.md")}


def test_manifest_integrity(mini: Frozen) -> None:
    rewrite_frozen(_copy(mini), ("r1", DATE, "S2"), lambda m: m.model_copy(update={"fingerprint": "0" * 64}),
                   consistent=False)
    (mini.manifests / "projections" / "r1" / DATE / "S9.json").write_text("{}")
    result = run(mini, "manifest-integrity")
    kinds = {(i.kind, i.path) for i in result.items}
    assert ("unreadable", f"projections/r1/{DATE}/S2.json") in kinds
    assert ("unexpected", f"projections/r1/{DATE}/S9.json") in kinds


def test_revision_pins(mini: Frozen) -> None:
    other = run(mini, "revision-pins")
    assert other.status == "pass"

    def repin(manifest: Manifest) -> Manifest:
        return manifest.model_copy(update={"inputs": manifest.inputs.model_copy(update={"rev": "r1"})})

    rewrite_frozen(_copy(mini), ("r2", DATE, "S1"), repin)
    result = run(mini, "revision-pins")
    kinds = {(i.kind, i.path, i.expected, i.actual) for i in result.items}
    assert ("revision-mismatch", "inputs.rev", "r2", "r1") in kinds


def test_identical_seats_are_flagged(tmp_path: Path) -> None:
    spec = WorldSpec()
    spec.data["seats"].append({"id": "S5", "person": "P1"})
    frozen = freeze_copy(tmp_path, spec)
    result = run(frozen, "seat-views-distinct")
    assert {(i.kind, i.seat) for i in result.items} == {("same-view", "S1,S5")}


def test_one_source_one_byte_string(mini: Frozen) -> None:
    def change(manifest: Manifest) -> Manifest:
        files = [e.model_copy(update={"sha256": "0" * 64}) if e.path == "files/Shared/SOPs/SOP-001.md" else e
                 for e in manifest.files]
        return manifest.model_copy(update={"files": files})

    rewrite_frozen(_copy(mini), ("r1", DATE, "S2"), change)
    result = run(mini, "one-source-one-bytes")
    assert [(i.kind, i.path, i.rev) for i in result.items] == [("bytes-differ", "files/Shared/SOPs/SOP-001.md", "r1")]


def test_date_conformance_picks_a_record_and_shows_both_sides(mini: Frozen) -> None:
    result = run(mini, "date-conformance")
    assert result.status == "pass"
    assert result.counts["record"] == "APP-1" and result.counts["effective"] == "2025-06-10"
    assert result.counts["unentitled_seat"] == "S4"


def _leaky_builder(package, rev: str, date: str, seat: str, work: Path) -> Built:
    """A timeline bug: every projection is built a month late."""
    later = (dt.date.fromisoformat(date) + dt.timedelta(days=30)).isoformat()
    built = build_projection(package, rev, later, seat, work)
    built.date = date
    return built


def test_date_conformance_catches_a_leaky_timeline(mini: Frozen) -> None:
    result = run(mini, "date-conformance", builder=_leaky_builder)
    assert result.status == "fail"
    assert {i.kind for i in result.items} >= {"visible-before"}
    assert any(i.path == "records/qms/APP-1.json" for i in result.items)


def _restamping_builder(package, rev: str, date: str, seat: str, work: Path) -> Built:
    """Wall-clock dates: every file on disk is stamped with the projection date."""
    import os

    built = build_projection(package, rev, date, seat, work)
    noon = int(dt.datetime.fromisoformat(f"{date}T12:00:00+00:00").timestamp())
    for path in built.root.rglob("*"):
        os.utime(path, (noon, noon))
    return built


def test_date_conformance_checks_mtimes_and_probes_a_document_and_a_message_too(mini: Frozen) -> None:
    result = run(mini, "date-conformance")
    assert result.status == "pass", result.items
    probes = result.counts["probes"]
    assert [p.split(" ", 1)[0] for p in probes] == ["record", "document", "mail"], probes
    restamped = run(mini, "date-conformance", builder=_restamping_builder)
    assert restamped.status == "fail"
    kinds = {i.kind for i in restamped.items}
    assert "restamped" in kinds and "mtime-not-recorded" in kinds


def _noisy_builder(package, rev: str, date: str, seat: str, work: Path) -> Built:
    """Nondeterminism: one file gets a random byte after materialization."""
    built = build_projection(package, rev, date, seat, work)
    with open(built.root / "seat.json", "ab") as handle:
        handle.write(bytes([random.randrange(256)]) * random.randrange(1, 4))
    return built


def test_seat_repeat_catches_nondeterminism(mini: Frozen) -> None:
    result = run(mini, "seat-repeat", builder=_noisy_builder)
    assert result.status == "fail"
    assert {i.kind for i in result.items} == {"not-identical"}
    assert result.counts["attempted"] == 6 and result.counts["identical"] < 6


def test_rebuild_repeat_records_fingerprints(mini: Frozen) -> None:
    result = run(mini, "rebuild-repeat")
    assert result.status == "pass"
    assert result.counts["attempted"] == result.counts["identical"] == 2
    assert len(set(result.counts["fingerprints"])) == 1
    assert result.counts["fingerprints"][0] == result.counts["frozen_fingerprint"]


def test_rebuild_repeat_counts_this_process_rebuild_and_a_fresh_one(mini: Frozen) -> None:
    """With 2 repeats: one fresh process (office cache off) and this process's clean rebuild, which
    must agree; a nondeterministic in-process build is caught against the fresh one."""
    from worldkit.verify.checks import frozen

    spawned: list[str] = []
    real = frozen._spawn_rebuild

    def spawn(world, out, hashseed, *, office_cache):
        spawned.append(f"{hashseed}:{office_cache}")
        return real(world, out, hashseed, office_cache=office_cache)

    frozen._spawn_rebuild, saved = spawn, frozen._spawn_rebuild
    try:
        noisy = run(mini, "rebuild-repeat", builder=_noisy_builder)
    finally:
        frozen._spawn_rebuild = saved
    assert spawned == ["1:False"]
    assert noisy.status == "fail" and noisy.counts["attempted"] == 2
    assert {i.kind for i in noisy.items} == {"not-identical"}
    assert all("rebuild 2" in (i.detail or "") for i in noisy.items)


def test_the_fresh_rebuilds_never_share_this_process_hash_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    from worldkit.verify.checks.frozen import _hash_seeds

    monkeypatch.setenv("PYTHONHASHSEED", "1")
    assert _hash_seeds(2) == ["7920", "15839"]
    monkeypatch.delenv("PYTHONHASHSEED")
    assert _hash_seeds(2) == ["1", "7920"]


def test_tool_surface_catches_a_server_over_another_projection(mini: Frozen) -> None:
    from worldkit.mcp.server import build_seat_server
    from worldkit.verify.checks.tools import tool_config

    def wrong_seat(projection: Path, config):
        """A server started over the neighbouring seat's projection."""
        other = build_projection(load_world(mini.world), config.rev, config.date,
                                 "S2" if config.seat != "S2" else "S1", projection.parent.parent)
        bundle = json.loads((other.root / "tools.json").read_text())
        return build_seat_server(other.root, tool_config(other.manifest, bundle))

    assert run(mini, "tool-surface").status == "pass"
    result = run(mini, "tool-surface", server_factory=wrong_seat)
    assert result.status == "fail"
    assert {"not-served", "extra-served"} <= {i.kind for i in result.items}


@pytest.mark.parametrize("check_id", sorted(OVERLAY_CHECKS))
def test_task_checks_pass_on_sound_overlays(tasks_world: Frozen, check_id: str) -> None:
    result = run(tasks_world, check_id)
    assert result.status == "pass", result.items


def test_task_checks_counts(tasks_world: Frozen) -> None:
    report = verify_world(tasks_world.world, manifests=tasks_world.manifests, overlays=tasks_world.overlays,
                          only=sorted(OVERLAY_CHECKS | {"access-audit"}))
    counts = {c.id: c.counts for c in report.checks}
    assert counts["task-pairs-identical"]["pairs"] == [["cc1-report", "cc1-triage"]]
    assert counts["staged-workspaces"] == {"staged_tasks_tested": 5, "staged_tasks_identical": 5}
    assert counts["separation"]["reviewed_overlaps"] >= 1 and counts["separation"]["unreviewed_overlaps"] == 0
    assert counts["evidence-sufficiency"]["criteria"] == counts["evidence-sufficiency"]["criteria_solvable"] > 0
    assert counts["access-audit"]["staged_projections"] == 5
    assert counts["access-audit"]["expected_authorized"] == counts["access-audit"]["retained_authorized"] > 0


def test_staged_tamper_is_caught_by_package_and_separation(tasks_world: Frozen) -> None:
    def tamper(tasks) -> None:
        task = next(t for t in tasks if t.label == "cc1-report[full]")
        (task.candidate / "workspace" / "answer.json").write_bytes((task.verifier / "rubric.json").read_bytes())

    with open_context(tasks_world.world, manifests=tasks_world.manifests, overlays=tasks_world.overlays,
                      tamper_staged=tamper) as ctx:
        separation = run_one(REGISTRY["separation"](), ctx)
        package = run_one(REGISTRY["package-integrity"](), ctx)
    assert ("leak-bytes", "candidate/workspace/answer.json") in {(i.kind, i.path) for i in separation.items}
    assert {(i.path, i.where) for i in separation.items} == {("candidate/workspace/answer.json", "cc1-report[full]")}
    assert ("unexpected", "candidate/workspace/answer.json") in {(i.kind, i.path) for i in package.items}


def _broken_builder(package, rev: str, date: str, seat: str, work: Path) -> Built:
    raise RuntimeError("disk on fire")


def test_a_crashing_check_is_an_error_not_a_failure(mini: Frozen) -> None:
    from worldkit.verify.runner import VerifyReport

    result = run(mini, "date-conformance", builder=_broken_builder)
    assert result.status == "error" and result.reason.startswith("RuntimeError: disk on fire")
    assert VerifyReport(world="mini", checks=[result]).exit_code == 4
    failed = run(mini, "revision-digests").model_copy(update={"status": "fail"})
    assert VerifyReport(world="mini", checks=[result, failed]).exit_code == 1


def test_overlay_locks_catch_a_changed_package(tasks_world: Frozen) -> None:
    def tamper(tasks) -> None:
        for task in tasks:
            if task.label == "cc1-triage[full]":
                task.summary["verifier_sha256"] = "0" * 64

    with open_context(tasks_world.world, manifests=tasks_world.manifests, overlays=tasks_world.overlays,
                      tamper_staged=tamper) as ctx:
        result = run_one(REGISTRY["overlay-locks"](), ctx)
    [item] = result.items
    assert (item.kind, item.where) == ("digest-mismatch", "cc1-triage[full]")
    assert item.path == "overlays/cc1-triage.json:verifier_sha256"


def test_event_logs_are_checked_when_a_store_is_given(mini: Frozen, tmp_path: Path) -> None:
    import sqlalchemy as sa

    from worldkit.store import EventLog, Store

    assert run(mini, "event-logs").status == "skip"
    url = f"sqlite:///{tmp_path / 'store.db'}"
    with Store.open(url) as store:
        for run_id, seat in (("run-a", "S1"), ("run-b", "S2"), ("elsewhere", "EMP-OTHER")):
            with EventLog(store, run_id, seat) as log:
                for n in range(3):
                    log.append("read_file", {"path": f"f{n}.md"}, "ok", "a" * 64)
    result = run(mini, "event-logs", store=url)
    assert (result.status, result.counts["runs"]) == ("pass", 2)
    with Store.open(url) as store, store.engine.begin() as conn:
        for trigger in ("log_events_no_update", "log_events_no_delete", "log_runs_head"):
            conn.exec_driver_sql(f"DROP TRIGGER {trigger}")
        conn.execute(sa.text("UPDATE log_events SET arguments = replace(arguments, 'f1', 'F1') "
                             "WHERE run_id = 'run-b' AND seq = 2"))
    result = run(mini, "event-logs", store=url)
    [item] = result.items
    assert (item.kind, item.seat, item.path) == ("hash_mismatch", "S2", "run run-b event 2")


def test_staged_manifest_environment_edit_is_caught(tasks_world: Frozen) -> None:
    """The fingerprint leaves out the rendering environment; the whole-bytes comparison does not."""

    def tamper(tasks) -> None:
        task = next(t for t in tasks if t.label == "cc1-report[curated:curator-1]")
        path = task.projection_root / "manifest.json"
        path.write_text(path.read_text().replace('"python": "', '"python": "9', 1))

    with open_context(tasks_world.world, manifests=tasks_world.manifests, overlays=tasks_world.overlays,
                      tamper_staged=tamper) as ctx:
        result = run_one(REGISTRY["staged-workspaces"](), ctx)
    [item] = result.items
    assert (item.kind, item.path, item.where) == (
        "changed", "candidate/projection/manifest.json", "cc1-report[curated:curator-1]")


def test_rubric_sanity_catches_a_trivial_pass_and_a_failing_reference(tmp_path: Path) -> None:
    from tests.unit.verify.conftest import freeze_fixture

    frozen = freeze_fixture(tmp_path)
    overlay = frozen.overlays / "cc1-report.yaml"
    text = overlay.read_text(encoding="utf-8")
    text = text.replace("check: {type: mail_not_sent, to: list-all}",  # C9 now holds before the task starts
                        "check: {type: record_state_equals, record: CC-1, status: approved}")
    text = text.replace("check: {type: contains, path: report.md, text: approved, case: insensitive}",
                        "check: {type: contains, path: report.md, text: rejected, case: insensitive}")
    overlay.write_text(text, encoding="utf-8")
    result = run(frozen, "rubric-sanity")
    assert result.status == "fail"
    found = {(i.kind, i.where) for i in result.items}
    assert ("passes-when-nothing-done", "cc1-report C9") in found
    assert ("reference-fails", "cc1-report C2") in found


def test_rubric_discrimination_names_the_criterion_and_variant_that_misgrade(tmp_path: Path) -> None:
    from tests.unit.verify.conftest import freeze_fixture

    frozen = freeze_fixture(tmp_path)
    overlay = frozen.overlays / "cc1-report.yaml"
    variants = """
counterfactuals:
  - id: reworded
    kind: correct
    description: The report in other words.
    edits:
      - {path: report.md, old: "It set the pull window to three days.", new: "The pull window is now 3 days."}
  - id: rejected-called-approved
    kind: wrong
    description: The report says CC-1 was rejected — and still says approved elsewhere, so C2 cannot tell.
    edits:
      - {path: report.md, old: "is approved:", new: "was rejected:"}
    fails: [C2]
"""
    overlay.write_text(overlay.read_text(encoding="utf-8").replace("\nreference_files:", variants + "\nreference_files:", 1),
                       encoding="utf-8")
    result = run(frozen, "rubric-discrimination")
    assert result.status == "fail"
    found = {(i.kind, i.where) for i in result.items}
    assert ("misgraded", "cc1-report C2 rejected-called-approved") in found
    assert any(i.kind == "coverage" and "C1 has no wrong variant" in i.detail for i in result.items)
    assert not any("reworded" in (i.where or "") for i in result.items)


def test_rubric_mutation_passes_the_fixture_rubrics(tasks_world: Frozen) -> None:
    result = run(tasks_world, "rubric-mutation")
    assert result.status == "pass", result.items
    assert result.counts["overlays"] == 2 and result.counts["right_graded"] > 0


def test_rubric_mutation_names_the_criterion_a_right_variant_fails(tmp_path: Path) -> None:
    from tests.unit.verify.conftest import freeze_fixture

    frozen = freeze_fixture(tmp_path)
    overlay = frozen.overlays / "cc1-report.yaml"
    text = overlay.read_text(encoding="utf-8")
    assert "value: approved, case: insensitive}" in text
    overlay.write_text(text.replace("value: approved, case: insensitive}", "value: approved}"), encoding="utf-8")
    result = run(frozen, "rubric-mutation")
    assert result.status == "fail"
    [item] = result.items
    assert (item.kind, item.where) == ("right-variant-fails", "cc1-report rubric[C6]")
    assert "identifiers in lower case" in item.detail

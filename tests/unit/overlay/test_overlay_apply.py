"""Applying an overlay: separate, deterministic candidate and verifier packages over one projection."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures.overlays.paths import GOOD, TRIAGE, WORLD
from worldkit.canon import sha256_bytes
from worldkit.errors import OutputExists, UsageError
from worldkit.materialize import materialize, read_manifest
from worldkit.materialize.manifest import scan_tree
from worldkit.overlay import (
    CandidateManifest,
    StaleFingerprint,
    ToolConfig,
    apply_overlay,
    diff_candidate,
    find_leaks,
    load_overlay,
    reference_bytes,
    verifier_items,
)


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_full_candidate_projection_is_exactly_the_direct_materialization(tmp_path: Path) -> None:
    applied = apply_overlay(GOOD, tmp_path / "pkg")
    direct = materialize(WORLD, "r2", "2025-07-01", "S1", tmp_path / "direct")
    assert applied.fingerprint == direct.fingerprint == load_overlay(GOOD).pinned_fingerprint
    assert _tree(applied.candidate / "projection") == _tree(direct.out)


def test_apply_twice_gives_identical_bytes_and_digests(tmp_path: Path) -> None:
    first = apply_overlay(GOOD, tmp_path / "one", "curated:curator-1")
    second = apply_overlay(load_overlay(GOOD), tmp_path / "two", "curated:curator-1")
    assert first.summary_model == second.summary_model
    assert _tree(first.out) == _tree(second.out)


def test_apply_in_another_process_and_hash_seed_gives_the_same_digests(tmp_path: Path) -> None:
    here = apply_overlay(GOOD, tmp_path / "here")
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    done = subprocess.run(
        [sys.executable, "-m", "worldkit", "overlay", "apply", str(GOOD), "--out", str(tmp_path / "there"), "--json"],
        capture_output=True, text=True, env=env, check=True,
    )  # fmt: skip
    there = json.loads(done.stdout)
    assert (there["candidate_sha256"], there["verifier_sha256"]) == (here.candidate_sha256, here.verifier_sha256)


def test_two_overlays_on_one_seat_share_the_projection_not_the_request(tmp_path: Path) -> None:
    report = apply_overlay(GOOD, tmp_path / "report")
    triage = apply_overlay(TRIAGE, tmp_path / "triage")
    assert report.fingerprint == triage.fingerprint
    assert _tree(report.candidate / "projection") == _tree(triage.candidate / "projection")
    assert (report.candidate / "request.md").read_text() != (triage.candidate / "request.md").read_text()
    assert report.candidate_sha256 != triage.candidate_sha256


def test_package_layout_and_contents(tmp_path: Path) -> None:
    applied = apply_overlay(TRIAGE, tmp_path / "pkg")
    top = sorted(p.name for p in applied.out.iterdir())
    assert top == ["candidate", "package.json", "verifier"]
    assert sorted(p.name for p in applied.candidate.iterdir()) == [
        "manifest.json", "projection", "request.md", "tool-config.json", "workspace",
    ]  # fmt: skip
    assert (applied.candidate / "request.md").read_text().startswith("Check whether the SOP")
    assert (applied.candidate / "workspace" / "triage.md").read_text().startswith("# Triage")
    config = ToolConfig.model_validate_json((applied.candidate / "tool-config.json").read_bytes())
    assert (config.seat, config.person, config.surfaces) == ("S1", "P1", ["files", "records"])
    assert config.may_write("triage.md") and not config.may_write("other.md")
    assert sorted(_tree(applied.verifier)) == [
        "evidence.json", "manifest.json", "reference/counterfactuals.json", "reference/files/expected.md",
        "reference/solution.json", "rubric.json", "task.json", "truth.json",
    ]  # fmt: skip
    assert (applied.verifier / "reference/files/expected.md").read_bytes() == (TRIAGE.parent / "reference/expected.md").read_bytes()
    evidence = json.loads((applied.verifier / "evidence.json").read_text())
    member = evidence["criteria"]["T2"][1][1]
    assert member["path"] == "records/qms/CC-1.json" and member["in_candidate"] is True
    package = json.loads((applied.out / "package.json").read_text())
    assert package["candidate_sha256"] == applied.candidate_sha256 and package["world"] == "mini"


def test_manifests_digest_every_file(tmp_path: Path) -> None:
    applied = apply_overlay(GOOD, tmp_path / "pkg")
    manifest = CandidateManifest.model_validate_json((applied.candidate / "manifest.json").read_bytes())
    on_disk = scan_tree(applied.candidate, frozenset({"manifest.json", "projection/manifest.json"}))
    assert {e.path: e.sha256 for e in manifest.files} == on_disk
    verifier = json.loads((applied.verifier / "manifest.json").read_text())
    assert {e["path"]: e["sha256"] for e in verifier["files"]} == scan_tree(applied.verifier)
    assert verifier["verifier_sha256"] == applied.verifier_sha256


def test_curated_packet_is_a_byte_identical_subset_with_its_own_manifest(tmp_path: Path) -> None:
    full = apply_overlay(GOOD, tmp_path / "full")
    curated = apply_overlay(GOOD, tmp_path / "cur", "curated:curator-2")
    full_files = _tree(full.candidate / "projection")
    cur_files = _tree(curated.candidate / "projection")
    overlay = load_overlay(GOOD)
    selected = {item.path for item in overlay.packet("curator-2")} | {"seat.json", "tools.json", "manifest.json"}
    assert set(cur_files) == selected
    assert all(cur_files[p] == full_files[p] for p in cur_files if p != "manifest.json")
    manifest = read_manifest(curated.candidate / "projection")  # a valid manifest: fingerprint recomputes
    assert manifest.fingerprint == curated.fingerprint != full.fingerprint
    assert manifest.inputs == read_manifest(full.candidate / "projection").inputs
    assert curated.summary_model.source_fingerprint == full.fingerprint
    assert {e.path for e in manifest.files} == selected - {"manifest.json"}


def test_verifier_package_never_leaks_into_the_candidate_package(tmp_path: Path) -> None:
    overlay = load_overlay(GOOD)
    reviewed = {o.sha256 for o in overlay.reviewed_overlaps}
    for condition in overlay.conditions:
        applied = apply_overlay(overlay, tmp_path / condition.replace(":", "-"), condition)
        candidate = _tree(applied.candidate)
        verifier = _tree(applied.verifier)
        candidate_digests = {sha256_bytes(b) for b in candidate.values()}
        leaked = {p for p, b in verifier.items() if sha256_bytes(b) in candidate_digests and sha256_bytes(b) not in reviewed}
        assert leaked == set()
        for text in candidate.values():
            assert b"verifier" not in text.lower()
            assert applied.verifier_sha256.encode() not in text
        items = verifier_items(overlay, reference_bytes(overlay))
        assert find_leaks(items, candidate.items(), reviewed) == []
        assert not (applied.candidate / "verifier").exists()


def test_staged_candidate_diff(tmp_path: Path) -> None:
    applied = apply_overlay(GOOD, tmp_path / "pkg")
    assert diff_candidate(applied.candidate).clean
    (applied.candidate / "projection/files/Shared/SOPs/SOP-001.md").write_text("edited")
    (applied.candidate / "projection/files/Shared/extra.md").write_text("new")
    (applied.candidate / "request.md").unlink()
    diff = diff_candidate(applied.candidate)
    assert diff.missing == ["request.md"]
    assert [c[0] for c in diff.changed] == ["projection/files/Shared/SOPs/SOP-001.md"]
    assert diff.unexpected == ["projection/files/Shared/extra.md"]


def test_refusals(tmp_path: Path, mutated) -> None:
    with pytest.raises(UsageError, match="use one of: full, curated:curator-1, curated:curator-2"):
        apply_overlay(GOOD, tmp_path / "x", "curated:nobody")
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "keep").write_text("mine")
    with pytest.raises(OutputExists, match="pass --force"):
        apply_overlay(GOOD, busy)
    assert (busy / "keep").read_text() == "mine"
    apply_overlay(GOOD, busy, force=True)
    assert not (busy / "keep").exists()
    stale = mutated(lambda r: r.update(pinned_fingerprint="0" * 64))
    with pytest.raises(StaleFingerprint, match="worldkit overlay pin"):
        apply_overlay(stale, tmp_path / "stale")
    assert not (tmp_path / "stale").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp leftovers
    assert apply_overlay(stale, tmp_path / "stale", allow_stale=True).fingerprint == load_overlay(GOOD).pinned_fingerprint

"""Packets: shuffling, opaque ids, on-disk layout, digests and the family manifest."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fixtures.jira_export import write_jira_export
from worldkit.canon import sha256_bytes
from worldkit.errors import ManifestMismatch, OutputExists
from worldkit.infoorg.packets import (
    build_packets,
    build_to_disk,
    check_packet_dir,
    compare_manifest,
    family_manifest,
    make_packet,
    read_packet_info,
    read_reference,
    write_manifest,
    write_packets,
)
from worldkit.infoorg.reference import load_reference
from worldkit.infoorg.sources.records import SourceRecord, SourceUnit, TaskSelection


def selection(n_units: int = 3, per_unit: int = 4, task: str = "recap-001") -> TaskSelection:
    units = tuple(
        SourceUnit(
            unit_id=f"M{u}x",
            group=f"M{u}x",
            records=tuple(
                SourceRecord(text=f"sentence {u}.{i} caf\u00e9", path=(f"M{u}x", "abstract"),
                             source=f"m{u}.xml#s{i}")
                for i in range(per_unit)
            ),
        )
        for u in range(n_units)
    )
    return TaskSelection(task_id=task, family="recap", units=units)


def test_ids_are_assigned_after_a_seeded_shuffle() -> None:
    packet = make_packet(selection(), seed=0)
    ids = sorted(packet.reference.records)
    assert ids == [f"F{i:03d}" for i in range(1, 13)]
    sources = [packet.reference.records[i].source for i in ids]
    assert sources != sorted(sources, key=lambda s: (s[1], int(s.split("#s")[1])))  # shuffled
    assert make_packet(selection(), seed=0) == packet
    assert make_packet(selection(), seed=1).reference != packet.reference


def test_inbox_holds_exact_text_and_reference_holds_path_hash_source() -> None:
    packet = make_packet(selection(), seed=0)
    for rid, entry in packet.reference.records.items():
        data = packet.candidate[f"inbox/{rid}.txt"]
        assert entry.sha256 == sha256_bytes(data)
        unit, index = entry.source.removeprefix("m").split(".xml#s")
        assert data.decode("utf-8") == f"sentence {unit}.{index} caf\u00e9"
        assert entry.path == (f"M{unit}x", "abstract")
    request = packet.candidate["request.md"].decode("utf-8")
    assert "All 12 records start in inbox" in request
    assert not any(f"M{u}x" in request for u in range(3))  # no reference leaks


def test_packet_on_disk_and_digests(tmp_path: Path) -> None:
    packet = make_packet(selection(), seed=0)
    write_packets([packet], tmp_path / "out")
    root = tmp_path / "out" / "recap-001"
    assert sorted(p.name for p in root.iterdir()) == ["candidate", "overlay.json", "packet.json", "verifier"]
    assert (root / "candidate" / "inbox" / "F001.txt").read_bytes() == packet.candidate["inbox/F001.txt"]
    assert load_reference(root) == packet.reference
    assert read_reference(root) == packet.reference
    info = json.loads((root / "packet.json").read_text(encoding="utf-8"))
    assert info["task_id"] == "recap-001" and info["record_count"] == 12 and info["seed"] == 0
    assert check_packet_dir(root) == read_packet_info(root)
    (root / "candidate" / "inbox" / "F002.txt").write_bytes(b"edited")
    with pytest.raises(ManifestMismatch, match="candidate: digest .* differs from packet.json"):
        check_packet_dir(root)


def test_output_folder_rules(tmp_path: Path) -> None:
    packets = [make_packet(selection(), seed=0)]
    out = tmp_path / "out"
    write_packets(packets, out)
    with pytest.raises(OutputExists, match="is not empty; pass --force"):
        write_packets(packets, out)
    (out / "recap-009").mkdir()
    (out / "recap-009" / "packet.json").write_text("{}", encoding="utf-8")
    write_packets(packets, out, force=True)  # replaces packets, including stale ones
    assert sorted(p.name for p in out.iterdir()) == ["recap-001"]
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(OutputExists, match="holds files that are not packets \\(notes.txt\\)"):
        write_packets(packets, out, force=True)


@settings(max_examples=25, deadline=None)
@given(page_size=st.integers(3, 80), rng=st.randoms(use_true_random=False))
def test_packet_bytes_do_not_depend_on_how_the_export_is_split(
    tmp_path_factory: pytest.TempPathFactory, page_size: int, rng: random.Random
) -> None:
    folder = write_jira_export(tmp_path_factory.mktemp("export"), page_size=page_size)
    pages = sorted(folder.glob("*.json"))
    contents = [page.read_bytes() for page in pages]
    rng.shuffle(contents)  # the same pages under other file names
    for page, data in zip(pages, contents, strict=True):
        page.write_bytes(data)
    built = family_manifest("thread", 0, build_packets("thread", folder, 3))
    reference = family_manifest(
        "thread", 0, build_packets("thread", write_jira_export(tmp_path_factory.mktemp("r")), 3)
    )
    assert built.to_bytes() == reference.to_bytes()


def test_manifest_match_prefix_absent_and_mismatch(tmp_path: Path) -> None:
    export = write_jira_export(tmp_path / "export")
    packets = build_packets("thread", export, 3)
    manifest = family_manifest("thread", 0, packets)
    path = tmp_path / "manifests" / "thread.json"
    assert compare_manifest(manifest, path) == "absent"
    write_manifest(manifest, path)
    assert path.read_bytes().endswith(b"\n") and b"ACME" in path.read_bytes()
    assert compare_manifest(manifest, path) == "match"
    assert compare_manifest(family_manifest("thread", 0, packets[:2]), path) == "prefix-match"
    with pytest.raises(ManifestMismatch, match="seed 0, built family thread seed 5"):
        compare_manifest(family_manifest("thread", 5, build_packets("thread", export, 3, seed=5)), path)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["tasks"][1]["units"] = ["ACME-999"]
    path.write_text(json.dumps(data, sort_keys=True, separators=(",", ":")) + "\n", encoding="utf-8")
    with pytest.raises(ManifestMismatch, match="task thread-002 differs in units; rebuild"):
        compare_manifest(manifest, path)
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    with pytest.raises(ManifestMismatch, match="not in canonical form"):
        compare_manifest(manifest, path)


def test_manifest_holds_no_record_text(tmp_path: Path) -> None:
    export = write_jira_export(tmp_path / "export")
    packets = build_packets("thread", export, 3)
    raw = family_manifest("thread", 0, packets).to_bytes().decode("utf-8")
    for packet in packets:
        for rid in packet.reference.records:
            assert packet.candidate[f"inbox/{rid}.txt"].decode("utf-8") not in raw


def test_build_to_disk_writes_then_checks(tmp_path: Path) -> None:
    export = write_jira_export(tmp_path / "export")
    manifest = tmp_path / "thread.json"
    first = build_to_disk("thread", export, tmp_path / "a", manifest, tasks=3, write=True)
    assert (first.tasks, first.manifest_status) == (3, "written")
    again = build_to_disk("thread", export, tmp_path / "b", manifest, tasks=3)
    assert again.manifest_status == "match"
    for task in ("thread-001", "thread-002", "thread-003"):
        a, b = (sorted((p.relative_to(r), p.read_bytes()) for p in r.rglob("*") if p.is_file())
                for r in (tmp_path / "a" / task, tmp_path / "b" / task))
        assert a == b


def test_shuffle_is_a_permutation() -> None:
    packet = make_packet(selection(5, 7), seed=random.Random(1).randrange(1000))
    assert sorted(e.source for e in packet.reference.records.values()) == sorted(
        r.source for r in selection(5, 7).records
    )

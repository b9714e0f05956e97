"""The manifest written while materializing (each entry serialized once, by hand) is byte for byte the
one `manifest_bytes` and `Manifest.compute_fingerprint` give for the same entries."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from worldkit.canon import canonical_json
from worldkit.materialize.manifest import (
    Entry,
    Environment,
    Inputs,
    Manifest,
    ManifestBuilder,
    assemble,
    entry_line,
    manifest_bytes,
    run_lines,
)

INPUTS = Inputs(world="w", rev="r1", revision_digest="d" * 64, date="2026-03-02", seat="S1", person="P-1")
ENVIRONMENT = Environment(worldkit="0", python="3.11", jinja2="3", templates={"a.md.j2": "e" * 64})
text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)
rows = st.lists(
    st.tuples(text, st.text("0123456789abcdef", min_size=64, max_size=64), st.integers(0, 10**12), text, text,
              st.one_of(st.none(), st.just("2026-03-02T12:00:00Z"))),
    max_size=8,
    unique_by=lambda row: row[0],
).map(sorted)


@given(rows)
def test_an_entry_line_is_its_canonical_json(found: list[tuple]) -> None:
    for path, sha, size, surface, source, mtime in found:
        entry = Entry(path=path, sha256=sha, size=size, surface=surface, source=source, mtime=mtime)
        assert entry_line(path, sha, size, surface, source, mtime) == canonical_json(
            entry.model_dump(mode="json", exclude_none=True)
        ).rstrip("\n")


@given(rows)
def test_assembled_manifest_has_the_fingerprint_and_bytes_of_its_entries(found: list[tuple]) -> None:
    manifest, data = assemble(INPUTS, ENVIRONMENT, "t" * 64, found)
    entries = [Entry(path=p, sha256=s, size=n, surface=u, source=o, mtime=m) for p, s, n, u, o, m in found]
    assert manifest.files == entries
    assert manifest.fingerprint == Manifest.compute_fingerprint(INPUTS, entries, "t" * 64)
    assert data == manifest_bytes(manifest)
    assert Manifest.model_validate_json(data) == manifest


def test_a_changed_entry_changes_the_fingerprint() -> None:
    row = ("files/a.md", "a" * 64, 3, "files", "DOC-1", "2026-03-02T12:00:00Z")
    first, _ = assemble(INPUTS, ENVIRONMENT, "t" * 64, [row])
    second, _ = assemble(INPUTS, ENVIRONMENT, "t" * 64, [(*row[:2], 4, *row[3:])])
    assert first.fingerprint != second.fingerprint


@given(rows)
def test_assembled_entries_read_as_the_list_of_entries(found: list[tuple]) -> None:
    manifest, _ = assemble(INPUTS, ENVIRONMENT, "t" * 64, found)
    entries = [Entry(path=p, sha256=s, size=n, surface=u, source=o, mtime=m) for p, s, n, u, o, m in found]
    files = manifest.files
    assert len(files) == len(entries) and list(files) == entries and entries == files
    assert [files[i] for i in range(-len(entries), len(entries))] == entries + entries
    assert files[1:] == entries[1:] and files[::-1] == entries[::-1]
    assert manifest.by_path() == {e.path: e for e in entries}
    plain = Manifest(inputs=INPUTS, environment=ENVIRONMENT, tool_bundle_sha256="t" * 64, files=entries,
                     fingerprint=manifest.fingerprint)
    assert manifest == plain and plain == manifest
    assert manifest.model_dump() == plain.model_dump()
    assert manifest.model_dump_json() == plain.model_dump_json()
    assert manifest.model_fields_set == plain.model_fields_set
    assert manifest.expected_fingerprint() == manifest.fingerprint


@given(rows, st.lists(st.integers(0, 8), max_size=4))
def test_entries_added_by_runs_are_the_entries_added_one_by_one(found: list[tuple], cuts: list[int]) -> None:
    """`ManifestBuilder.add_run` (what a forked worker's rendered run adds) writes and fingerprints as
    `add` of each entry, runs mixed with single entries, an empty run included."""
    one, runs = bytearray(), bytearray()
    single = ManifestBuilder(INPUTS, ENVIRONMENT, "t" * 64, one.extend)
    for row in found:
        single.add(*row)
    by_runs = ManifestBuilder(INPUTS, ENVIRONMENT, "t" * 64, runs.extend)
    bounds = sorted({0, len(found), *(min(c, len(found)) for c in cuts)})
    for k, (start, stop) in enumerate(zip(bounds, bounds[1:])):
        part = found[start:stop]
        if k % 2 and part:  # every other run entry by entry
            by_runs.add(*part[0])
            part = part[1:]
        paths, shas, sizes, surfaces, sources, mtimes = (list(c) for c in zip(*part)) if part else ([],) * 6
        lines = run_lines([entry_line(*row).encode() for row in part])
        by_runs.add_run(lines, paths, b"".join(bytes.fromhex(s) for s in shas), sizes, surfaces, sources, mtimes)
    assert by_runs.finish() == single.finish()
    assert runs == one


def test_a_run_whose_lines_and_columns_differ_is_refused() -> None:
    builder = ManifestBuilder(INPUTS, ENVIRONMENT, "t" * 64, bytearray().extend)
    row = ("a.md", "ab" * 32, 1, "files", "D-1", None)
    with pytest.raises(ValueError, match="differ in length"):
        builder.add_run(run_lines([entry_line(*row).encode()] * 2), ["a.md"], bytes(32), [1], ["files"], ["D-1"], [None])

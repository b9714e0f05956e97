"""`verify_frozen`: a staged folder against what was frozen — the re-hashed package is refused.

The attack (issue 11): add a file to a staged candidate package and re-digest every manifest
consistently with worldkit's own functions. The package then agrees with itself everywhere, so
`staged-workspace` passes; only the comparison with the frozen manifests catches it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.unit.verify.conftest import DATE, Frozen
from worldkit.errors import CheckFailed
from worldkit.frozen.staged import check_staged, require_staged, verify_frozen
from worldkit.frozen.workspace import verify_workspace
from worldkit.materialize import materialize
from worldkit.verify.inject import rehash_package


@pytest.fixture(scope="module")
def applied(tasks_world: Frozen, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from worldkit.overlay.apply import apply_overlay

    base = tmp_path_factory.mktemp("applied")
    return {condition: apply_overlay(tasks_world.overlays / "cc1-report.yaml", base / condition.replace(":", "-"),
                                     condition).out
            for condition in ("full", "curated:curator-1")}


def _copy(source: Path, into: Path) -> Path:
    shutil.copytree(source, into)
    return into


def _frozen(tasks_world: Frozen, folder: Path, **options: object):  # noqa: ANN202
    return verify_frozen(folder, manifests=tasks_world.manifests, world=tasks_world.world, **options)


@pytest.mark.parametrize("condition", ["full", "curated:curator-1"])
def test_a_freshly_applied_package_is_a_frozen_one(tasks_world: Frozen, applied: dict[str, Path], condition: str) -> None:
    package = applied[condition]
    for folder in (package, package / "candidate", package / "verifier", package / "candidate" / "projection"):
        outcome = _frozen(tasks_world, folder)
        assert outcome.status == "pass", (folder, [i.line() for i in outcome.items])
        assert outcome.counts["reference"] == "frozen"


@pytest.mark.parametrize("rel", ["projection/files/Shared/smuggled.md", "workspace/notes.md"])
def test_the_rehashed_package_passes_its_own_manifest_but_is_refused(
    tasks_world: Frozen, applied: dict[str, Path], tmp_path: Path, rel: str
) -> None:
    package = _copy(applied["full"], tmp_path / "pkg")
    rehash_package(package, rel, b"# smuggled\n")
    assert verify_workspace(package).status == "pass"  # consistent with itself: the attack as filed
    outcome = _frozen(tasks_world, package)
    assert outcome.status == "fail"
    kinds = {i.kind for i in outcome.items}
    assert "unfrozen-package" in kinds
    if rel.startswith("projection/"):
        assert ("unfrozen-file", "candidate/" + rel) in {(i.kind, i.path) for i in outcome.items}
        assert "unfrozen-fingerprint" in kinds
    assert _frozen(tasks_world, package / "candidate").status == "fail"


def test_trust_staged_accepts_and_says_so(tasks_world: Frozen, applied: dict[str, Path], tmp_path: Path) -> None:
    package = _copy(applied["full"], tmp_path / "pkg")
    rehash_package(package, "projection/files/Shared/smuggled.md", b"x\n")
    outcome = _frozen(tasks_world, package, trust_staged=True)
    assert outcome.status == "skip" and outcome.counts["trusted_staged"] is True
    assert outcome.reason and outcome.reason.startswith("TRUSTED (--trust-staged)")
    assert outcome.items  # the differences are still reported


def test_require_staged_refuses_and_trusts(tasks_world: Frozen, applied: dict[str, Path], tmp_path: Path) -> None:
    package = _copy(applied["full"], tmp_path / "pkg")
    rehash_package(package, "workspace/x.md", b"x\n")
    with pytest.raises(CheckFailed, match="fails the frozen-workspace check: unfrozen-package"):
        require_staged(package, "package", manifests=tasks_world.manifests, world=tasks_world.world)
    trusted = require_staged(package, "package", manifests=tasks_world.manifests, world=tasks_world.world,
                             trust_staged=True)
    assert trusted.counts["trusted_staged"] is True
    # A package that fails its own manifest is refused even when trusted.
    (package / "candidate" / "workspace" / "x.md").write_text("changed")
    with pytest.raises(CheckFailed, match="staged-workspace"):
        require_staged(package, "package", manifests=tasks_world.manifests, trust_staged=True)


def test_a_projection_with_a_smuggled_entry_is_named(tasks_world: Frozen, tmp_path: Path) -> None:
    from worldkit.materialize.manifest import read_manifest, write_manifest
    from worldkit.verify.inject import entry_for

    out = materialize(tasks_world.world, "r1", DATE, _seat(tasks_world), tmp_path / "p").out
    assert _frozen(tasks_world, out).status == "pass"
    (out / "files" / "extra.md").write_bytes(b"extra\n")
    manifest = read_manifest(out)
    files = sorted([*manifest.files, entry_for("files/extra.md", b"extra\n", "files", "x")], key=lambda e: e.path)
    manifest = manifest.model_copy(update={"files": files})
    write_manifest(out, manifest.model_copy(update={"fingerprint": manifest.expected_fingerprint()}))
    assert verify_workspace(out).status == "pass"
    items = {(i.kind, i.path) for i in _frozen(tasks_world, out).items}
    assert {("unfrozen-file", "files/extra.md"), ("unfrozen-fingerprint", "manifest.json")} <= items


def test_nothing_frozen_means_a_re_derivation_from_the_world(tasks_world: Frozen, tmp_path: Path) -> None:
    out = materialize(tasks_world.world, "r1", DATE, _seat(tasks_world), tmp_path / "p").out
    outcome = verify_frozen(out, manifests=tmp_path / "none", world=tasks_world.world)
    assert (outcome.status, outcome.counts["reference"]) == ("pass", "re-derived")
    target = next(p for p in (out / "files").rglob("*") if p.is_file())
    target.write_bytes(b"changed")
    from worldkit.materialize.manifest import read_manifest, write_manifest
    from worldkit.verify.inject import entry_for

    manifest = read_manifest(out)
    rel = target.relative_to(out).as_posix()
    old = manifest.by_path()[rel]
    files = [entry_for(rel, b"changed", old.surface, old.source) if e.path == rel else e for e in manifest.files]
    manifest = manifest.model_copy(update={"files": files})
    write_manifest(out, manifest.model_copy(update={"fingerprint": manifest.expected_fingerprint()}))
    outcome = verify_frozen(out, manifests=tmp_path / "none", world=tasks_world.world)
    assert ("unfrozen-file", rel) in {(i.kind, i.path) for i in outcome.items}


def test_no_world_and_nothing_frozen_is_refused(tasks_world: Frozen, tmp_path: Path) -> None:
    out = materialize(tasks_world.world, "r1", DATE, _seat(tasks_world), tmp_path / "p").out
    outcome = verify_frozen(out, manifests=tmp_path / "none", world="no-such-world")
    assert outcome.status == "fail" and {i.kind for i in outcome.items} == {"unverifiable"}


def test_check_staged_runs_both(tasks_world: Frozen, applied: dict[str, Path]) -> None:
    ids = [r.id for r in check_staged(applied["full"], manifests=tasks_world.manifests, world=tasks_world.world)]
    assert ids == ["staged-workspace", "frozen-workspace"]


def _seat(tasks_world: Frozen) -> str:
    from worldkit.overlay.load import load_overlay

    return load_overlay(tasks_world.overlays / "cc1-report.yaml").seat


def test_a_curated_candidate_with_nothing_frozen_is_checked_against_its_re_derivation(
    tasks_world: Frozen, applied: dict[str, Path], tmp_path: Path
) -> None:
    overlay = tasks_world.overlays / "cc1-report.yaml"
    candidate = applied["curated:curator-1"] / "candidate"
    outcome = verify_frozen(candidate, manifests=tmp_path / "none", world=tasks_world.world, overlay=overlay)
    assert (outcome.status, outcome.counts["reference"]) == ("pass", "re-derived"), [i.line() for i in outcome.items]
    package = _copy(applied["curated:curator-1"], tmp_path / "pkg")
    rehash_package(package, "projection/files/Shared/smuggled.md", b"# smuggled\n")
    outcome = verify_frozen(package / "candidate", manifests=tmp_path / "none", world=tasks_world.world, overlay=overlay)
    assert outcome.status == "fail"


def _with_duplicate_key(path: Path, key: str, value: object = None) -> None:
    """The file's JSON object with `key` named a second time (json.dumps cannot write that: by hand),
    by default with its own value again (so a reader keeping either copy sees the same object)."""
    import json

    if value is None:
        value = json.loads(path.read_text(encoding="utf-8"))[key]
    text = path.read_text(encoding="utf-8").rstrip()
    assert text.endswith("}")
    path.write_text(text[:-1].rstrip() + f',\n  "{key}": {json.dumps(value)}\n}}\n', encoding="utf-8")


def _reformatted(path: Path) -> None:
    import json

    path.write_text(json.dumps(json.loads(path.read_text(encoding="utf-8"))), encoding="utf-8")  # compact


@pytest.mark.parametrize(("rel", "tamper"), [
    ("package.json", lambda p: _with_duplicate_key(p, "overlay_sha256", "0" * 64)),
    ("package.json", lambda p: _with_duplicate_key(p, "overlay_sha256")),
    ("package.json", _reformatted),
    ("candidate/manifest.json", lambda p: _with_duplicate_key(p, "overlay", "another-task")),
    ("candidate/manifest.json", lambda p: _with_duplicate_key(p, "overlay")),
    ("candidate/manifest.json", _reformatted),
    ("verifier/manifest.json", lambda p: _with_duplicate_key(p, "condition", "curated:nope")),
    ("verifier/manifest.json", lambda p: _with_duplicate_key(p, "condition")),
    ("verifier/manifest.json", _reformatted),
])  # fmt: skip
def test_a_manifest_with_a_duplicate_key_or_other_bytes_is_tampered(
    applied: dict[str, Path], tmp_path: Path, rel: str, tamper
) -> None:
    package = _copy(applied["full"], tmp_path / "pkg")
    tamper(package / rel)
    outcome = verify_workspace(package)
    assert outcome.status == "fail"
    assert ("tampered-manifest", rel) in {(i.kind, i.path) for i in outcome.items}


def test_a_forged_environment_in_the_nested_projection_manifest_is_refused(
    tasks_world: Frozen, applied: dict[str, Path], tmp_path: Path
) -> None:
    """`environment` is recorded beside the fingerprint, not in it: forging a template digest keeps the
    manifest self-consistent, and only the comparison with the frozen one catches it."""
    import json

    from worldkit.materialize.manifest import Manifest, manifest_bytes

    package = _copy(applied["full"], tmp_path / "pkg")
    path = package / "candidate" / "projection" / "manifest.json"
    body = json.loads(path.read_text(encoding="utf-8"))
    name = sorted(body["environment"]["templates"])[0]
    body["environment"]["templates"][name] = "0" * 64
    path.write_bytes(manifest_bytes(Manifest.model_validate(body)))
    assert verify_workspace(package).status == "pass"  # the attack as filed: self-consistent
    outcome = _frozen(tasks_world, package)
    assert ("unfrozen-environment", "candidate/projection/manifest.json") in {(i.kind, i.path) for i in outcome.items}

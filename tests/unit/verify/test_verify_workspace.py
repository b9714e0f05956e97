"""`verify_workspace`: a staged folder against its manifest — any one-byte edit is caught and named."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.builders import WorldSpec
from tests.unit.verify.conftest import Frozen
from worldkit.frozen.workspace import verify_workspace
from worldkit.materialize import materialize
from worldkit.verify.tasks import bound_world


@pytest.fixture()
def projection(tmp_path: Path) -> Path:
    world = WorldSpec().write(tmp_path / "w")
    return materialize(world, "r1", "2025-07-01", "S1", tmp_path / "p").out


@pytest.fixture(scope="module")
def staged(tasks_world: Frozen, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One applied overlay (candidate + verifier); tests copy it before editing."""
    from worldkit.overlay.apply import apply_overlay

    out = tmp_path_factory.mktemp("staged") / "pkg"
    apply_overlay(tasks_world.overlays / "cc1-report.yaml", out)
    return out


def _copy(package: Path, into: Path) -> Path:
    shutil.copytree(package, into)
    return into


def test_clean_projection_passes(projection: Path) -> None:
    result = verify_workspace(projection)
    assert result.status == "pass" and result.counts["manifest"] == "projection"


def test_one_byte_edit_is_named(projection: Path) -> None:
    target = projection / "files" / "Shared" / "SOPs" / "SOP-001.md"
    data = bytearray(target.read_bytes())
    data[0] ^= 0x20
    target.write_bytes(bytes(data))
    result = verify_workspace(projection)
    assert result.status == "fail" and result.fix
    [item] = result.items
    assert (item.kind, item.path) == ("changed", "files/Shared/SOPs/SOP-001.md")
    assert item.expected != item.actual


def test_missing_and_unexpected(projection: Path) -> None:
    (projection / "mail" / "M1.json").unlink()
    (projection / "files" / "stray.txt").write_text("x")
    kinds = {(i.kind, i.path) for i in verify_workspace(projection).items}
    assert kinds == {("missing", "mail/M1.json"), ("unexpected", "files/stray.txt")}


def test_symlink_is_not_followed(projection: Path, tmp_path: Path) -> None:
    target = projection / "files" / "Shared" / "SOPs" / "SOP-001.md"
    outside = tmp_path / "outside.md"
    outside.write_bytes(target.read_bytes())
    target.unlink()
    target.symlink_to(outside)
    [item] = verify_workspace(projection).items
    assert (item.kind, item.path) == ("symlink", "files/Shared/SOPs/SOP-001.md")
    assert str(outside) in (item.detail or "")


def test_tampered_or_absent_manifest(projection: Path, tmp_path: Path) -> None:
    body = json.loads((projection / "manifest.json").read_text())
    body["files"][0]["sha256"] = "0" * 64
    (projection / "manifest.json").write_text(json.dumps(body))
    assert {i.kind for i in verify_workspace(projection).items} >= {"tampered-manifest"}
    empty = tmp_path / "empty"
    empty.mkdir()
    [item] = verify_workspace(empty).items
    assert (item.kind, item.path) == ("missing", "manifest.json")


def test_staged_packages_pass(staged: Path) -> None:
    assert verify_workspace(staged / "candidate").counts["manifest"] == "candidate"
    assert verify_workspace(staged / "candidate").status == "pass"
    assert verify_workspace(staged / "verifier").status == "pass"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_one_byte_edit_in_a_candidate_package_is_named(
    staged: Path, tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    package = _copy(staged / "candidate", tmp_path_factory.mktemp("edit") / "candidate")
    files = sorted(p.relative_to(package).as_posix() for p in package.rglob("*")
                   if p.is_file() and p.name != "manifest.json" and p.stat().st_size)
    rel = data.draw(st.sampled_from(files))
    target = package / rel
    raw = bytearray(target.read_bytes())
    at = data.draw(st.integers(0, len(raw) - 1))
    raw[at] = (raw[at] + data.draw(st.integers(1, 255))) % 256
    target.write_bytes(bytes(raw))
    result = verify_workspace(package)
    assert result.status == "fail"
    assert ("changed", rel) in {(i.kind, i.path) for i in result.items}


def test_nested_projection_manifest_must_agree(staged: Path, tmp_path: Path) -> None:
    package = _copy(staged / "candidate", tmp_path / "candidate")
    manifest = package / "projection" / "manifest.json"
    manifest.write_text(manifest.read_text().replace('"fingerprint": "', '"fingerprint": "f', 1))
    assert {(i.kind, i.path) for i in verify_workspace(package).items} == {("tampered-manifest", "projection/manifest.json")}


def test_bound_world_restores_the_search_path(monkeypatch: pytest.MonkeyPatch, tasks_world: Frozen) -> None:
    import os

    from worldkit.verify.runner import open_context

    monkeypatch.setenv("WORLDKIT_WORLDS", "/elsewhere")
    with open_context(tasks_world.world, manifests=tasks_world.manifests) as ctx:
        with bound_world(ctx):
            assert os.environ["WORLDKIT_WORLDS"].split(os.pathsep) == [str(tasks_world.world.parent), "/elsewhere"]
    assert os.environ["WORLDKIT_WORLDS"] == "/elsewhere"


def test_a_reformatted_projection_manifest_is_flagged(projection: Path) -> None:
    path = projection / "manifest.json"
    path.write_text(json.dumps(json.loads(path.read_text()), indent=4))
    [item] = verify_workspace(projection).items
    assert (item.kind, item.path) == ("tampered-manifest", "manifest.json")


# -- every entry type and the modes that matter (issue 11) --------------------------------------


def _kinds(result) -> set[tuple[str, str]]:  # noqa: ANN001 - a CheckResult
    return {(i.kind, i.path) for i in result.items}


def test_a_directory_symlink_to_the_verifier_is_refused(staged: Path, tmp_path: Path) -> None:
    package = _copy(staged, tmp_path / "pkg")
    (package / "candidate" / "workspace" / "peek").symlink_to(package / "verifier", target_is_directory=True)
    result = verify_workspace(package / "candidate")
    assert result.status == "fail"
    assert ("symlink", "workspace/peek") in _kinds(result)
    assert ("symlink", "candidate/workspace/peek") in _kinds(verify_workspace(package))


def test_a_fifo_is_refused_without_opening_it(staged: Path, tmp_path: Path) -> None:
    import os

    package = _copy(staged / "candidate", tmp_path / "candidate")
    os.mkfifo(package / "workspace" / "pipe")
    os.mkfifo(package / "projection" / "files" / "fifo.md")
    # Nobody ever opens the FIFOs' write ends: a scan that opened them would block here forever.
    result = verify_workspace(package)
    assert {("fifo", "workspace/pipe"), ("fifo", "projection/files/fifo.md")} <= _kinds(result)


def test_a_fifo_in_place_of_the_manifest_does_not_block(projection: Path) -> None:
    import os

    (projection / "manifest.json").unlink()
    os.mkfifo(projection / "manifest.json")
    [item] = verify_workspace(projection).items
    assert (item.kind, item.path, item.detail) == ("tampered-manifest", "manifest.json", "not a regular file")


def test_a_socket_is_refused(staged: Path, tmp_path: Path) -> None:
    import socket

    package = _copy(staged / "candidate", tmp_path / "c")
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(package / "workspace" / "s"))
        assert ("socket", "workspace/s") in _kinds(verify_workspace(package))


@pytest.mark.parametrize(("mode", "kinds"), [(0o4777, {"setuid", "executable", "world-writable"}),
                                             (0o2644, {"setgid"}), (0o000, {"unreadable"}), (0o755, {"executable"}),
                                             (0o666, {"world-writable"})])
def test_modes_that_matter_are_refused(projection: Path, mode: int, kinds: set[str]) -> None:
    target = projection / "files" / "Shared" / "SOPs" / "SOP-001.md"
    target.chmod(mode)
    result = verify_workspace(projection)
    assert {(k, "files/Shared/SOPs/SOP-001.md") for k in kinds} == _kinds(result)


def test_a_world_writable_directory_is_refused(projection: Path) -> None:
    (projection / "mail").chmod(0o777)
    assert ("world-writable", "mail") in _kinds(verify_workspace(projection))


def test_an_unlistable_directory_is_refused(projection: Path) -> None:
    (projection / "mail").chmod(0o000)
    try:
        assert ("unreadable", "mail") in _kinds(verify_workspace(projection))
    finally:
        (projection / "mail").chmod(0o755)


def test_an_empty_directory_is_refused_but_the_empty_workspace_is_not(staged: Path, tmp_path: Path) -> None:
    package = _copy(staged / "candidate", tmp_path / "c")
    for child in (package / "workspace").iterdir():
        child.unlink()
    assert verify_workspace(package).status == "pass"
    (package / "projection" / "files" / "hidden").mkdir()
    (package / "workspace" / "a" / "b").mkdir(parents=True)
    assert _kinds(verify_workspace(package)) == {("empty-directory", "projection/files/hidden"),
                                                 ("empty-directory", "workspace/a/b")}


def test_a_stray_entry_beside_the_package_sides_is_refused(staged: Path, tmp_path: Path) -> None:
    package = _copy(staged, tmp_path / "pkg")
    (package / "notes.txt").write_text("x")
    assert ("unexpected", "notes.txt") in _kinds(verify_workspace(package))

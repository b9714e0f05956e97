"""Staged packages lent to a mutation as hard links: the same tree as a copy, and a write through a link shows."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

from worldkit.verify.inject import Injection
from worldkit.verify.mutations import _unshared
from worldkit.verify.scratch import copy_tree, link_tree, tree_signature


def _tree(root: Path) -> Path:
    (root / "candidate" / "workspace").mkdir(parents=True)
    (root / "candidate" / "request.md").write_text("do the task\n", encoding="utf-8")
    (root / "candidate" / "workspace" / "notes.md").write_text("notes\n", encoding="utf-8")
    (root / "verifier").mkdir()
    (root / "verifier" / "answer.json").write_text("{}\n", encoding="utf-8")
    (root / "verifier" / "link").symlink_to("answer.json")
    os.utime(root / "candidate" / "request.md", ns=(946728000 * 10**9, 946728000 * 10**9))
    (root / "verifier" / "answer.json").chmod(0o600)
    return root


def _listing(root: Path) -> list[tuple]:
    found = []
    for path in sorted(root.rglob("*")):
        st = path.lstat()
        body = os.readlink(path) if path.is_symlink() else (path.read_bytes() if path.is_file() else None)
        found.append((path.relative_to(root).as_posix(), st.st_mode, body,
                      None if path.is_dir() else st.st_mtime_ns))
    return found


def test_a_linked_tree_is_the_copied_tree(tmp_path: Path) -> None:
    src = _tree(tmp_path / "src")
    assert _listing(link_tree(src, tmp_path / "linked")) == _listing(copy_tree(src, tmp_path / "copied"))


def test_a_write_through_a_link_changes_the_signature(tmp_path: Path) -> None:
    src = _tree(tmp_path / "src")
    before = tree_signature([src])
    linked = link_tree(src, tmp_path / "linked" / "deep")
    (linked / "candidate" / "extra.md").write_text("new file, not through a link\n", encoding="utf-8")
    assert tree_signature([src]) == before
    (linked / "candidate" / "request.md").write_text("rewritten in place\n", encoding="utf-8")
    assert tree_signature([src]) != before
    assert (src / "candidate" / "request.md").read_text(encoding="utf-8") == "rewritten in place\n"


def test_the_hook_changes_real_copies_of_its_targets_only(tmp_path: Path) -> None:
    staged = {"a[full]": _tree(tmp_path / "base" / "a"), "b[full]": _tree(tmp_path / "base" / "b")}
    before = tree_signature(list(staged.values()))
    tasks = [SimpleNamespace(label=label, out=link_tree(path, tmp_path / "run" / label)) for label, path in staged.items()]

    def tamper(given: list) -> None:
        (given[0].out / "candidate" / "request.md").write_text("tampered\n", encoding="utf-8")

    injection = Injection("test", tamper_staged=tamper, tamper_targets=lambda given: given[:1])
    _unshared(injection, staged)(tasks)
    assert (tasks[0].out / "candidate" / "request.md").read_text(encoding="utf-8") == "tampered\n"
    assert tree_signature(list(staged.values())) == before  # the untouched packages are untouched
    undeclared = Injection("test", tamper_staged=tamper, tamper_targets=lambda given: given[1:])
    tasks = [SimpleNamespace(label=label, out=link_tree(path, tmp_path / "again" / label)) for label, path in staged.items()]
    _unshared(undeclared, staged)(tasks)
    assert tree_signature(list(staged.values())) != before  # what the campaign's guard refuses

"""What the mutation campaign remembers between its mutations: digests of lent files, folded
snapshots, mutations batched into forked children — each gives what computing it afresh gives."""

from __future__ import annotations

import datetime as dt
import os
import time
from pathlib import Path

import pytest

from tests.unit.verify.conftest import Frozen
from worldkit.errors import InvalidWorld, WorldkitError
from worldkit.materialize.scan import digest_regular, remembered_digests, scan
from worldkit.timeline import as_of, shared_snapshots
from worldkit.verify.fanout import fork_call, fork_map
from worldkit.verify.scratch import lend_tree, tree_signature
from worldkit.world.load import load_world


def _settled(path: Path, body: bytes) -> Path:
    path.write_bytes(body)
    past = time.time_ns() - 10**10
    os.utime(path, ns=(past, past))
    return path


def test_a_remembered_digest_is_given_again_until_the_file_changes(tmp_path: Path) -> None:
    path = _settled(tmp_path / "a.txt", b"one\n")
    time.sleep(0.25)  # older than the coarse file clock's reach: its digest may be remembered
    with remembered_digests():
        first = digest_regular(path)
        assert digest_regular(path) == first
        with open(path, "r+b") as handle:  # same size, written in place, mtime put back
            handle.write(b"two\n")
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - 10**10))
        assert digest_regular(path) != first  # its ctime moved: read again
    assert digest_regular(path) != first


def test_a_fresh_file_is_not_remembered(tmp_path: Path) -> None:
    path = tmp_path / "b.txt"
    path.write_bytes(b"one\n")
    with remembered_digests():
        first = digest_regular(path)
        path.write_bytes(b"two\n")  # within the same clock tick, maybe: the signature may not move
        assert digest_regular(path) != first


def test_scans_agree_with_and_without_the_memo(tmp_path: Path) -> None:
    for n in range(5):
        (tmp_path / "t" / f"d{n}").mkdir(parents=True)
        _settled(tmp_path / "t" / f"d{n}" / "f.md", f"file {n}\n".encode())
    time.sleep(0.25)
    plain = scan(tmp_path / "t")
    with remembered_digests():
        assert scan(tmp_path / "t").files == plain.files
        assert scan(tmp_path / "t").files == plain.files


def test_a_lent_tree_is_the_tree_itself_and_a_write_into_it_shows(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "candidate").mkdir(parents=True)
    (src / "candidate" / "request.md").write_text("do the task\n", encoding="utf-8")
    before = tree_signature([src])
    lent = lend_tree(src, tmp_path / "run" / "staged" / "000-task-full")
    assert lent == src and (tmp_path / "run" / "staged" / "000-task-full" / "candidate" / "request.md").is_file()
    assert tree_signature([src]) == before
    (lent / "candidate" / "new.md").write_text("added\n", encoding="utf-8")
    assert tree_signature([src]) != before


def test_seats_of_one_date_share_one_snapshot(mini: Frozen) -> None:
    package = load_world(mini.world)
    state = package.revision(package.revision_names[0])
    day = dt.date(2026, 3, 2)
    with shared_snapshots():
        first = as_of(state, day)
        assert as_of(state, day) is first
        assert as_of(state, day + dt.timedelta(days=1)) is not first
    assert as_of(state, day) is not first
    assert as_of(state, day) == first


def test_batched_children_give_every_result_in_order() -> None:
    seen: list[tuple[int, dict]] = []
    fork_map(iter(range(11)), lambda n: {"n": n, "pid": os.getpid()}, 2, lambda i, row: seen.append((i, row)), batch=3)
    assert [i for i, _ in seen] == list(range(11)) and [row["n"] for _, row in seen] == list(range(11))
    pids = [row["pid"] for _, row in seen]
    assert os.getpid() not in pids and len(set(pids)) == 4  # 3 + 3 + 3 + 2


def test_work_forked_beside_this_process_comes_back() -> None:
    wait = fork_call(lambda: {"pid": os.getpid(), "views": {("r1", "2026-03-02", "S"): ("bundle", "x")}})
    got = wait()
    assert got["pid"] != os.getpid() and got["views"] == {("r1", "2026-03-02", "S"): ("bundle", "x")}

    def refuse() -> None:
        raise InvalidWorld("the world is broken")

    with pytest.raises(WorldkitError, match="the world is broken"):
        fork_call(refuse)()


def test_batches_may_shrink_near_the_end() -> None:
    seen: list[tuple[int, dict]] = []
    fork_map(iter(range(9)), lambda n: {"n": n, "pid": os.getpid()}, 2, lambda i, row: seen.append((i, row)),
             batch=lambda started: (9 - started) // 2)
    assert [i for i, _ in seen] == list(range(9)) and [row["n"] for _, row in seen] == list(range(9))
    assert len({row["pid"] for _, row in seen}) == 5  # batches of 4, 2, 1, 1, 1

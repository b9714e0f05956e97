"""Revisions in the store: one per (world, name), idempotent by digest, never overwritten."""

from __future__ import annotations

import hashlib
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from worldkit.errors import StoreError
from worldkit.store import RevisionInfo, Store


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_round_trip(store: Store) -> None:
    r1, r2 = b'{"people":[]}\n', b'{"people":["p1"]}\n'
    info = store.put_revision("pharmaco_demo", "r1", _digest(r1), None, r1)
    store.put_revision("pharmaco_demo", "r2", _digest(r2), "r1", r2)
    store.put_revision("other", "r1", _digest(b"x"), None, b"x")

    assert info == RevisionInfo(
        world="pharmaco_demo",
        name="r1",
        digest=_digest(r1),
        parent=None,
        size=len(r1),
        stored_at=info.stored_at,
    )
    got = store.get_revision("pharmaco_demo", "r2")
    assert got is not None
    assert (got.digest, got.parent, got.state_json) == (_digest(r2), "r1", r2)
    assert [(r.name, r.parent) for r in store.list_revisions("pharmaco_demo")] == [
        ("r1", None),
        ("r2", "r1"),
    ]
    assert store.get_revision("pharmaco_demo", "r9") is None
    assert store.list_revisions("nope") == []


def test_storing_the_same_digest_again_changes_nothing(store: Store) -> None:
    first = store.put_revision("w", "r1", _digest(b"a"), None, b"a")
    again = store.put_revision("w", "r1", _digest(b"a"), None, b"a")
    assert again == first
    assert len(store.list_revisions("w")) == 1


def test_a_different_digest_under_a_stored_name_is_refused(store: Store) -> None:
    store.put_revision("w", "r1", _digest(b"a"), None, b"a")
    with pytest.raises(StoreError) as caught:
        store.put_revision("w", "r1", _digest(b"b"), None, b"b")
    message = caught.value.message
    assert f"revision r1 of world w is already stored with digest {_digest(b'a')}" in message
    assert "new name" in message and "--store" in message
    stored = store.get_revision("w", "r1")
    assert stored is not None and stored.state_json == b"a"


def test_a_different_parent_under_a_stored_name_is_refused(store: Store) -> None:
    store.put_revision("w", "r2", _digest(b"a"), "r1", b"a")
    with pytest.raises(StoreError, match="already stored with parent 'r1'"):
        store.put_revision("w", "r2", _digest(b"a"), "r0", b"a")


@pytest.mark.parametrize(
    ("world", "name", "digest", "state", "match"),
    [
        ("w", "r1", "ABC", b"{}", "not a lowercase hex SHA-256"),
        ("w", "", "a" * 64, b"{}", "revision name '' must be a non-empty string"),
        ("", "r1", "a" * 64, b"{}", "world '' must be a non-empty string"),
        ("w", "r1", "a" * 64, "{}", "state_json must be bytes"),
    ],
)
def test_bad_input_is_refused(store: Store, world, name, digest, state, match) -> None:
    with pytest.raises(StoreError, match=match):
        store.put_revision(world, name, digest, None, state)


_names = itertools.count()


@settings(max_examples=50, deadline=None)
@given(state=st.binary(max_size=2_000))
def test_any_bytes_come_back_unchanged(state: bytes) -> None:
    with Store.open("sqlite://") as store:
        name = f"r{next(_names)}"
        store.put_revision("w", name, _digest(state), None, state)
        got = store.get_revision("w", name)
    assert got is not None and got.state_json == state and got.size == len(state)

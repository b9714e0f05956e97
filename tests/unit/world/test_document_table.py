"""The world cache's document table: documents' `vars` and `text` stay on disk and read the same."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from pathlib import Path

import pytest

from tests.builders import WorldSpec
from worldkit.world import table
from worldkit.world.load import load_world
from worldkit.world.models import Document

pytestmark = pytest.mark.skipif(not table.AVAILABLE, reason="no os.pread: documents stay whole in memory")


def _loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """(a load from source, a load of the same world from the cache)."""
    from worldkit.world.load import _load_cached

    monkeypatch.setenv("WORLDKIT_CACHE", str(tmp_path / "cache"))
    root = WorldSpec().write(tmp_path / "worlds" / "mini")
    _load_cached.cache_clear()
    first = load_world(root)
    _load_cached.cache_clear()
    second = load_world(root)
    assert second is not first
    return first, second


def test_cached_documents_keep_vars_and_text_on_disk_and_read_them_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = _loads(tmp_path, monkeypatch)
    for name in first.revision_names:
        old, new = first.revision(name).documents, second.revision(name).documents
        assert list(new) == list(old)
        for key, doc in new.items():
            plain = old[key]
            assert type(plain) is Document
            deferred = [f for f in table.DEFERRED if getattr(plain, f)]
            assert isinstance(doc, Document)
            assert (type(doc) is table.LazyDocument) == bool(deferred)
            for field in deferred:
                assert type(doc.__dict__[field]) is table.Row  # not held in memory
            assert doc.vars == plain.vars and doc.text == plain.text
            assert doc == plain and plain == doc
            assert doc.model_dump() == plain.model_dump()
            assert doc.model_dump(mode="json") == plain.model_dump(mode="json")
            assert list(doc.model_dump()) == list(plain.model_dump())  # field order too
            assert repr(doc) == repr(plain)
            assert copy.deepcopy(doc) == plain and copy.copy(doc) == plain
            assert type(pickle.loads(pickle.dumps(doc))) is Document
            assert pickle.loads(pickle.dumps(doc)) == plain
            assert doc.model_copy(update={"title": "changed"}).vars == plain.vars
            assert doc.model_copy(update={"vars": {"topic": "other"}}).vars == {"topic": "other"}
    assert any(type(d) is table.LazyDocument for d in second.revision("r1").documents.values())


def test_a_digest_recomputed_over_cached_documents_is_the_revision_digest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = _loads(tmp_path, monkeypatch)
    for name in first.revision_names:
        state = second.revision(name)
        again = dataclasses.replace(state)  # a new state: its digest is computed, not the one cached
        assert "digest" not in again.__dict__
        assert again.digest == first.revision(name).digest
        assert again.canonical() == first.revision(name).canonical()


def test_a_package_with_cached_documents_pickles_them_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = _loads(tmp_path, monkeypatch)
    again = pickle.loads(pickle.dumps(second.revision("r1")))
    assert all(type(d) is Document for d in again.documents.values())
    assert again.documents == first.revision("r1").documents

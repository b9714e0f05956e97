"""Slow renders kept across processes: keyed by their inputs and the running code, checked on read,
stored only when rendering cost more than reading back, and off wherever rendering must happen anew."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.builders import WorldSpec
from worldkit.materialize import materialize, pack, rendered
from worldkit.materialize.memo import _MEMO, fresh_renders, new_memo
from worldkit.render import Renderer
from worldkit.world import load_world

PARTS = ("rev-digest", "2025-07-01", "files/Shared/SOPs/SOP-001.md", "DOC-1")


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("WORLDKIT_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("WORLDKIT_RENDER_CACHE", raising=False)
    folder = rendered.folder()
    assert folder == tmp_path / "cache" / "rendered"
    return folder


def _entries(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()] if root.is_dir() else []


def _slow(calls: list[int], data: bytes = b"# SOP\n", stamp: str = "2025-06-30T12:00:00Z"):
    def produce() -> tuple[bytes, str]:
        calls.append(1)
        time.sleep(rendered.STORE_MIN_SECONDS * 2)
        return data, stamp

    return produce


def test_a_slow_render_is_stored_and_read_back_by_a_later_process(root: Path) -> None:
    calls: list[int] = []
    first = rendered.RenderedStore(root).through(PARTS, _slow(calls))
    again = rendered.RenderedStore(root).through(PARTS, _slow(calls))  # a new store: nothing kept in memory
    assert first == again == (b"# SOP\n", "2025-06-30T12:00:00Z")
    assert len(calls) == 1 and len(_entries(root)) == 1


def test_a_render_faster_than_the_threshold_is_not_stored(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rendered, "STORE_MIN_SECONDS", 60.0)  # "fast" whatever the machine's load
    calls: list[int] = []
    store = rendered.RenderedStore(root)
    for _ in range(2):
        assert store.through(PARTS, lambda: (calls.append(1), (b"{}", "2025-06-30T12:00:00Z"))[1]) == (b"{}", "2025-06-30T12:00:00Z")
    assert len(calls) == 2 and _entries(root) == []


@pytest.mark.parametrize("index", range(4))
def test_every_input_is_in_the_key(index: int) -> None:
    other = list(PARTS)
    other[index] += "x"
    assert rendered.entry_key(PARTS) != rendered.entry_key(tuple(other))  # type: ignore[arg-type]


def test_the_running_code_is_in_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    before = rendered.entry_key(PARTS)
    monkeypatch.setitem(rendered._CODE, "code", "0" * 64)
    assert rendered.entry_key(PARTS) != before


def test_the_code_digest_covers_the_renderers_and_the_projection_code() -> None:
    rendered._CODE.clear()
    base = Path(rendered.__file__).resolve().parents[1]
    seen: list[str] = []
    real = Path.read_bytes

    def spy(self: Path) -> bytes:
        seen.append(self.relative_to(base).as_posix() if self.is_relative_to(base) else str(self))
        return real(self)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Path, "read_bytes", spy)
        rendered._code()
    for module in ("render/env.py", "render/dated.py", "render/office/docx.py", "timeline/asof.py",
                   "materialize/project.py", "world/models.py", "canon.py"):
        assert module in seen


@pytest.mark.parametrize("damage", ["payload", "stamp", "name", "truncated"])
def test_a_damaged_or_foreign_entry_is_rendered_again(root: Path, damage: str) -> None:
    calls: list[int] = []
    store = rendered.RenderedStore(root)
    store.through(PARTS, _slow(calls))
    (entry,) = _entries(root)
    raw = entry.read_bytes()
    head, _, payload = raw.partition(b"\n")
    fields = head.split(b" ")
    if damage == "payload":
        raw = head + b"\n" + payload.replace(b"SOP", b"SOX")
    elif damage == "stamp":
        raw = b" ".join([*fields[:3], b"2031-01-01T12:00:00Z"]) + b"\n" + payload
    elif damage == "name":  # a valid entry of other inputs, put in this one's place
        other = ("rev-digest", "2025-07-01", "files/other.md", "DOC-2")
        rendered.write(str(entry) + ".other", rendered.entry_key(other), (payload, fields[3].decode()))
        raw = Path(str(entry) + ".other").read_bytes()
    else:
        raw = raw[: len(raw) - 2]
    entry.write_bytes(raw)
    assert store.through(PARTS, _slow(calls)) == (b"# SOP\n", "2025-06-30T12:00:00Z")
    assert len(calls) == 2
    assert store.through(PARTS, _slow(calls)) == (b"# SOP\n", "2025-06-30T12:00:00Z")  # rewritten whole
    assert len(calls) == 2


def test_off_where_rendering_must_happen_anew(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert rendered.store() is not None
    with fresh_renders():
        assert rendered.store() is None
    with new_memo():
        assert rendered.store() is None
    monkeypatch.setenv("WORLDKIT_RENDER_CACHE", "off")
    assert rendered.store() is None
    monkeypatch.setenv("WORLDKIT_CACHE", "off")
    monkeypatch.delenv("WORLDKIT_RENDER_CACHE")
    assert rendered.store() is None


def test_a_projection_read_from_the_store_is_the_one_rendered(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rendered, "STORE_MIN_SECONDS", 0.0)  # store every document
    monkeypatch.setattr(pack, "folder", lambda: None)  # the store, not a whole-projection pack, serves "again"
    package = load_world(WorldSpec().write(tmp_path / "worlds" / "mini"))
    _MEMO.clear()
    first = materialize(package, "r1", "2025-07-01", "S1", tmp_path / "first")
    documents = [e for e in first.manifest.files if e.surface == "files"]
    assert documents and len(_entries(root)) == len(documents)
    _MEMO.clear()

    def refuse(self: Renderer, doc: object) -> None:
        raise AssertionError("rendered although stored")

    with monkeypatch.context() as patch:
        patch.setattr(Renderer, "document_dated", refuse)
        again = materialize(package, "r1", "2025-07-01", "S1", tmp_path / "again")
    assert again.manifest == first.manifest
    for entry in first.manifest.files:
        assert (tmp_path / "again" / entry.path).read_bytes() == (tmp_path / "first" / entry.path).read_bytes()
        assert (tmp_path / "again" / entry.path).stat().st_mtime == (tmp_path / "first" / entry.path).stat().st_mtime
    with fresh_renders():
        fresh = materialize(package, "r1", "2025-07-01", "S1", tmp_path / "fresh")
    assert fresh.manifest == first.manifest
    _MEMO.clear()


def test_a_sweep_keeps_the_newest_entries_within_the_budget(root: Path) -> None:
    import os

    for n in range(6):
        name = rendered.entry_key(("d", "2025-07-01", f"p{n}", f"s{n}"))
        path = root / name[:2] / name
        rendered.write(str(path), name, (b"x" * 1000, "2025-06-30T12:00:00Z"))
        os.utime(path, ns=(n * 10**9, n * 10**9))  # written in this order
    size = path.stat().st_size  # every entry has the same size
    rendered.sweep(root, budget=3 * size)
    left = sorted(_entries(root), key=lambda p: p.stat().st_mtime_ns)
    assert [p.stat().st_mtime_ns // 10**9 for p in left] == [3, 4, 5]


def test_storing_past_the_sweep_mark_sweeps(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rendered, "SWEEP_EVERY", 10)
    monkeypatch.setattr(rendered, "BUDGET", 0)
    monkeypatch.setattr(rendered, "_WRITTEN", [0])
    calls: list[int] = []
    rendered.RenderedStore(root).through(PARTS, _slow(calls, data=b"x" * 20))
    assert len(calls) == 1 and _entries(root) == []  # stored, then swept away (budget 0)

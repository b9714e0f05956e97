"""The cross-process world cache: keyed by every source file, verified on read, rebuilt when broken."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.builders import WorldSpec
from worldkit.world import cache as world_cache
from worldkit.world.cache import entry_path, read_entry, source_key
from worldkit.world.load import load_world

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture()
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("WORLDKIT_CACHE", str(folder))
    return folder


def _world(tmp_path: Path) -> Path:
    """The builder world with a generator (which adds one document) and data in several files."""
    spec = WorldSpec()
    spec.world["generator"] = {"module": "generator.py", "seed": 7}
    root = spec.write(tmp_path / "worlds" / "mini", split=True)
    (root / "generator.py").write_text(
        "def generate(world, rng):\n"
        "    return {'documents': [{'id': 'D-GEN', 'path': 'Gen/gen.md', 'system': 'drive',\n"
        "                           'text': 'generated %d\\n' % rng.randint(0, 9), 'visible_from': '2025-01-01'}]}\n"
    )
    return root


def _fresh_load(root: Path):
    from worldkit.world.load import _load_cached

    _load_cached.cache_clear()  # the in-process memo would hide the disk cache
    return load_world(root)


@pytest.mark.parametrize(
    "edit",
    [
        "world.yaml",
        "data/people.yaml",
        "templates/note.md.j2",
        "generator.py",
        "new-file",
    ],
)
def test_editing_any_source_file_changes_the_key(tmp_path: Path, edit: str) -> None:
    root = _world(tmp_path)
    before = source_key(root)
    assert source_key(root) == before  # stable
    target = root / edit
    if target.exists():
        target.write_bytes(target.read_bytes() + b"\n# edited\n")
    else:
        target.write_text("x")
    assert source_key(root) != before


def test_the_loader_code_and_the_folder_are_part_of_the_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _world(tmp_path)
    before = source_key(root)
    monkeypatch.setitem(world_cache._CODE, "code", "another loader")
    assert source_key(root) != before
    monkeypatch.undo()
    copy = tmp_path / "elsewhere"
    import shutil

    shutil.copytree(root, copy)
    assert source_key(copy) != before


def test_bytecode_caches_do_not_change_the_key(tmp_path: Path) -> None:
    root = _world(tmp_path)
    before = source_key(root)
    (root / "__pycache__").mkdir()
    (root / "__pycache__" / "generator.cpython-311.pyc").write_bytes(b"\0\1")
    assert source_key(root) == before


def test_second_load_comes_from_the_cache_and_equals_a_clean_load(tmp_path: Path, cache: Path) -> None:
    root = _world(tmp_path)
    first = _fresh_load(root)
    entry = entry_path(source_key(root), cache)
    assert entry is not None and entry.is_file()
    second = _fresh_load(root)
    assert second is not first
    assert [second.revision(n).digest for n in second.revision_names] == [
        first.revision(n).digest for n in first.revision_names
    ]
    assert second.revision("r2").canonical() == first.revision("r2").canonical()


def test_an_edit_is_seen_by_the_next_load(tmp_path: Path, cache: Path) -> None:
    root = _world(tmp_path)
    before = _fresh_load(root).revision("r1").digest
    note = root / "templates" / "note.md.j2"
    note.write_text(note.read_text() + "edited\n")
    after = _fresh_load(root)
    assert after.revision("r1").digest != before
    assert "edited" in after.templates["note.md.j2"]
    generator = root / "generator.py"
    generator.write_text(generator.read_text().replace("generated", "made"))
    assert _fresh_load(root).revision("r1").documents["D-GEN"].text.startswith("made")


@pytest.mark.parametrize("damage", ["truncate", "flip", "other-key", "garbage"])
def test_a_damaged_entry_is_ignored_and_rebuilt(tmp_path: Path, cache: Path, damage: str) -> None:
    root = _world(tmp_path)
    digest = _fresh_load(root).revision("r2").digest
    key = source_key(root)
    entry = entry_path(key, cache)
    assert entry is not None
    blob = entry.read_bytes()
    if damage == "truncate":
        entry.write_bytes(blob[: len(blob) // 2])
    elif damage == "flip":
        entry.write_bytes(blob[:-10] + bytes([blob[-10] ^ 0xFF]) + blob[-9:])
    elif damage == "other-key":
        entry.write_bytes(blob.replace(key.encode(), b"0" * len(key), 1))
    else:
        entry.write_bytes(b"not a cache entry")
    assert read_entry(key, cache) is None
    assert _fresh_load(root).revision("r2").digest == digest
    assert read_entry(key, cache) is not None  # rewritten whole


def test_off_disables_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORLDKIT_CACHE", "off")
    monkeypatch.chdir(tmp_path)
    _fresh_load(_world(tmp_path))
    assert not (tmp_path / ".worldkit").exists()


def test_invalid_worlds_are_never_cached(tmp_path: Path, cache: Path) -> None:
    from worldkit.errors import InvalidWorld

    root = _world(tmp_path)
    (root / "generator.py").write_text("def generate(world, rng):\n    raise ValueError('boom')\n")
    for _ in range(2):
        with pytest.raises(InvalidWorld):
            _fresh_load(root)
    assert not list(cache.rglob("*.pickle"))


def test_old_entries_are_pruned(tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(world_cache, "KEEP", 2)
    monkeypatch.setattr(world_cache.prune, "__defaults__", (2,))
    for n in range(4):
        _fresh_load(_world(tmp_path / str(n)))
    assert len(list((cache / "worlds").glob("*.pickle"))) == 2


def test_processes_share_one_entry(tmp_path: Path, cache: Path) -> None:
    """Several processes loading at once all get the same digests; one whole entry remains."""
    root = _world(tmp_path)
    code = "import sys; from worldkit.world import load_world; print(load_world(sys.argv[1]).revision('r2').digest)"
    env = {**os.environ, "PYTHONPATH": str(REPO), "WORLDKIT_CACHE": str(cache)}
    procs = [
        subprocess.Popen([sys.executable, "-c", code, str(root)], stdout=subprocess.PIPE, text=True, env=env)
        for _ in range(3)
    ]
    digests = {p.communicate(timeout=120)[0].strip() for p in procs}
    assert all(p.returncode == 0 for p in procs)
    assert digests == {_fresh_load(root).revision("r2").digest}
    assert len(list((cache / "worlds").glob("*.pickle"))) == 1
    assert not list((cache / "worlds").glob("*.tmp"))



def test_compiled_templates_are_cached_by_source_and_a_damaged_entry_is_recompiled(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from worldkit.materialize import materialize
    from worldkit.render.env import build_environment

    root = _world(tmp_path)
    package = _fresh_load(root)
    templates = dict(package.revision("r1").templates)
    name = sorted(templates)[0]
    build_environment(templates).get_template(name)
    entries = sorted((cache / "templates").glob("*.pickle"))
    assert len(entries) == 1

    def no_compile(*args: object, **kwargs: object) -> None:
        raise AssertionError("compiled again")

    warm = build_environment(templates)
    monkeypatch.setattr(warm, "compile", no_compile)
    warm.get_template(name)  # a new environment (as in a new process) reads the entry
    edited = {**templates, name: templates[name] + "edited\n"}
    other = build_environment(edited)
    with pytest.raises(AssertionError, match="compiled again"):
        monkeypatch.setattr(other, "compile", no_compile)
        other.get_template(name)  # another source is never served the old entry
    entries[0].write_bytes(b"not a cache entry")
    build_environment(templates).get_template(name)  # recompiled from source ...
    assert read_entry(entries[0].stem, cache, kind="templates") is not None  # ... and rewritten whole
    from worldkit.materialize.memo import fresh_renders
    from worldkit.render import env as render_env

    with fresh_renders():
        render_env._ENVIRONMENTS.clear()
        cached = materialize(package, "r1", "2025-07-01", "S1", tmp_path / "cached").manifest
        monkeypatch.setenv("WORLDKIT_CACHE", "off")
        render_env._ENVIRONMENTS.clear()
        assert materialize(package, "r1", "2025-07-01", "S1", tmp_path / "uncached").manifest.files == cached.files


def test_a_byte_identical_copy_elsewhere_is_the_loaded_package_rebased(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    from worldkit.world import load as world_load

    monkeypatch.setattr(world_cache, "_BY_CONTENT", {})  # nothing remembered from other tests
    root = _world(tmp_path)
    first = _fresh_load(root)
    copy = tmp_path / "copies" / "mini"
    shutil.copytree(root, copy)

    def no_load(path: Path) -> None:
        raise AssertionError(f"loaded {path} from source")

    monkeypatch.setattr(world_load, "_load_package", no_load)
    twin = _fresh_load(copy)
    assert twin.root == copy.resolve() and twin is not first
    assert [twin.revision(n).digest for n in twin.revision_names] == [first.revision(n).digest for n in first.revision_names]
    assert all(str(copy.resolve()) in v for v in twin.origin.values() if str(tmp_path) in v)
    assert not any(v.startswith(str(root) + "/") for v in twin.origin.values())
    note = copy / "templates" / "note.md.j2"
    note.write_text(note.read_text() + "edited in the copy only\n")
    with pytest.raises(AssertionError, match="from source"):
        _fresh_load(copy)  # an edited copy is loaded anew


def test_loading_a_world_leaves_the_process_collector_alone(tmp_path: Path) -> None:
    """A library load (fresh, then from the cache) freezes nothing, now or at exit: tuning the
    collector is for the programs that own their process (`worldkit._process`)."""
    world = _world(tmp_path)
    script = (
        "import atexit, gc, sys\n"
        "atexit.register(lambda: print('frozen at exit:', gc.get_freeze_count() > 0, flush=True))\n"
        "from worldkit.world.load import load_world\n"
        "load_world(sys.argv[1])\n"
        "print('frozen before exit:', gc.get_freeze_count() > 0, gc.isenabled(), flush=True)\n"
    )
    for _ in range(2):  # the second process reads the cache entry the first wrote
        done = subprocess.run([sys.executable, "-c", script, str(world)], capture_output=True, text=True,
                              env={**os.environ, "WORLDKIT_CACHE": str(tmp_path / "cache")}, timeout=120)  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines() == ["frozen before exit: False True", "frozen at exit: False"]


@pytest.mark.parametrize("fails", [False, True])
@pytest.mark.parametrize("enabled", [True, False])
def test_an_entry_is_unpickled_with_the_collector_off_and_left_as_it_was(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch, enabled: bool, fails: bool
) -> None:
    import gc

    from worldkit.world import table

    root = _world(tmp_path)
    _fresh_load(root)
    key = source_key(root)
    seen: list[bool] = []
    real = table.TableUnpickler.load

    def load(self: table.TableUnpickler) -> object:
        seen.append(gc.isenabled())
        if fails:
            raise ValueError("unreadable")
        return real(self)

    monkeypatch.setattr(table.TableUnpickler, "load", load)
    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        found = read_entry(key, cache)
        after = gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()
    assert seen == [False]
    assert (found is None) is fails
    assert after is enabled


def test_a_cached_package_holds_one_empty_list_for_every_empty_list_field(tmp_path: Path, cache: Path) -> None:
    root = _world(tmp_path)
    clean = _fresh_load(root)
    cached = _fresh_load(root)
    empties = [doc.__dict__["shared_with"] for doc in cached.revision("r2").documents.values() if not doc.shared_with]
    assert len(empties) >= 2 and len({id(x) for x in empties}) == 1  # one list, not one per document
    assert cached.revision("r2").canonical() == clean.revision("r2").canonical()

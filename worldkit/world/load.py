"""Load a world package from disk: `world.yaml`, `data/**/*.yaml|yml`, `templates/`, a generator.

Layout of a world folder:

    world.yaml          company, revisions (base first), optional generator spec
    data/**/*.yaml      any of the entity collections (people:, documents:, …) as lists; `.yml` too
    templates/**        jinja2 templates referenced by documents and messages
    <generator>.py      optional: `generate(world, rng) -> {collection: [raw entities]}`

Every error names the file, the entity id and the field, and says how to fix it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from worldkit.errors import InvalidWorld, UsageError
from worldkit.locate import world_dirs
from worldkit.world.models import COLLECTIONS, Entities, Revision, WorldFile
from worldkit.world.state import WorldState

_ENTITY_MODELS: dict[str, type[BaseModel]] = {
    name: Entities.model_fields[name].annotation.__args__[0]  # type: ignore[union-attr]
    for name in COLLECTIONS
}


def world_search_path() -> list[Path]:
    """Folders searched for a world given by name (see `worldkit.locate`)."""
    return world_dirs()


def resolve_world(name_or_path: str | Path) -> Path:
    """A world folder from a path or a name under a `worlds/` folder; lists choices on failure."""
    candidate = Path(name_or_path)
    if (candidate / "world.yaml").is_file():
        return candidate.resolve()
    for folder in world_search_path():
        if (folder / str(name_or_path) / "world.yaml").is_file():
            return (folder / str(name_or_path)).resolve()
    available = sorted(
        {p.parent.name for folder in world_search_path() if folder.is_dir() for p in folder.glob("*/world.yaml")}
    )
    raise UsageError(
        f"unknown world {str(name_or_path)!r}: no world.yaml there or under "
        f"{', '.join(str(p) for p in world_search_path())}. Available worlds: "
        f"{', '.join(available) or '(none)'}"
    )


def _read_yaml(path: Path) -> Any:
    # A load from the world cache reads no YAML: the parser is imported by a load from source only.
    import yaml

    from worldkit.world.yamlsafe import StrictLoader, problem_text

    try:
        with open(path, encoding="utf-8") as handle:
            return yaml.load(handle, Loader=StrictLoader)
    except yaml.YAMLError as error:
        raise InvalidWorld(f"not valid YAML{problem_text(error)}. Fix the file.", file=path) from None
    except UnicodeDecodeError:
        raise InvalidWorld("not UTF-8 text; save the file as UTF-8.", file=path) from None


def _validation_error(
    error: ValidationError, *, file: Path | str, raw: Any, prefix: tuple[Any, ...] = (), model: Any = None
) -> InvalidWorld:
    errors = error.errors()
    # an unknown key first: a misspelt key (`revisons`) is also a missing one (`revisions`)
    first = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    loc = prefix + tuple(first["loc"])
    entity = None
    node: Any = raw
    path_parts: list[str] = []
    for part in loc:
        if isinstance(node, Mapping) and "id" in node and isinstance(node.get("id"), str):
            entity = node["id"]
        if isinstance(node, Mapping) and "name" in node and entity is None and isinstance(node.get("name"), str):
            entity = node["name"]
        path_parts.append(str(part))
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            node = None
    if isinstance(node, Mapping) and isinstance(node.get("id"), str):
        entity = node["id"]
    field_name = ".".join(path_parts)
    message = first["msg"]
    if first["type"] == "extra_forbidden":
        from worldkit._model import unknown_key_message

        message = unknown_key_message(model, tuple(first["loc"])) if model is not None else (
            "unknown field; remove it or fix its spelling")  # fmt: skip
    elif first["type"] == "missing":
        message = "required field is missing; add it"
    elif first["type"] == "value_error":  # a model's own check: its message already says what to fix
        message = message.removeprefix("Value error, ")
    else:
        message = f"{message} (got {first.get('input')!r}); fix the value"
    return InvalidWorld(message, file=file, entity=entity, field=field_name)


@dataclass
class _Sourced:
    """Entities of one collection with the file each came from (for error messages)."""

    items: dict[str, BaseModel] = field(default_factory=dict)
    origin: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class WorldPackage:
    """A loaded world folder: the world file, the base entities, templates; revisions on demand."""

    root: Path
    spec: WorldFile
    base: dict[str, dict[str, BaseModel]]
    origin: Mapping[tuple[str, str], str]
    templates: dict[str, str]
    _revisions: dict[str, WorldState] = field(default_factory=dict, compare=False, repr=False)

    @property
    def id(self) -> str:
        return self.spec.id

    @property
    def revision_names(self) -> list[str]:
        return [r.name for r in self.spec.revisions]

    def revision_spec(self, name: str) -> Revision:
        for rev in self.spec.revisions:
            if rev.name == name:
                return rev
        raise UsageError(
            f"unknown revision {name!r} of world {self.id}; valid revisions: {', '.join(self.revision_names)}"
        )

    def revision(self, name: str) -> WorldState:
        return _resolve_revision(self, name)

    def rebased(self, root: Path) -> WorldPackage:
        """This package as loaded from `root`, a byte-identical copy of its folder: the same
        entities and resolved revisions, with the folder (and the files entities came from) moved."""
        old = str(self.root)
        origin = {k: str(root) + v[len(old):] if v.startswith(old) else v for k, v in self.origin.items()}
        for name in self.revision_names:
            self.revision(name)  # resolved once, shared by both
        return WorldPackage(root=root, spec=self.spec, base=self.base, origin=origin, templates=self.templates,
                            _revisions=dict(self._revisions))


def _add_entities(
    target: dict[str, _Sourced], collection: str, raw_items: Any, *, file: str, raw_root: Any, prefix: tuple
) -> None:
    if not isinstance(raw_items, list):
        raise InvalidWorld(f"`{collection}` must be a list of entities", file=file, field=collection)
    model = _ENTITY_MODELS[collection]
    bucket = target[collection]
    for index, raw in enumerate(raw_items):
        try:
            item = model.model_validate(raw)
        except ValidationError as error:
            raise _validation_error(error, file=file, raw=raw_root, prefix=prefix + (index,), model=model) from None
        key = item.id  # type: ignore[attr-defined]
        if key in bucket.items:
            raise InvalidWorld(
                f"duplicate id in {collection} (also defined in {bucket.origin[key]}); give one of them a new id",
                file=file,
                entity=key,
                field="id",
            )
        bucket.items[key] = item
        bucket.origin[key] = file
        raw_items[index] = None  # validated: the raw dict goes now, not after the last entity (100k generated: peak 36 MB lower)


def _load_generator(root: Path, spec: WorldFile) -> dict[str, Any]:
    assert spec.generator is not None
    module_path = (root / spec.generator.module).resolve()
    if root.resolve() not in module_path.parents or not module_path.is_file():
        raise InvalidWorld(
            f"generator module {spec.generator.module!r} not found inside the world folder",
            file=root / "world.yaml",
            field="generator.module",
        )
    import importlib.util
    import random

    module_name = f"_worldkit_generator_{spec.id.replace('-', '_').replace('.', '_')}"
    loaded = importlib.util.spec_from_file_location(module_name, module_path)
    assert loaded is not None and loaded.loader is not None
    module = importlib.util.module_from_spec(loaded)
    try:
        loaded.loader.exec_module(module)
    except Exception as error:  # noqa: BLE001
        raise InvalidWorld(f"generator module does not import: {type(error).__name__}: {error}", file=module_path) from None
    if not callable(getattr(module, "generate", None)):
        raise InvalidWorld("generator module must define generate(world, rng)", file=module_path, field="generate")
    try:
        return module.generate(spec, random.Random(spec.generator.seed))
    except Exception as error:  # noqa: BLE001 - any generator failure is a broken world file
        raise InvalidWorld(
            f"generator failed: {type(error).__name__}: {error}. Fix the generator (it must be deterministic "
            "and return {collection: [entities]})",
            file=module_path,
            field="generate",
        ) from None


def _load_templates(root: Path) -> dict[str, str]:
    folder = root / "templates"
    templates: dict[str, str] = {}
    if folder.is_dir():
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                name = path.relative_to(folder).as_posix()
                try:
                    templates[name] = path.read_text(encoding="utf-8")
                except UnicodeDecodeError:
                    raise InvalidWorld("template is not UTF-8 text", file=path) from None
    return templates


def load_world(name_or_path: str | Path) -> WorldPackage:
    """Load and validate a world package (base entities and every revision)."""
    root = resolve_world(name_or_path)
    return _load_cached(root, _tree_signature(root))


def _tree_signature(root: Path) -> tuple:
    """Cheap change detector so repeated loads in one process reuse the parsed package."""
    stats = []
    for path in sorted(root.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            st = path.stat()
            stats.append((path.relative_to(root).as_posix(), st.st_size, st.st_mtime_ns))
    return tuple(stats)


@lru_cache(maxsize=8)
def _load_cached(root: Path, _signature: tuple) -> WorldPackage:
    from worldkit.world.cache import cached_package  # the cross-process cache (keyed by source digest)

    return cached_package(root, _load_package, WorldPackage)


DATA_SUFFIXES = (".yaml", ".yml")
"""Data files are YAML under either suffix, in any letter case (`a.yaml`, `b.yml`, `C.YML`)."""


def _data_files(data_dir: Path) -> list[Path]:
    """Every YAML data file under `data/`, in path order; two spellings of one name are refused."""
    if not data_dir.is_dir():
        return []
    files = sorted(
        (p for p in data_dir.rglob("*") if p.is_file() and p.suffix.lower() in DATA_SUFFIXES),
        key=lambda p: p.relative_to(data_dir).as_posix(),
    )
    stems: dict[str, Path] = {}
    for path in files:
        stem = path.relative_to(data_dir).with_suffix("").as_posix().lower()
        if stem in stems:
            raise InvalidWorld(
                f"{path.name} and {stems[stem].name} are one data file under two suffixes; merge them or rename one",
                file=path,
            )
        stems[stem] = path
    return files


def _load_package(root: Path, entities: Callable[[WorldFile], tuple[dict, dict] | None] | None = None) -> WorldPackage:
    """Load `root` from source. `entities(spec)` may give the (base, origin) that loading the data
    files and running the generator would give (the mutation campaign's copies whose data and
    generator inputs are unchanged); None: load them."""
    world_file = root / "world.yaml"
    raw = _read_yaml(world_file)
    if not isinstance(raw, dict):
        raise InvalidWorld("world.yaml must be a mapping with id, company and revisions", file=world_file)
    try:
        spec = WorldFile.model_validate(raw)
    except ValidationError as error:
        raise _validation_error(error, file=world_file, raw=raw, model=WorldFile) from None
    known = entities(spec) if entities is not None else None
    base, origin = known if known is not None else _load_entities(root, spec)
    package = WorldPackage(root=root, spec=spec, base=base, origin=origin, templates=_load_templates(root))
    _check_revision_graph(package)
    for name in package.revision_names:
        package.revision(name)  # validate every revision up front
    return package


def _load_entities(root: Path, spec: WorldFile) -> tuple[dict[str, dict[str, BaseModel]], dict[tuple[str, str], str]]:
    """The base entities (data files, then the generator) and the file each came from."""
    buckets = {name: _Sourced() for name in COLLECTIONS}
    data_dir = root / "data"
    for path in _data_files(data_dir):
        content = _read_yaml(path)
        if content is None:
            continue
        if not isinstance(content, dict):
            raise InvalidWorld(f"must be a mapping of collections ({', '.join(COLLECTIONS)})", file=path)
        for key, items in content.items():
            if key not in COLLECTIONS:
                raise InvalidWorld(
                    f"unknown collection {key!r}; use one of {', '.join(COLLECTIONS)}", file=path, field=key
                )
            _add_entities(buckets, key, items, file=str(path), raw_root=content, prefix=(key,))
    if spec.generator is not None:
        generated = _load_generator(root, spec)
        gen_file = str(root / spec.generator.module)
        for key in sorted(generated):
            if key not in COLLECTIONS:
                raise InvalidWorld(f"generator returned unknown collection {key!r}", file=gen_file, field=key)
            _add_entities(buckets, key, generated[key], file=gen_file, raw_root=generated, prefix=(key,))
    base = {name: bucket.items for name, bucket in buckets.items()}
    origin = {(name, key): f for name, bucket in buckets.items() for key, f in bucket.origin.items()}
    return base, origin


def _check_revision_graph(package: WorldPackage) -> None:
    world_file = package.root / "world.yaml"
    names = package.revision_names
    seen: set[str] = set()
    for index, rev in enumerate(package.spec.revisions):
        if rev.name in seen:
            raise InvalidWorld("duplicate revision name; rename one", file=world_file, entity=rev.name, field="name")
        seen.add(rev.name)
        if index == 0 and rev.parent is not None:
            raise InvalidWorld(
                "the first revision is the base and must have no parent", file=world_file, entity=rev.name, field="parent"
            )
        if index > 0 and rev.parent not in names[:index]:
            raise InvalidWorld(
                f"parent revision {rev.parent!r} is missing; list it before this revision "
                f"(known: {', '.join(names[:index])})",
                file=world_file,
                entity=rev.name,
                field="parent",
            )




def _resolve_revision(package: WorldPackage, name: str) -> WorldState:
    cache = package._revisions
    if name in cache:
        return cache[name]
    rev = package.revision_spec(name)
    chain: list[Revision] = []
    cursor: Revision | None = rev
    while cursor is not None:
        chain.append(cursor)
        cursor = package.revision_spec(cursor.parent) if cursor.parent else None
    collections = {key: dict(items) for key, items in package.base.items()}
    origin = dict(package.origin)
    world_file = str(package.root / "world.yaml")
    for step in reversed(chain):
        _apply_changeset(collections, origin, step, world_file)
    state = WorldState(
        world_id=package.id,
        revision=name,
        parent=rev.parent,
        company=package.spec.company,
        templates=package.templates,
        **{key: dict(sorted(items.items())) for key, items in collections.items()},
    )
    from worldkit.world.validate import validate_state

    validate_state(state, origin)
    cache[name] = state
    return state


def _apply_changeset(
    collections: dict[str, dict[str, BaseModel]], origin: dict[tuple[str, str], str], rev: Revision, file: str
) -> None:
    for name in COLLECTIONS:
        for item in getattr(rev.add, name):
            if item.id in collections[name]:  # type: ignore[attr-defined]
                raise InvalidWorld(
                    f"revision adds {name} id that already exists; use `update` instead",
                    file=file,
                    entity=item.id,  # type: ignore[attr-defined]
                    field=f"revisions.{rev.name}.add.{name}",
                )
            collections[name][item.id] = item  # type: ignore[attr-defined]
            origin[(name, item.id)] = f"{file} (revision {rev.name})"  # type: ignore[attr-defined]
    for name, updates in rev.update.items():
        if name not in COLLECTIONS:
            raise InvalidWorld(f"unknown collection {name!r}", file=file, field=f"revisions.{rev.name}.update")
        model = _ENTITY_MODELS[name]
        for upd in updates:
            current = collections[name].get(upd.id)
            if current is None:
                raise InvalidWorld(
                    f"revision updates a {name} entity that does not exist in its parent",
                    file=file,
                    entity=upd.id,
                    field=f"revisions.{rev.name}.update.{name}",
                )
            merged = {**current.model_dump(), **upd.set}
            try:
                collections[name][upd.id] = model.model_validate(merged)
            except ValidationError as error:
                raise _validation_error(error, file=file, raw=merged, model=model) from None
            origin[(name, upd.id)] = f"{file} (revision {rev.name})"
    for name, ids in rev.remove.items():
        if name not in COLLECTIONS:
            raise InvalidWorld(f"unknown collection {name!r}", file=file, field=f"revisions.{rev.name}.remove")
        for key in ids:
            if collections[name].pop(key, None) is None:
                raise InvalidWorld(
                    f"revision removes a {name} entity that does not exist in its parent",
                    file=file,
                    entity=key,
                    field=f"revisions.{rev.name}.remove.{name}",
                )

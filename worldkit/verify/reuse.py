"""What a mutated scratch copy can reuse from the untouched one: the verdicts of checks whose inputs it left alone.

A check reads a `VerifyContext` and nothing else that a mutation can change (a mutation edits
files inside its own scratch copy and sets the context's hooks), and it is deterministic. So a
check whose inputs are the same as in the baseline run gives the baseline's result again. The
baseline runs every check over a `TracingContext`, which notes each context attribute a check
reads; `INPUTS` maps each attribute to the inputs it derives from (the world folder, the frozen
manifests, the overlays, the staging hook, the server hook, the event-log store). A mutation
then reruns exactly the checks that read an input it changed (`changed_inputs`), and skips the
rest, which pass as they did. An attribute this module does not know counts as reading every
input, so a check is never skipped on a guess.

This module never writes anything; it only decides what must run again.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from worldkit.check_result import CheckResult
from worldkit.verify.checks import REGISTRY, REPEAT, check_ids, run_one
from worldkit.verify.context import VerifyContext
from worldkit.verify.inject import Injection
from worldkit.verify.scratch import ScratchCopy
from worldkit.verify.seeded import Baseline, tree_sha256
from worldkit.world.load import WorldPackage

WORLD, MANIFESTS, OVERLAYS, STAGED, SERVER, LOG = "world", "manifests", "overlays", "staged", "server", "log"
ALL = frozenset({WORLD, MANIFESTS, OVERLAYS, STAGED, SERVER, LOG})
"""Every input of a verify run over a scratch copy that a mutation can change."""

_TASKS = frozenset({WORLD, MANIFESTS, OVERLAYS, STAGED})
"""Staged tasks: applied from the world and the overlays (next to the manifests), then the staging hook."""

INPUTS: dict[str, frozenset[str]] = {
    # the world and what is built from it alone
    "package": frozenset({WORLD}), "builder": frozenset({WORLD}), "_builds": frozenset({WORLD}),
    "rebuild": frozenset({WORLD}), "fresh_build": frozenset({WORLD}), "repeat_round": frozenset({WORLD}),
    "_round": frozenset({WORLD}), "latest_rev": frozenset({WORLD}),
    # the frozen manifests
    "manifests": frozenset({MANIFESTS}), "index_or_error": frozenset({MANIFESTS}), "index": frozenset({MANIFESTS}),
    "frozen": frozenset({MANIFESTS}), "frozen_entry": frozenset({MANIFESTS}), "readable": frozenset({MANIFESTS}),
    "dates": frozenset({WORLD, MANIFESTS}),
    # staged tasks
    "overlays": _TASKS, "tasks": _TASKS, "tasks_or_missing": _TASKS, "staged_from": _TASKS, "tamper_staged": _TASKS,
    # hooks
    "server_factory": frozenset({SERVER}), "store": frozenset({LOG}), "runs": frozenset({LOG}),
    # fixed for every run of a campaign (where scratch goes; one repeat)
    "work": frozenset(), "repeats": frozenset(), "staged_copy": frozenset(),
    # work a check launched early (the reproducibility checks, which campaigns leave out): anything
    "started": ALL,
}  # fmt: skip
"""Context attribute → the inputs its value depends on."""


def inputs_of(names: Iterable[str]) -> frozenset[str]:
    """The inputs behind the context attributes `names` (an unknown attribute: all of them)."""
    found: set[str] = set()
    for name in names:
        found |= INPUTS.get(name, ALL)
    return frozenset(found)


class TracingContext(VerifyContext):
    """A `VerifyContext` that notes, in `trace` (when set), every attribute read from it."""

    def __getattribute__(self, name: str) -> Any:
        if not name.startswith("__"):
            trace = object.__getattribute__(self, "__dict__").get("_trace")
            if trace is not None:
                trace.add(name)
        return object.__getattribute__(self, name)


def _trace_into(ctx: TracingContext, names: set[str] | None) -> None:
    """Start noting the attributes read from `ctx` into `names` (None: stop)."""
    ctx.__dict__["_trace"] = names


@dataclass
class TracedBaseline:
    """The baseline verify run over the untouched copy, and the inputs each check read in it."""

    baseline: Baseline
    reads: dict[str, frozenset[str]]
    """check id → inputs it read (only checks that ran)."""
    attributes: dict[str, set[str]] = field(default_factory=dict)
    """check id → the context attributes it read (what `reads` is derived from)."""

    def to_run(self, watched: list[str], changed: frozenset[str]) -> list[str]:
        """The watched checks that read an input in `changed` (a check not traced: run it)."""
        return [c for c in watched if self.reads.get(c, ALL) & changed]


def traced_baseline(copy: ScratchCopy, work: Path, package: WorldPackage, jobs: int = 1) -> TracedBaseline:
    """`Baseline.run(copy, work)` (every check but the reproducibility ones, in report order), traced.

    With `jobs` > 1 (and fork), the checks run in three processes, as verify schedules them
    (`worldkit.verify.schedule`): those that need no shared work in a child forked at once; this
    process meanwhile builds the shared work (rebuilds, staged tasks) untraced, then forks a second
    child with about half of the rest by weight and runs the other half. What each check reads is
    noted as it runs, wherever it runs; the attributes it reads are the same whether the shared work
    was built before it or by it (each attribute stands for everything it is built from, `INPUTS`),
    so the verdicts and the reads are those of the run in one process."""
    ctx = TracingContext(package=package, manifests=copy.manifests, work=work, overlays=copy.overlays, repeats=1)
    ids = [c for c in check_ids() if not REGISTRY[c].tags & {REPEAT}]
    from worldkit.verify.fanout import can_fork

    if jobs > 1 and can_fork() and len(ids) > 1:
        traced = _traced_in_three(ctx, ids)
    else:
        traced = {c: _traced_run(ctx, c) for c in ids}
    results = [traced[c][0] for c in ids]
    raw = {c: traced[c][1] for c in ids}
    return TracedBaseline(Baseline.of(copy, ctx, results), {c: inputs_of(s) for c, s in raw.items()}, raw)


Traced = tuple[CheckResult, set[str]]
"""A check's result and the context attributes it read."""


def _traced_run(ctx: TracingContext, check_id: str) -> Traced:
    seen: set[str] = set()
    _trace_into(ctx, seen)
    try:
        return run_one(REGISTRY[check_id](), ctx), seen
    finally:
        _trace_into(ctx, None)


def _traced_in_three(ctx: TracingContext, ids: list[str]) -> dict[str, Traced]:
    from worldkit.verify.fanout import fork_call
    from worldkit.verify.schedule import heaviest_first, independent, warm, weight

    def run_all(group: list[str]) -> dict[str, Traced]:
        return {c: _traced_run(ctx, c) for c in group}

    first = [c for c in ids if independent(REGISTRY[c])]
    rest = [c for c in ids if c not in first]
    ctx.index_or_error  # noqa: B018 - the frozen state, read once before any fork
    if ctx.index is not None:
        ctx.frozen  # noqa: B018
    early = fork_call(lambda: run_all(first)) if first else dict
    try:
        warm(ctx, rest)  # untraced: `_trace` is unset between checks
        shares: tuple[list[str], list[str]] = ([], [])
        loads = [0, 0]
        for check_id in heaviest_first(rest):  # the heaviest first, each to the lighter share
            lighter = 0 if loads[0] <= loads[1] else 1
            shares[lighter].append(check_id)
            loads[lighter] += weight(check_id) + 1
        other = fork_call(lambda: run_all(shares[1])) if shares[1] else dict
        try:
            found = run_all(shares[0])
        except BaseException:
            with contextlib.suppress(Exception):
                other()  # reaped; this process's error is the one to report
            raise
        found.update(other())
    except BaseException:
        with contextlib.suppress(Exception):
            early()
        raise
    return {**early(), **found}


@dataclass(frozen=True)
class Digests:
    """The tree digests of one scratch copy's world, manifests and overlays (`tree_sha256`)."""

    world: str
    manifests: str
    overlays: str

    @classmethod
    def of(cls, copy: ScratchCopy) -> Digests:
        return cls(tree_sha256(copy.world), tree_sha256(copy.manifests), tree_sha256(copy.overlays))


def changed_inputs(baseline: Baseline, digests: Digests, injection: Injection) -> frozenset[str]:
    """The inputs of a verify run over a mutated copy that differ from the baseline's: by the
    digests of its folders and by the hooks the injection sets (never by what it says it touches)."""
    changed = set()
    if digests.world != baseline.world_sha256:
        changed.add(WORLD)
    if digests.manifests != baseline.manifests_sha256:
        changed.add(MANIFESTS)
    if digests.overlays != baseline.overlays_sha256:
        changed.add(OVERLAYS)
    if injection.tamper_staged:
        changed.add(STAGED)
    if injection.server_factory:
        changed.add(SERVER)
    if injection.store or injection.runs:
        changed.add(LOG)
    return frozenset(changed)


def context_attributes() -> set[str]:
    """Every public or dataclass attribute of `VerifyContext` (each must be classified in `INPUTS`)."""
    names = {f.name for f in fields(VerifyContext)}
    names |= {n for n in vars(VerifyContext) if not n.startswith("__")}
    return names


# -- the world's sources: what a mutated copy's load can take from the untouched one --------------


_OPENED: list[set[str]] = []
"""Where `_opened` notes the files opened while it runs (the innermost set)."""


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _OPENED and event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
        _OPENED[-1].add(os.path.abspath(os.fsdecode(args[0])))


_HOOKED: list[bool] = []


@contextmanager
def _opened() -> Iterator[set[str]]:
    """Every file opened (by `open`, `os.open`, imports, …) in this process while inside."""
    if not _HOOKED:
        sys.addaudithook(_audit)  # audit hooks stay for the process's life; this one is idle outside
        _HOOKED.append(True)
    found: set[str] = set()
    _OPENED.append(found)
    try:
        yield found
    finally:
        _OPENED.pop()


def _source_of(path: str) -> str:
    """The module source a byte-code file stands for (`a/__pycache__/b.cpython-311.pyc` → `a/b.py`)."""
    parent, name = os.path.split(path)
    if os.path.basename(parent) == "__pycache__" and name.endswith(".pyc"):
        return os.path.join(os.path.dirname(parent), name.split(".", 1)[0] + ".py")
    return path


def _world_files(root: Path) -> dict[str, bytes]:
    from worldkit.world.cache import source_files

    return {p.relative_to(root).as_posix(): p.read_bytes() for p in source_files(root)}


@dataclass
class WorldSources:
    """The untouched world's source files, and which of them (and which world-file fields) its
    generator reads: a mutated copy whose data files and generator inputs are byte-identical has
    the same base entities, so its load takes them from the untouched package instead of parsing
    the data files and running the generator again (`entities`).

    The generator's inputs are found by running it (twice, here): the files it opens, byte code
    counting as its source, and the fields of the world file it reads (any other attribute, such
    as `model_dump`, counts as reading every field). The generator is deterministic (the world
    contract the world cache rests on too), so equal inputs give equal output."""

    package: Any
    files: dict[str, bytes]
    data: frozenset[str]
    """Data files the loader parses."""
    generator_files: frozenset[str] | None
    """Files the generator opened (None: it could not be traced; never reuse)."""
    generator_fields: frozenset[str] | None
    """World-file fields the generator read (None: every field)."""

    @classmethod
    def of(cls, package: Any) -> WorldSources:
        from worldkit.world.load import _data_files, _load_generator

        root = Path(package.root)
        files = _world_files(root)
        data = frozenset(p.relative_to(root).as_posix() for p in _data_files(root / "data"))
        spec = package.spec
        if spec.generator is None:
            return cls(package, files, data, frozenset(), frozenset())
        names = set(type(spec).model_fields)
        read: set[str] = set()

        class Noting(type(spec)):  # type: ignore[misc, valid-type]
            def __getattribute__(self, name: str) -> Any:
                if not (name.startswith("__") and name.endswith("__")):
                    read.add(name if name in names else "*")
                return super().__getattribute__(name)

        noting = Noting.model_construct(_fields_set=spec.model_fields_set, **{n: getattr(spec, n) for n in names})
        try:
            with _opened() as opened:
                plain = _load_generator(root, spec)
                traced = _load_generator(root, noting)
        except Exception:  # noqa: BLE001 - an untraceable generator: never reuse its output
            return cls(package, files, data, None, None)
        if traced != plain:
            return cls(package, files, data, None, None)
        inside = {os.path.relpath(_source_of(p), root) for p in opened}
        used = frozenset(p.replace(os.sep, "/") for p in inside if not p.startswith(".."))
        fields_read = None if "*" in read else frozenset(read)
        return cls(package, files, data, used, fields_read)

    def entities(self, root: Path) -> Any:
        """The `entities` hook of `_load_package` for a mutated copy at `root` (None: load everything)."""
        if self.generator_files is None:
            return None
        now = _world_files(root)
        if now.keys() != self.files.keys():
            return None
        changed = {p for p, body in now.items() if body != self.files[p]}
        if changed & (self.data | self.generator_files):
            return None
        old = self.package.spec
        prefix, moved = str(self.package.root), str(root)

        def entities(spec: Any) -> tuple[dict, dict] | None:
            if "world.yaml" in changed:
                if spec.generator != old.generator:
                    return None
                names = self.generator_fields if self.generator_fields is not None else type(spec).model_fields
                if any(getattr(spec, n) != getattr(old, n) for n in names):
                    return None
            origin = {k: moved + v[len(prefix):] if v.startswith(prefix) else v
                      for k, v in self.package.origin.items()}
            return self.package.base, origin

        return entities

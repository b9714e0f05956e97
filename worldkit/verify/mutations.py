"""The mutation campaign: N random single mutations, each in its own scratch copy, and who caught it.

Kinds: the ten seeded faults with random targets, byte flips and truncations of world source
files, permission flips and date shifts of world entities, byte flips and truncations of frozen
manifests, and byte flips in staged packages. The campaign is a pure function of the world,
its manifests and overlays, N and the seed.

A mutation is **projection-changing** when it changes what some seat sees: a rebuild of some
frozen (rev, date, seat) projection from the mutated world differs from the frozen one in any
path or byte or in its tool bundle (or can no longer be built), or a staged candidate package
or the seat's tool surface differs. The oracle computes rebuilds in memory from the world alone,
independently of the checks. Every projection-changing mutation must be detected, i.e. make
verify fail (a world that no longer loads counts as detected: verify refuses to run on it).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import random
import shutil
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from worldkit.access import Policy
from worldkit.canon import sha256_bytes
from worldkit.errors import WorldkitError
from worldkit.materialize.project import plan_projection
from worldkit.materialize.reach import Change, Reads, TracingRenderer, change_between
from worldkit.materialize.scan import remembered_digests, scan
from worldkit.timeline import as_of, shared_snapshots
from worldkit.verify.checks import REPEAT, check_ids, run_checks
from worldkit.verify.context import VerifyContext
from worldkit.verify.inject import Injection, NotApplicable, edit_changeset
from worldkit.verify.paths import SEAT_SPECIFIC
from worldkit.verify.reuse import (
    OVERLAYS,
    WORLD,
    Digests,
    TracedBaseline,
    WorldSources,
    changed_inputs,
    traced_baseline,
)
from worldkit.verify.scratch import ScratchCopy, copy_tree, fresh_dir, lend_tree, scratch_dir, tree_signature
from worldkit.verify.seeded import CASES, Baseline, Pristine, failing_checks, load_pristine, prepare_copy
from worldkit.world.load import WorldPackage, _load_package, _tree_signature, load_world, resolve_world
from worldkit.world.models import Classification
from worldkit.world.state import WorldState

Mutator = Callable[[Pristine, ScratchCopy, random.Random], Injection]

_SHIFTS = (1, 2, 7, 30, 90, 365)


def _flip_byte(path: Path, rng: random.Random) -> str:
    data = bytearray(path.read_bytes())
    if not data:
        path.write_bytes(b"x")
        return "wrote one byte into an empty file"
    pos = rng.randrange(len(data))
    old = data[pos]
    if 0x20 <= old <= 0x7E:
        new = old
        while new == old:
            new = rng.randrange(0x20, 0x7F)
    else:
        new = old ^ 0x01
    data[pos] = new
    path.write_bytes(bytes(data))
    return f"byte {pos}: {bytes([old])!r} → {bytes([new])!r}"


def _truncate(path: Path, rng: random.Random) -> str:
    data = path.read_bytes()
    cut = rng.randrange(len(data)) if data else 0
    path.write_bytes(data[:cut])
    return f"truncated at byte {cut} of {len(data)}"


def _world_files(copy: ScratchCopy) -> list[Path]:
    return sorted(p for p in copy.world.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def world_byte_flip(p: Pristine, copy: ScratchCopy, rng: random.Random) -> Injection:
    path = rng.choice(_world_files(copy))
    what = _flip_byte(path, rng)
    return Injection(f"{path.relative_to(copy.world)}: {what}", touches={"world"})


def world_truncation(p: Pristine, copy: ScratchCopy, rng: random.Random) -> Injection:
    path = rng.choice(_world_files(copy))
    what = _truncate(path, rng)
    return Injection(f"{path.relative_to(copy.world)}: {what}", touches={"world"})


def permission_flip(p: Pristine, copy: ScratchCopy, rng: random.Random) -> Injection:
    """One access-relevant field of one entity changed (through the base revision's changeset)."""
    base = p.package.revision_names[0]
    state = p.package.revision(base)
    people, roles = sorted(state.people), sorted(state.roles)
    departments = sorted(state.departments)
    choices: list[Callable[[], tuple[str, dict[str, Any], str]]] = []
    if state.permissions:
        def rule_subject() -> tuple[str, dict[str, Any], str]:
            rule = state.permissions[rng.choice(sorted(state.permissions))]
            subject = rule.subject.model_dump(mode="json")
            field_name = rng.choice(["everyone", "owner", "roles", "departments", "persons"])
            if field_name in ("everyone", "owner"):
                subject[field_name] = not subject[field_name]
            else:
                pool = {"roles": roles, "departments": departments, "persons": people}[field_name]
                current = list(subject[field_name])
                if current and rng.random() < 0.5:
                    current.remove(rng.choice(current))
                elif pool:
                    current.append(rng.choice(pool))
                subject[field_name] = sorted(set(current))
            return "permissions", {"id": rule.id, "set": {"subject": subject}}, f"rule {rule.id} subject.{field_name}"

        def rule_resource() -> tuple[str, dict[str, Any], str]:
            rule = state.permissions[rng.choice(sorted(state.permissions))]
            resource = rule.resource.model_dump(mode="json")
            levels = [c.value for c in Classification]
            current = set(resource["classifications"])
            flip = rng.choice(levels)
            current ^= {flip}
            resource["classifications"] = sorted(current)
            return "permissions", {"id": rule.id, "set": {"resource": resource}}, f"rule {rule.id} classification {flip}"

        choices += [rule_subject, rule_resource]
    if state.documents:
        def document_access() -> tuple[str, dict[str, Any], str]:
            doc = state.documents[rng.choice(sorted(state.documents))]
            field_name = rng.choice(["classification", "owner", "shared_with", "verifier_only", "department"])
            if field_name == "classification":
                value: Any = rng.choice([c.value for c in Classification if c != doc.classification])
            elif field_name == "owner":
                value = rng.choice([None, *people])
            elif field_name == "shared_with":
                value = [*(s.model_dump(mode="json") for s in doc.shared_with), {"persons": [rng.choice(people)]}]
            elif field_name == "verifier_only":
                value = not doc.verifier_only
            else:
                value = rng.choice([None, *departments])
            return "documents", {"id": doc.id, "set": {field_name: value}}, f"document {doc.id} {field_name}"

        choices.append(document_access)
    if state.records:
        def record_access() -> tuple[str, dict[str, Any], str]:
            rec = state.records[rng.choice(sorted(state.records))]
            field_name = rng.choice(["classification", "verifier_only", "department"])
            if field_name == "classification":
                value: Any = rng.choice([c.value for c in Classification if c != rec.classification])
            elif field_name == "verifier_only":
                value = not rec.verifier_only
            else:
                value = rng.choice([None, *departments])
            return "records", {"id": rec.id, "set": {field_name: value}}, f"record {rec.id} {field_name}"

        choices.append(record_access)

    def person_org() -> tuple[str, dict[str, Any], str]:
        person = state.people[rng.choice(people)]
        if rng.random() < 0.5 and departments:
            return "people", {"id": person.id, "set": {"department": rng.choice(departments)}}, f"person {person.id} department"
        return "people", {"id": person.id, "set": {"roles": sorted({*person.roles, rng.choice(roles)}) if roles else []}}, \
            f"person {person.id} roles"

    choices.append(person_org)
    if state.groups:
        def group_members() -> tuple[str, dict[str, Any], str]:
            group = state.groups[rng.choice(sorted(state.groups))]
            members = set(group.members)
            members ^= {rng.choice(people)}
            return "groups", {"id": group.id, "set": {"members": sorted(members)}}, f"group {group.id} members"

        choices.append(group_members)
    collection, update, what = rng.choice(choices)()
    edit_changeset(copy.world, base, update={collection: [update]})
    return Injection(f"permission flip: {what} → {update['set']}", touches={"world"})


def date_shift(p: Pristine, copy: ScratchCopy, rng: random.Random) -> Injection:
    """One date of one document, record event or message moved by ±1 day … ±1 year."""
    base = p.package.revision_names[0]
    state = p.package.revision(base)
    delta = dt.timedelta(days=rng.choice(_SHIFTS) * rng.choice((-1, 1)))
    pools = [name for name in ("documents", "records", "messages") if state.collection(name)]
    if not pools:
        raise NotApplicable("the world has no dated items")
    collection = rng.choice(pools)
    item = state.collection(collection)[rng.choice(sorted(state.collection(collection)))]
    if collection == "documents":
        field_name = "visible_until" if item.visible_until and rng.random() < 0.3 else "visible_from"
        value = (getattr(item, field_name) + delta).isoformat()
        update = {"id": item.id, "set": {field_name: value}}
    elif collection == "records":
        index = rng.randrange(len(item.events))
        events = [e.model_dump(mode="json") for e in item.events]
        events[index]["date"] = (item.events[index].date + delta).isoformat()
        field_name = f"events[{index}].date"
        update = {"id": item.id, "set": {"events": events}}
    else:
        field_name = "date"
        update = {"id": item.id, "set": {"date": (item.date + delta).isoformat()}}
    edit_changeset(copy.world, base, update={collection: [update]})
    return Injection(f"date shift: {collection[:-1]} {item.id} {field_name} by {delta.days:+d} days", touches={"world"})


def _manifest_files(copy: ScratchCopy) -> list[Path]:
    return sorted(p for p in copy.manifests.rglob("*.json") if p.is_file())


def manifest_byte_flip(p: Pristine, copy: ScratchCopy, rng: random.Random) -> Injection:
    path = rng.choice(_manifest_files(copy))
    what = _flip_byte(path, rng)
    return Injection(f"{path.relative_to(copy.manifests)}: {what}", touches={"manifests"})


def manifest_truncation(p: Pristine, copy: ScratchCopy, rng: random.Random) -> Injection:
    path = rng.choice(_manifest_files(copy))
    what = _truncate(path, rng)
    return Injection(f"{path.relative_to(copy.manifests)}: {what}", touches={"manifests"})


def staged_byte_flip(p: Pristine, copy: ScratchCopy, rng: random.Random) -> Injection:
    """One byte of one file of one staged package flipped right after staging."""
    if copy.overlays is None:
        raise NotApplicable("the world has no task overlays")
    pick_task, pick_file, seed = rng.random(), rng.random(), rng.randrange(1 << 30)
    side = rng.choice(("candidate", "verifier"))
    injection = Injection(f"staged byte flip ({side})", touches={f"staged-{side}"})

    def tamper(tasks: list[Any]) -> None:
        if not tasks:
            return
        task = tasks[int(pick_task * len(tasks))]
        root = task.out / side
        files = sorted(x for x in root.rglob("*") if x.is_file())
        victim = files[int(pick_file * len(files))]
        what = _flip_byte(victim, random.Random(seed))
        injection.notes.append(f"{task.label} {side}/{victim.relative_to(root).as_posix()}: {what}")

    injection.tamper_staged = tamper
    injection.tamper_targets = lambda tasks: [tasks[int(pick_task * len(tasks))]] if tasks else []
    return injection


def _seeded(case_name: str) -> Mutator:
    case = next(c for c in CASES if c.name == case_name)

    def mutate(p: Pristine, copy: ScratchCopy, rng: random.Random) -> Injection:
        return case.inject(p, copy, rng)

    return mutate


MUTATORS: dict[str, Mutator] = {
    **{f"seeded:{c.name}": _seeded(c.name) for c in CASES},
    "world-byte-flip": world_byte_flip,
    "world-truncation": world_truncation,
    "permission-flip": permission_flip,
    "date-shift": date_shift,
    "manifest-byte-flip": manifest_byte_flip,
    "manifest-truncation": manifest_truncation,
    "staged-byte-flip": staged_byte_flip,
}


# -- the oracle --------------------------------------------------------------------------------


View = tuple[str, ...]


def views(world: Path, keys: list[tuple[str, str, str]], known: tuple[dict[str, str], dict[Any, View]] | None = None,
          reach: Reach | None = None, sources: WorldSources | None = None) -> dict[tuple[str, str, str], View] | str:
    """What each (rev, date, seat) of `keys` shows, rebuilt in memory from the world source alone:
    `("bundle", sha)` plus sorted `(path, sha)`; a view that cannot be built is `("error", why)`.
    A world that does not load gives the reason as a string.

    `known` is (revision digests, views) of the unmutated world: a revision whose canonical digest
    is unchanged has the same views (a view is a function of the revision's state, which the digest
    covers, entities and templates alike — what the render memo relies on too), so only revisions a
    mutation reached are rendered again. With `reach` (what each shared file of the unmutated world
    was rendered from, `Reach.of`), a revision that did change renders again only the files its
    change reaches (`worldkit.materialize.reach`); the others keep the unmutated digest.
    The seats of one (rev, date) share its snapshot (`shared_snapshots`): it is folded once."""
    with shared_snapshots():
        return _views(world, keys, known, reach, sources)


def _views(world: Path, keys: list[tuple[str, str, str]], known: tuple[dict[str, str], dict[Any, View]] | None,
           reach: Reach | None, sources: WorldSources | None) -> dict[tuple[str, str, str], View] | str:
    try:
        package = load_mutated(world, sources) if known is not None else load_world(world)
    except WorldkitError as error:
        return error.message
    except Exception as error:  # noqa: BLE001 - a mutated generator may fail in any way
        return f"{type(error).__name__}: {error}"
    found: dict[tuple[str, str, str], tuple[str, ...]] = {}
    shared: dict[tuple[str, str], dict[str, str]] = {}
    policies: dict[str, Policy] = {}  # one per revision (a pure function of its state), shared by its seats
    changes: dict[str, Change] = {}
    same = _unchanged_revisions(package, known[0]) if known is not None else set()
    for key in sorted(keys):
        rev, date, seat = key
        if rev in same and known is not None and key in known[1]:
            found[key] = known[1][key]
            continue
        # Shared files render from the seat-independent snapshot: digest each once per (rev, date).
        cache = shared.setdefault((rev, date), {})
        try:
            state = package.revision(rev)
            if rev not in policies:
                policies[rev] = Policy(state)
            projection = plan_projection(state, dt.date.fromisoformat(date), seat, policies[rev])
            reused: dict[tuple[str, str, str], tuple[str, Reads]] = {}
            change = None
            if reach is not None and rev in reach.states:
                if rev not in changes:
                    changes[rev] = change_between(reach.states[rev], state)
                change, reused = changes[rev], reach.files.get((rev, date), {})
            view: dict[str, str] = {}
            for planned in projection.files():
                if planned.path in SEAT_SPECIFIC:
                    view[planned.path] = sha256_bytes(planned.produce())
                    continue
                if planned.path not in cache:
                    hit = reused.get((planned.path, planned.surface, planned.source))
                    if change is not None and hit is not None and not change.reaches(hit[1]):
                        cache[planned.path] = hit[0]
                    else:
                        cache[planned.path] = sha256_bytes(planned.produce())
                view[planned.path] = cache[planned.path]
            found[key] = ("bundle", projection.bundle()["sha256"], *(f"{p} {h}" for p, h in sorted(view.items())))
        except Exception as error:  # noqa: BLE001 - any failure to build is a changed view
            found[key] = ("error", str(getattr(error, "message", error)))
    return found


@dataclass
class Reach:
    """What each shared file of the unmutated world's views was rendered from, with its digest."""

    states: dict[str, WorldState]
    """The unmutated state of each revision."""
    files: dict[tuple[str, str], dict[tuple[str, str, str], tuple[str, Reads]]]
    """(rev, date) → (path, surface, source) → (sha256, what its bytes were rendered from)."""

    @classmethod
    def of(cls, package: WorldPackage, before: dict[tuple[str, str, str], View]) -> Reach:
        """Trace every shared file of the views `before` (of `package`); each (rev, date) renders its
        files' templates once more, noting what they read."""
        with shared_snapshots():
            return cls._of(package, before)

    @classmethod
    def _of(cls, package: WorldPackage, before: dict[tuple[str, str, str], View]) -> Reach:
        states = _states(package)
        files: dict[tuple[str, str], dict[tuple[str, str, str], tuple[str, Reads]]] = {}
        tracers: dict[tuple[str, str], TracingRenderer] = {}
        for key, view in sorted(before.items()):
            rev, date, seat = key
            if view[0] == "error" or rev not in states:
                continue
            digests = dict(entry.rsplit(" ", 1) for entry in view[2:])  # a path may hold spaces
            slot = files.setdefault((rev, date), {})
            day = dt.date.fromisoformat(date)
            tracer = tracers.get((rev, date))
            if tracer is None:
                tracer = tracers[(rev, date)] = TracingRenderer(as_of(states[rev], day))
            for planned in plan_projection(states[rev], day, seat).files():
                where = (planned.path, planned.surface, planned.source)
                if planned.path in SEAT_SPECIFIC or where in slot or planned.path not in digests:
                    continue
                slot[where] = (digests[planned.path], tracer.reads(planned.surface, planned.source))
        return cls(states, files)


def _unchanged_revisions(package: WorldPackage, digests: dict[str, str]) -> set[str]:
    same = set()
    for rev in package.revision_names:
        try:
            if package.revision(rev).digest == digests.get(rev):
                same.add(rev)
        except Exception:  # noqa: BLE001 - a revision that cannot be folded is rendered (and fails) below
            continue
    return same


def revision_digests(package: WorldPackage) -> dict[str, str]:
    return {rev: package.revision(rev).digest for rev in package.revision_names}


def changed_views(before: dict[tuple[str, str, str], tuple[str, ...]], world: Path,
                  digests: dict[str, str] | None = None, reach: Reach | None = None,
                  sources: WorldSources | None = None) -> list[str]:
    """The (rev, date, seat) whose view differs between `before` and the world now (why, for each);
    with the unmutated world's revision `digests`, only revisions whose digest changed are rendered,
    and with its `reach`, only the files of those a change reaches."""
    after = views(world, list(before), (digests, before) if digests is not None else None, reach, sources)
    if isinstance(after, str):
        return [f"world no longer loads: {after}"]
    changed = []
    for key in sorted(before):
        if after[key] != before[key]:
            label = "/".join(key)
            changed.append(f"{label}: cannot be built ({after[key][1]})" if after[key][0] == "error" else label)
    return changed


# -- the campaign ------------------------------------------------------------------------------


@dataclass
class MutationReport:
    seed: int
    rows: list[dict[str, Any]] = field(default_factory=list)
    baseline_failures: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        attempted = len(self.rows)
        detected = sum(r["detected"] for r in self.rows)
        changing = [r for r in self.rows if r["projection_changing"]]
        changing_detected = sum(r["detected"] for r in changing)
        by_kind: dict[str, dict[str, int]] = {}
        for row in self.rows:
            slot = by_kind.setdefault(row["kind"], {"attempted": 0, "detected": 0, "projection_changing": 0})
            slot["attempted"] += 1
            slot["detected"] += row["detected"]
            slot["projection_changing"] += row["projection_changing"]
        caught_by = Counter(r["detected_by"] for r in self.rows if r["detected"])
        return {
            "seed": self.seed,
            "attempted": attempted,
            "projection_changing": len(changing),
            "detected": detected,
            "rate": round(detected / attempted, 4) if attempted else 0.0,
            "projection_changing_detected": changing_detected,
            "projection_changing_rate": round(changing_detected / len(changing), 4) if changing else 1.0,
            "undetected_projection_changing": [r["mutation"] for r in changing if not r["detected"]],
            "undetected_benign": [r["mutation"] for r in self.rows if not r["detected"] and not r["projection_changing"]],
            "no_change_redrawn": [m for r in self.rows for m in r.get("no_change_redrawn", [])],
            "by_kind": dict(sorted(by_kind.items())),
            "first_detected_by": dict(sorted(caught_by.items())),
            "baseline_failures": self.baseline_failures,
            "mutations": self.rows,
        }


def run_mutations(
    world: str | Path | WorldPackage,
    count: int,
    seed: int,
    *,
    manifests: Path | None = None,
    overlays: Path | None = None,
    scratch: Path | None = None,
    kinds: list[str] | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    jobs: int | None = None,
    incremental: bool = True,
) -> MutationReport:
    """Apply `count` random single mutations (seeded), each to a fresh scratch copy, and verify each.

    Mutations are drawn here, one after another; each is verified in a forked child (`jobs` at
    once; None: one per core, or $WORLDKIT_VERIFY_JOBS; 1: here), which reuses the untouched
    copy's work: its loaded world, rebuilds, staged packages, and the verdict of every check whose
    inputs the mutation left alone (`worldkit.verify.reuse`). The report is the same for any `jobs`,
    and the same with `incremental=False`, which verifies every mutation from scratch (the world
    loaded again, every view rendered again, every watched check run): the reference the reuse is
    tested against. `progress(label, done, count)` is told after the baseline and after each mutation, in order."""
    from worldkit.verify.fanout import can_fork, fork_call, fork_map
    from worldkit.verify.schedule import default_jobs

    rng = random.Random(seed)
    report = MutationReport(seed=seed)
    # The untouched staged packages are lent to every mutation's checks, which digest their files
    # again and again: remembered by inode (`remembered_digests`), each is read once.
    with scratch_dir(scratch, prefix="worldkit-mutations-") as root, remembered_digests():
        base = prepare_copy(world, root / "base", manifests, overlays)
        pristine = load_pristine(base)
        workers = default_jobs() if jobs is None else max(1, jobs)
        if incremental and workers > 1 and can_fork():
            # The oracle's set-up reads the world alone: it runs in a child beside the baseline,
            # whose checks are spread over processes too.
            oracle = fork_call(lambda: _oracle_setup(base, pristine))
            try:
                traced = traced_baseline(base, fresh_dir(root, "baseline-"), pristine.package, jobs=workers)
            except BaseException:
                with contextlib.suppress(Exception):
                    oracle()  # reaped; the baseline's error is the one to report
                raise
            before, reach_files, source_fields = oracle()
        else:
            before, reach_files, source_fields = _oracle_setup(base, pristine, incremental)
            traced = None
        if isinstance(before, str):
            raise WorldkitError(f"the world does not load: {before}")
        if traced is None:
            traced = traced_baseline(base, fresh_dir(root, "baseline-"), pristine.package)
        baseline = traced.baseline
        report.baseline_failures = baseline.failed + baseline.errored
        # A check that already fails cannot show a mutation: leave it out, so that nothing is
        # counted as detected merely because the untouched world fails too.
        watched = [c for c in check_ids() if c not in baseline.not_passing]
        names = sorted(kinds or MUTATORS)
        if base.overlays is None:
            names = [n for n in names if n not in _NEEDS_OVERLAYS]
        reach = Reach(_states(pristine.package), reach_files) if reach_files is not None else None
        signature = tree_signature(list(baseline.staged.values())) if incremental and baseline.staged else None
        if signature is not None:
            for package in baseline.staged.values():
                scan(package)  # remembered here, so forked children inherit the digests
        sources = WorldSources(pristine.package, *source_fields) if source_fields is not None else None
        shared = _Shared(pristine, traced, watched, before, revision_digests(pristine.package), incremental, reach,
                         signature, sources)
        if progress:
            progress("baseline verified", 0, count)

        def drawn() -> Iterator[_Drawn]:
            for number in range(1, count + 1):
                yield _draw(number, names, rng, pristine, base, fresh_dir(root, f"m{number:04d}-"), baseline)

        def verify(mutation: _Drawn) -> dict[str, Any]:
            try:
                return _evaluate(mutation, shared)
            finally:
                shutil.rmtree(mutation.case_root, ignore_errors=True)

        def done(index: int, row: dict[str, Any]) -> None:
            report.rows.append(row)
            if progress:
                progress(f"mutation {row['n']}: {row['kind']} ({'detected' if row['detected'] else 'not detected'})",
                         row["n"], count)

        # A few mutations per forked child: each fork (and the pages its child then copies on
        # write) costs about as much as a cheap mutation; batches shrink near the end, so that
        # the last ones share out between the workers.
        fork_map(drawn(), verify, workers, done, batch=lambda started: min(8, (count - started) // (3 * workers)))
    return report


def _oracle_setup(base: ScratchCopy, pristine: Pristine, incremental: bool = True) -> tuple[Any, Any, Any]:
    """The untouched views, what their shared files were rendered from (`Reach.files`) and the
    world's sources (`WorldSources` but its package): what the oracle needs, from the world alone."""
    before = views(base.world, pristine.keys)
    if isinstance(before, str) or not incremental:
        return before, None, None
    sources = WorldSources.of(pristine.package)
    fields = (sources.files, sources.data, sources.generator_files, sources.generator_fields)
    return before, Reach.of(pristine.package, before).files, fields


def _states(package: WorldPackage) -> dict[str, WorldState]:
    return {rev: package.revision(rev) for rev in package.revision_names}


_NEEDS_OVERLAYS = {"staged-byte-flip", "seeded:renamed-verifier-file", "seeded:deleted-evidence-source",
                   "seeded:verifier-file-on-candidate-side"}


@dataclass
class _Shared:
    """What every mutation of one campaign reads: the untouched copy and the baseline verify run over it."""

    pristine: Pristine
    traced: TracedBaseline
    watched: list[str]
    before: dict[Any, Any]
    revision_digests: dict[str, str]
    incremental: bool = True
    """False: reuse nothing from the baseline (the reference the reuse is tested against)."""
    reach: Reach | None = None
    """What each shared file of the untouched views was rendered from (None: render every file again)."""
    staged_signature: dict[str, tuple[int, int, int, int]] | None = None
    """`tree_signature` of the baseline's staged packages (None: lend copies of them, not hard links)."""
    sources: WorldSources | None = None
    """The untouched world's sources and generator inputs (None: load each mutated world in full)."""


@dataclass
class _Drawn:
    """One drawn mutation, injected into its scratch copy and not yet verified."""

    number: int
    kind: str
    copy: ScratchCopy
    injection: Injection
    digests: Digests
    case_root: Path
    no_change: list[str]


def _draw(number: int, names: list[str], rng: random.Random, pristine: Pristine, base: ScratchCopy,
          case_root: Path, baseline: Baseline) -> _Drawn:
    """Draw a mutation and inject it (the campaign's random choices are all made here, in order)."""
    no_change: list[str] = []
    for _attempt in range(20):
        kind = rng.choice(names)
        copy = base.clone(fresh_dir(case_root, "copy-"))
        try:
            injection = MUTATORS[kind](pristine, copy, rng)
        except (NotApplicable, IndexError):
            shutil.rmtree(copy.root, ignore_errors=True)
            continue
        digests = Digests.of(copy)
        if not changed_inputs(baseline, digests, injection):
            # A mutation that changes no byte (a value set to itself, say) tests nothing: it is
            # drawn again and reported apart, never counted as undetected.
            no_change.append(f"{kind}: {injection.description}")
            shutil.rmtree(copy.root, ignore_errors=True)
            continue
        return _Drawn(number, kind, copy, injection, digests, case_root, no_change)
    raise RuntimeError("no applicable mutation kind")  # pragma: no cover - every world supports the world-source kinds


def _evaluate(mutation: _Drawn, shared: _Shared) -> dict[str, Any]:
    """Verify one drawn mutation: the oracle's verdict (does any seat see a change?) and the checks'."""
    copy, injection, case_root = mutation.copy, mutation.injection, mutation.case_root
    baseline = shared.traced.baseline
    reasons: list[str] = []
    if "world" in injection.touches:
        if shared.incremental:
            reasons += changed_views(shared.before, copy.world, shared.revision_digests, shared.reach, shared.sources)
        else:
            reasons += changed_views(shared.before, copy.world)
    changed = changed_inputs(baseline, mutation.digests, injection)
    try:
        failed, errors = _failing_checks(mutation, shared, changed)
        blocked = None
    except Exception as error:  # noqa: BLE001 - verify refuses a world that does not load, whatever the cause
        failed, errors, blocked = [], [], f"world does not load ({type(error).__name__})"
    description = injection.description + (f": {'; '.join(injection.notes)}" if injection.notes else "")
    if "staged-candidate" in injection.touches and injection.notes:
        reasons.append("staged candidate package changed")
    if "server" in injection.touches:
        reasons.append("tool surface changed")
    detected_by = failed[0] if failed else ("world-does-not-load" if blocked else ("check-error" if errors else ""))
    scrub = lambda text: text.replace(str(copy.root), "<copy>").replace(str(case_root), "<scratch>")  # noqa: E731
    return {
        "n": mutation.number,
        "kind": mutation.kind,
        "mutation": scrub(f"{mutation.kind}: {description}"),
        "projection_changing": bool(reasons),
        "changed": [scrub(r) for r in reasons[:5]],
        "detected": bool(failed or blocked or errors),
        "detected_by": detected_by,
        "no_change_redrawn": mutation.no_change,
    }


def _failing_checks(mutation: _Drawn, shared: _Shared, changed: frozenset[str]) -> tuple[list[str], list[str]]:
    """(failed, errored) check ids of verify over the mutated copy, cheapest first, up to the first failure.

    Only the checks that read an input the mutation changed run (`TracedBaseline.to_run`): the
    others read what the baseline read and pass as they did there. An unchanged world is the
    pristine package moved onto the copy (no load); the baseline's rebuilds and staged packages
    are lent where their inputs are unchanged."""
    copy, injection = mutation.copy, mutation.injection
    baseline = shared.traced.baseline
    if not shared.incremental:
        return failing_checks(copy, fresh_dir(mutation.case_root, "run-"), injection, only=shared.watched,
                              stop_on_fail=True)
    same_world = WORLD not in changed
    package = shared.pristine.package.rebased(copy.world) if same_world else load_mutated(copy.world, shared.sources)
    only = shared.traced.to_run(shared.watched, changed)
    if not only:
        return [], []
    work = fresh_dir(mutation.case_root, "run-")
    ctx = VerifyContext(
        package=package, manifests=copy.manifests, work=work, overlays=copy.overlays,
        repeats=1, server_factory=injection.server_factory, tamper_staged=injection.tamper_staged,
        store=injection.store, runs=injection.runs,
    )
    linked = False
    if same_world:
        ctx._builds.update(baseline.builds)
        if OVERLAYS not in changed:
            ctx.staged_from = baseline.staged
            if shared.staged_signature is not None:
                # The untouched packages are lent as they are (nothing copied, nothing linked: the
                # checks only read them); those the hook may change are copied first.
                linked = True
                ctx.staged_copy = lend_tree
                if injection.tamper_staged is not None:
                    ctx.tamper_staged = _unshared(injection, baseline.staged, work / "staged")
    results = run_checks(ctx, only=only, exclude_tags={REPEAT}, stop_on_fail=True, cheapest_first=True)
    if linked and tree_signature(list(baseline.staged.values())) != shared.staged_signature:
        raise RuntimeError(f"verifying mutation {mutation.number} ({mutation.kind}) wrote into a staged package it "
                           "was lent; declare what its staging hook changes (Injection.tamper_targets)")
    return [r.id for r in results if r.status == "fail"], [f"{r.id}: {r.reason}" for r in results if r.status == "error"]


def _unshared(injection: Injection, staged: dict[str, Path], place: Path | None = None) -> Callable[[list[Any]], None]:
    """The injection's staging hook, run after the packages it may change (all, if it does not
    say) are made real copies of the untouched ones instead of hard links to them, or instead of
    the untouched packages themselves (`lend_tree`: the copy goes to `place`/name, where the run
    keeps a link to the lent package)."""
    hook, targets = injection.tamper_staged, injection.tamper_targets
    assert hook is not None

    def tamper(tasks: list[Any]) -> None:
        for task in targets(tasks) if targets is not None else tasks:
            if task.label in staged and task.out is not None:
                source = staged[task.label]
                if place is not None and Path(task.out) == source:
                    own = place / source.name
                    if own.is_symlink():
                        own.unlink()
                    task.out = copy_tree(source, own)
                    continue
                shutil.rmtree(task.out)
                copy_tree(source, task.out)
        hook(tasks)

    return tamper


_MUTATED: dict[tuple[Path, tuple], WorldPackage | Exception] = {}


def load_mutated(world: Path, sources: WorldSources | None = None) -> WorldPackage:
    """`load_world` of a mutated copy (once per copy, a failure too), without storing it in the
    cross-process world cache: no later load asks for a mutated copy's sources. With the untouched
    world's `sources`, a copy whose data files and generator inputs are unchanged takes its base
    entities from the untouched package (`WorldSources.entities`)."""
    root = resolve_world(world)
    key = (root, _tree_signature(root))
    found = _MUTATED.get(key)
    if found is None:
        try:
            found = _load_package(root, sources.entities(root) if sources is not None else None)
            for name in found.revision_names:
                found.revision(name).digest  # noqa: B018 - as load_world does: a revision that cannot be digested fails the load
        except Exception as error:  # noqa: BLE001 - remembered and raised again, as a second load would
            found = error
        _MUTATED.clear()
        _MUTATED[key] = found
    if isinstance(found, Exception):
        raise found
    return found

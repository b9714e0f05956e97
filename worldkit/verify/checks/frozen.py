"""Checks of the frozen state: revision digests, manifest integrity, pins, clean and repeated rebuilds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from worldkit.canon import sha256_json
from worldkit.check_result import CheckResult, Item
from worldkit.errors import WorldkitError
from worldkit.frozen.index import PROJECTIONS_DIR
from worldkit.materialize.manifest import Entry, Manifest, TreeDiff
from worldkit.verify.checks import REPEAT, BaseCheck, register
from worldkit.verify.build import Built
from worldkit.verify.context import VerifyContext

_NO_INDEX = "no readable frozen index (see manifest-integrity)"


def _ctx_item(kind: str, key: tuple[str, str, str], **fields: str | None) -> Item:
    rev, date, seat = key
    return Item(kind=kind, rev=rev, date=date, seat=seat, **fields)


@register
class RevisionDigests(BaseCheck):
    id = "revision-digests"
    purpose = "Every revision's canonical digest equals the frozen one in revisions.json."
    fix = (
        "If the world change is intended, re-freeze with `worldkit freeze --world W` and review the diff; "
        "otherwise restore the world source so each revision hashes to its frozen digest."
    )

    def run(self, ctx: VerifyContext) -> CheckResult:
        index = ctx.index
        if index is None:
            return self.outcome([Item(kind="missing", path="revisions.json", detail=str(ctx.index_or_error))])
        items: list[Item] = []
        package = ctx.package
        if index.world != package.id:
            items.append(Item(kind="world-mismatch", path="revisions.json", expected=package.id, actual=index.world))
        frozen = {r.name: r for r in index.revisions}
        for name in package.revision_names:
            entry = frozen.get(name)
            actual = package.revision(name).digest
            if entry is None:
                items.append(Item(kind="unfrozen", rev=name, actual=actual, detail="revision exists but is not frozen"))
                continue
            if entry.digest != actual:
                items.append(Item(kind="changed", rev=name, expected=entry.digest, actual=actual,
                                  detail="the revision's canonical state differs from the frozen one"))
            parent = package.revision_spec(name).parent
            if entry.parent != parent:
                items.append(Item(kind="parent-changed", rev=name, expected=entry.parent, actual=parent))
        for name in sorted(set(frozen) - set(package.revision_names)):
            items.append(Item(kind="unexpected", rev=name, expected=frozen[name].digest,
                              detail="frozen revision no longer exists in the world"))
        return self.outcome(items, revisions=len(package.revision_names),
                            matched=len(package.revision_names) - len([i for i in items if i.rev]))


@register
class ManifestIntegrity(BaseCheck):
    id = "manifest-integrity"
    purpose = "Every frozen projection manifest is present, untampered (fingerprint) and matches the index."
    fix = "Restore the manifest from version control, or re-freeze with `worldkit freeze --world W` if the world changed on purpose."

    def run(self, ctx: VerifyContext) -> CheckResult:
        index = ctx.index
        if index is None:
            return self.outcome([Item(kind="missing", path="revisions.json", detail=str(ctx.index_or_error))])
        items: list[Item] = []
        for entry in index.projections:
            manifest = ctx.frozen[entry.key]
            if not isinstance(manifest, Manifest):
                items.append(_ctx_item("unreadable", entry.key, path=entry.relpath, detail=manifest))
                continue
            if manifest.fingerprint != entry.fingerprint:
                items.append(_ctx_item("fingerprint-mismatch", entry.key, path=entry.relpath,
                                       expected=entry.fingerprint, actual=manifest.fingerprint,
                                       detail="the manifest's fingerprint differs from the one in revisions.json"))
            if len(manifest.files) != entry.files:
                items.append(_ctx_item("count-mismatch", entry.key, path=entry.relpath,
                                       expected=str(entry.files), actual=str(len(manifest.files))))
        indexed = {p.relpath for p in index.projections}
        folder = ctx.manifests / PROJECTIONS_DIR
        on_disk = {p.relative_to(ctx.manifests).as_posix() for p in folder.rglob("*.json")} if folder.is_dir() else set()
        for rel in sorted(on_disk - indexed):
            items.append(Item(kind="unexpected", path=rel, detail="projection manifest not listed in revisions.json"))
        # Every seat of every frozen revision must be frozen at every frozen date.
        expected_keys = {
            (rev, date, seat)
            for rev in ctx.package.revision_names
            if index.revision(rev) is not None
            for date in index.dates
            for seat in ctx.package.revision(rev).seats
        }
        for key in sorted(expected_keys - {p.key for p in index.projections}):
            items.append(_ctx_item("unfrozen", key, detail="seat projection exists in the world but is not frozen"))
        return self.outcome(items, projections=len(index.projections), readable=len(ctx.readable))


@register
class RevisionPins(BaseCheck):
    id = "revision-pins"
    purpose = "Each frozen projection names the world, revision digest, date and seat it is filed under."
    fix = "Re-freeze the projection (`worldkit freeze`) so its inputs match its revision, or restore it from version control."

    def run(self, ctx: VerifyContext) -> CheckResult:
        index = ctx.index
        if index is None:
            return self.skip(_NO_INDEX)
        items: list[Item] = []
        for key, manifest in sorted(ctx.readable.items()):
            rev, date, seat = key
            inputs = manifest.inputs
            frozen_rev = index.revision(rev)
            where = f"{PROJECTIONS_DIR}/{rev}/{date}/{seat}.json"
            for field_name, expected, actual in (
                ("world", ctx.package.id, inputs.world),
                ("rev", rev, inputs.rev),
                ("date", date, inputs.date),
                ("seat", seat, inputs.seat),
                ("revision_digest", frozen_rev.digest if frozen_rev else None, inputs.revision_digest),
            ):
                if expected != actual:
                    items.append(_ctx_item("revision-mismatch" if field_name in ("rev", "revision_digest") else "pin-mismatch",
                                           key, path=f"inputs.{field_name}", expected=expected, actual=actual, where=where))
            if rev in ctx.package.revision_names:
                seat_model = ctx.package.revision(rev).seats.get(seat)
                if seat_model is not None and seat_model.person != inputs.person:
                    items.append(_ctx_item("pin-mismatch", key, path="inputs.person", expected=seat_model.person,
                                           actual=inputs.person, where=where))
        return self.outcome(items, projections=len(ctx.readable))


@register
class ProjectionRebuild(BaseCheck):
    id = "projection-rebuild"
    cost = 1
    purpose = "A clean rebuild of every frozen projection has exactly the frozen files, digests and mtimes."
    fix = (
        "Find why the world source no longer renders the frozen bytes (template, data or generator change); "
        "restore it, or re-freeze with `worldkit freeze` if the change is intended."
    )

    def run(self, ctx: VerifyContext) -> CheckResult:
        if ctx.index is None:
            return self.skip(_NO_INDEX)
        items: list[Item] = []
        identical = 0
        for key, frozen in sorted(ctx.readable.items()):
            rev, date, seat = key
            if rev not in ctx.package.revision_names:
                items.append(_ctx_item("unbuildable", key, detail=f"revision {rev} no longer exists"))
                continue
            try:
                built = ctx.rebuild(key)
            except WorldkitError as error:
                items.append(_ctx_item("unbuildable", key, detail=error.message))
                continue
            found = _compare(built.tree(), frozen, built.manifest, key)
            if not found:
                expected = {e.path: e.mtime for e in frozen.files}
                found = [_ctx_item("mtime", key, path=p, expected=expected[p], actual=t,
                                   detail="the file's modification time on disk is not its frozen intended date")
                         for p, t in sorted(built.stamps().items()) if expected.get(p) != t]
            items += found
            identical += not found
        return self.outcome(items, projections=len(ctx.readable), identical=identical)


def _compare(on_disk: dict[str, str], frozen: Manifest, rebuilt: Manifest, key: tuple[str, str, str]) -> list[Item]:
    items: list[Item] = []
    diff = diff_against(on_disk, frozen.files)
    actual = {e.path: e.sha256 for e in rebuilt.files}
    expected = {e.path: e.sha256 for e in frozen.files}
    items += [_ctx_item("missing", key, path=p, expected=expected[p]) for p in diff.missing]
    items += [_ctx_item("changed", key, path=p, expected=e, actual=a) for p, e, a in diff.changed]
    items += [_ctx_item("unexpected", key, path=p, actual=actual.get(p)) for p in diff.unexpected]
    if not items:
        by_path = frozen.by_path()
        for entry in rebuilt.files:
            if entry != by_path.get(entry.path):
                items.append(_ctx_item("metadata", key, path=entry.path,
                                       expected=json.dumps(by_path[entry.path].model_dump(), sort_keys=True),
                                       actual=json.dumps(entry.model_dump(), sort_keys=True)))
        if rebuilt.tool_bundle_sha256 != frozen.tool_bundle_sha256:
            items.append(_ctx_item("tool-bundle", key, path="tools.json", expected=frozen.tool_bundle_sha256,
                                   actual=rebuilt.tool_bundle_sha256))
        if not items and rebuilt.fingerprint != frozen.fingerprint:
            items.append(_ctx_item("fingerprint", key, expected=frozen.fingerprint, actual=rebuilt.fingerprint,
                                   detail="same files, different inputs (revision digest, person or date)"))
    return items


def diff_against(actual: dict[str, str], entries: list[Entry]) -> TreeDiff:
    """What `diff_tree` reports, from an already scanned tree."""
    expected = {e.path: e.sha256 for e in entries}
    return TreeDiff(
        missing=sorted(set(expected) - set(actual)),
        changed=sorted((p, expected[p], actual[p]) for p in set(expected) & set(actual) if expected[p] != actual[p]),
        unexpected=sorted(set(actual) - set(expected)),
    )


# -- reproducibility ---------------------------------------------------------------------------


BACKGROUND_NICE = 3
"""Priority lowered for short work nothing else waits for (the fresh rebuilds that read the office
cache, the independent checks): it fills the cores while the shared rebuilds, staging and the checks
that wait for them run first. The longest piece of work, the rebuild with the caches off, keeps
its priority (it starts first and would otherwise finish last)."""


def _spawn_rebuild(world: Path, out: Path, hashseed: str, *, office_cache: bool) -> subprocess.Popen[str]:
    """A fresh interpreter that rebuilds the targets it reads on stdin (see `worldkit.verify.rebuild`).

    Without `office_cache` it renders office files anew too (the cross-process office cache off);
    with it, it is short and runs at `BACKGROUND_NICE`."""
    nice = BACKGROUND_NICE if office_cache else 0
    env = {**os.environ, "PYTHONHASHSEED": hashseed}
    if not office_cache:
        env["WORLDKIT_RENDER_CACHE"] = "off"
        # The world from source too (the cross-process world cache off): its generator runs again,
        # so one that reads the clock or unseeded randomness gives other revision digests.
        env["WORLDKIT_CACHE"] = "off"
    return subprocess.Popen(
        [sys.executable, "-m", "worldkit.verify.rebuild", "--nice", str(nice), str(world), str(out)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )


def _hash_seeds(count: int) -> list[str]:
    """`count` distinct PYTHONHASHSEEDs for the fresh rebuilds, none equal to this process's fixed one (if set)."""
    own = os.environ.get("PYTHONHASHSEED", "")
    seeds = [str(n * 7919 + 1) for n in range(count + 1)]
    return [s for s in seeds if s != own][:count]


@register
class RebuildRepeat(BaseCheck):
    id = "rebuild-repeat"
    cost = 1
    purpose = "The frozen world rebuilt 3 times in fresh processes (different hash seeds) gives identical trees."
    fix = "Find the nondeterminism (unsorted iteration, clock, randomness, environment) in the rendering path and remove it."
    tags = frozenset({REPEAT})
    starts_early = True
    """`start` launches the fresh processes early (the scheduler: the one that reads no cache before anything
    else, the rest after the shared rebuilds); `run` collects them (in this process)."""

    @staticmethod
    def _targets(ctx: VerifyContext) -> list[list[str]]:
        return [list(k) for k in sorted(ctx.readable) if k[0] in ctx.package.revision_names]

    def start(self, ctx: VerifyContext, *, first_only: bool = False) -> None:
        """Launch the fresh rebuild processes not launched yet; they work while the rest of verify does.

        Rebuild 1 renders everything anew, office bytes included (the office cache off): it shows
        that the format libraries reproduce the frozen bytes. Rebuilds 2 … n-1 vary the hash seed
        over the same sources and may read office bytes rebuild 1 proves. Rebuild n is this
        process's own clean rebuild of every projection (the one projection-rebuild compares), made
        under this process's hash seed (random unless PYTHONHASHSEED is set, and then distinct from
        the others'); with one repeat, only rebuild 1 is made.

        With `first_only`, only rebuild 1 is launched (it reads no cache and is the longest): the
        scheduler launches the others once this process's shared rebuilds have filled the office
        cache they read, so that on a cold cache they read those bytes instead of rendering every
        office document a third time (what they produce is the same either way)."""
        if ctx.index is None:
            return
        procs = ctx.started.setdefault(self.id, [])
        wanted = 1 if first_only else max(1, ctx.repeats - 1)
        if len(procs) >= wanted:
            return
        targets = json.dumps(self._targets(ctx))
        seeds = _hash_seeds(max(1, ctx.repeats - 1))
        for n in range(len(procs), wanted):
            proc = _spawn_rebuild(ctx.package.root, ctx.work / f"rebuild-repeat-{n}", seeds[n], office_cache=n > 0)
            # stdin is written and closed at once: a process forked later must not hold its write end
            assert proc.stdin is not None
            proc.stdin.write(targets)
            proc.stdin.close()
            proc.stdin = None  # so that communicate() does not touch it again
            procs.append(proc)

    def run(self, ctx: VerifyContext) -> CheckResult:
        if ctx.index is None:
            return self.skip(_NO_INDEX)
        self.start(ctx)
        procs = ctx.started.pop(self.id)
        targets = self._targets(ctx)
        own: dict[str, dict[str, str]] | None = None
        items: list[Item] = []
        if ctx.repeats >= 2:
            own = {}
            for key in map(tuple, targets):
                try:
                    built = ctx.rebuild(key)  # type: ignore[arg-type]
                except WorldkitError as error:
                    items.append(Item(kind="rebuild-failed", rev=key[0], date=key[1], seat=key[2],
                                      detail=f"rebuild {len(procs) + 1} (this process): {error.message}"))
                    continue
                own["|".join(key)] = {"fingerprint": built.manifest.fingerprint, "tree": built.tree_sha256()}
        runs: list[dict] = []
        frozen_revisions = {r.name: r.digest for r in ctx.index.revisions}
        for n, proc in enumerate(procs, start=1):
            stdout, stderr = proc.communicate()
            if proc.returncode != 0:
                last = (stderr.strip().splitlines() or ["no output"])[-1]
                items.append(Item(kind="rebuild-failed", detail=f"rebuild {n}: {last}"))
                continue
            payload = json.loads(stdout)
            runs.append(payload["projections"])
            for rev, digest in sorted(payload["revisions"].items()):
                if rev in frozen_revisions and digest != frozen_revisions[rev]:
                    items.append(Item(kind="revision-not-reproduced", rev=rev, expected=frozen_revisions[rev],
                                      actual=digest, detail=f"rebuild {n} loaded the world from source (cache off) "
                                      "and the revision digests differently: the world or its generator is not "
                                      "deterministic (clock, unseeded randomness, environment)"))  # fmt: skip
        if own is not None:
            runs.append(own)
        frozen = {"|".join(k): m.fingerprint for k, m in ctx.readable.items() if list(k) in targets}
        identical = 0
        for n, run in enumerate(runs, start=1):
            ok = True
            for name in sorted(set(frozen) | set(run)):
                rev, date, seat = name.split("|")
                got = run.get(name, {})
                if got.get("fingerprint") != frozen.get(name):
                    ok = False
                    items.append(Item(kind="manifest-mismatch", rev=rev, date=date, seat=seat,
                                      expected=frozen.get(name), actual=got.get("fingerprint"),
                                      detail=f"rebuild {n} differs from the frozen manifest"))
                if n > 1 and got.get("tree") != runs[0].get(name, {}).get("tree"):
                    ok = False
                    items.append(Item(kind="not-identical", rev=rev, date=date, seat=seat,
                                      expected=runs[0].get(name, {}).get("tree"), actual=got.get("tree"),
                                      detail=f"rebuild {n}'s tree differs from rebuild 1's"))
            identical += ok
        fingerprints = [sha256_json({name: info["fingerprint"] for name, info in sorted(run.items())}) for run in runs]
        generator = ctx.package.spec.generator
        return self.outcome(items, attempted=len(procs) + (own is not None), identical=identical, fingerprints=fingerprints,
                            world_source=str(ctx.package.root),
                            generator=str(Path(ctx.package.root) / generator.module) if generator is not None else None,
                            frozen_fingerprint=sha256_json(dict(sorted(frozen.items()))), projections=len(targets),
                            manifest_mismatches=len([i for i in items if i.kind == "manifest-mismatch"]))


@register
class SeatRepeat(BaseCheck):
    id = "seat-repeat"
    cost = 1
    purpose = "Each seat materialized 3 times gives the same files, digests, dates and tool bundle."
    fix = "Find the nondeterminism in what this seat sees (unsorted iteration, clock, randomness) and remove it."
    tags = frozenset({REPEAT})

    def run(self, ctx: VerifyContext) -> CheckResult:
        rev = ctx.latest_rev
        items: list[Item] = []
        per_seat: dict[str, dict[str, list[str]]] = {}
        attempted = identical = 0
        seats = sorted(ctx.package.revision(rev).seats)
        for date in ctx.dates:
            seen: dict[str, tuple[list[str], list[str], list[str]]] = {seat: ([], [], []) for seat in seats}
            # Materialization 1 is this process's clean rebuild of each seat (projection-rebuild's,
            # where every source was rendered once); repeat n materializes every seat afresh in this
            # same process: each source is rendered anew once per repeat (the seats of one repeat
            # share it, as they do in any materialize), office bytes read from the office cache.
            for seat in seats:
                self._note(seen[seat], ctx.rebuild((rev, date, seat)))
            for _ in range(ctx.repeats - 1):
                with ctx.repeat_round():
                    for seat in seats:
                        built = ctx.fresh_build(rev, date, seat)
                        self._note(seen[seat], built)
                        built.discard()
            for seat in seats:
                trees, bundles, fingerprints = seen[seat]
                attempted += len(trees)
                same = len(set(trees)) == 1 and len(set(bundles)) == 1 and len(set(fingerprints)) == 1
                identical += len(trees) if same else 0
                label = seat if len(ctx.dates) == 1 else f"{seat}@{date}"
                per_seat[label] = {"workspace_sha256": trees, "tool_bundle_sha256": bundles, "fingerprint": fingerprints}
                if not same:
                    items.append(Item(kind="not-identical", rev=rev, date=date, seat=seat,
                                      expected=fingerprints[0], actual=",".join(sorted(set(fingerprints))),
                                      detail=f"{len(set(trees))} distinct trees in {len(trees)} materializations"))
        return self.outcome(items, attempted=attempted, identical=identical, per_seat=ctx.repeats, seats=per_seat)

    @staticmethod
    def _note(seen: tuple[list[str], list[str], list[str]], built: Built) -> None:
        seen[0].append(built.tree_sha256())
        seen[1].append(built.manifest.tool_bundle_sha256)
        seen[2].append(built.manifest.fingerprint)

"""The frozen-workspace check: a staged folder against what was frozen, not against itself.

A staged folder's own manifests prove only that it agrees with itself: anyone who adds a file can
re-digest them consistently. So a projection, candidate, verifier or applied package is also
compared with the frozen manifests under `manifests/<world>/` — the frozen projection manifest
of its (rev, date, seat), entry by entry, and the overlay's lock (`overlays/<id>.json`) for its
condition's fingerprint and package digests. Where nothing is frozen, the reference is a fresh
re-derivation from the world (materialize, or apply the overlay) in scratch space.

Every digest compared is recomputed from the staged content (never read from a field the
folder carries about itself). A folder that is not a frozen one is refused; with
`trust_staged=True` the differences are still reported, the check is a `skip` whose reason says
the staged folder was trusted, and callers record that they trusted it.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from worldkit.canon import sha256_json
from worldkit.check_result import CheckResult, Item, result
from worldkit.errors import CheckFailed, WorldkitError
from worldkit.frozen.workspace import PACKAGE_NAME, verify_workspace
from worldkit.materialize.manifest import MANIFEST_NAME, Entry, Manifest, read_manifest
from worldkit.materialize.scan import read_regular

CHECK_ID = "frozen-workspace"
PURPOSE = (
    "The staged folder is a frozen one: its fingerprint, package digests and every file equal the frozen "
    "manifests (or a re-derivation from the world where none is frozen)."
)
FIX = (
    "Do not serve or run this folder: re-stage it from the frozen world (`worldkit overlay apply … --force`, "
    "`worldkit materialize … --force`); if the world or overlay changed on purpose, re-freeze it "
    "(`worldkit freeze`, `worldkit overlay freeze`); or, knowingly, pass --trust-staged (it is recorded)."
)


@dataclass
class _Frozen:
    """Where the trusted references come from, loaded lazily."""

    folder: Path | None
    world: Any = None
    """The `WorldPackage`, when it could be loaded (for re-derivation)."""
    problems: list[str] = field(default_factory=list)
    sources: set[str] = field(default_factory=set)
    """What the references were: `frozen`, `re-derived`."""
    derived_manifest: Manifest | None = None
    """A projection manifest just derived from the world by the caller (used where none is frozen)."""
    overlay: Any = None
    """The overlay (model or path) to re-derive a package from; else it is found by id."""
    _derived: dict[tuple[str, str], Any] = field(default_factory=dict)
    _scratch: tempfile.TemporaryDirectory[str] | None = None

    def scratch(self) -> Path:
        if self._scratch is None:
            self._scratch = tempfile.TemporaryDirectory(prefix="worldkit-frozen-")
        return Path(self._scratch.name)

    def provenance(self) -> dict[str, Any]:
        """Which world was used (from the configured path) and which generator, if any, it ran."""
        if self.world is None:
            return {"world_source": None, "generator": None}
        generator = self.world.spec.generator
        return {"world_source": str(self.world.root),
                "generator": str(Path(self.world.root) / generator.module) if generator is not None else None}

    def close(self) -> None:
        if self._scratch is not None:
            self._scratch.cleanup()

    def index(self) -> Any:
        from worldkit.frozen.index import read_index

        if self.folder is None:
            return None
        try:
            return read_index(self.folder)
        except WorldkitError:
            return None

    def projection(self, rev: str, date: str, seat: str) -> Manifest | None:
        """The frozen manifest of (rev, date, seat), else a fresh materialization's, else None."""
        index = self.index()
        if index is not None:
            frozen = next((p for p in index.projections if p.key == (rev, date, seat)), None)
            if frozen is not None:
                try:
                    manifest = read_manifest(self.folder / frozen.relpath)  # type: ignore[operator]
                except WorldkitError as error:
                    self.problems.append(f"frozen manifest {frozen.relpath}: {error.message}")
                    return None
                if manifest.fingerprint != frozen.fingerprint:
                    self.problems.append(f"frozen manifest {frozen.relpath} disagrees with revisions.json")
                    return None
                self.sources.add("frozen")
                return manifest
        derived = self.derived_manifest
        if derived is not None and (derived.inputs.rev, derived.inputs.date, derived.inputs.seat) == (rev, date, seat):
            self.sources.add("re-derived")
            return derived
        if self.world is None:
            self.problems.append(f"no frozen projection of {rev} {date} {seat} and no world to re-derive it from")
            return None
        from worldkit.materialize import materialize

        try:
            built = materialize(self.world, rev, date, seat, self.scratch() / f"p-{rev}-{date}-{seat}")
        except WorldkitError as error:
            self.problems.append(f"cannot re-derive {rev} {date} {seat} from world {self.world.id}: {error.message}")
            return None
        self.sources.add("re-derived")
        return built.manifest

    def lock(self, overlay: str) -> Any:
        from worldkit.overlay.author import read_lock

        if self.folder is None:
            return None
        path = self.folder / "overlays" / f"{overlay}.json"
        if read_regular(path) is None:
            return None
        try:
            lock = read_lock(path)
        except ValueError as error:
            self.problems.append(f"frozen overlay lock {path}: {str(error).splitlines()[0]}")
            return None
        self.sources.add("frozen")
        return lock

    def derive(self, overlay: str, condition: str) -> Any:
        """A fresh application of the overlay (found by id on the overlay search path), or None."""
        from worldkit.frozen.resolve import find_overlay
        from worldkit.overlay.apply import apply_overlay

        key = (overlay, condition)
        if key in self._derived:
            return self._derived[key]
        self._derived[key] = None
        world_id = self.world.id if self.world is not None else ""
        try:
            given = self.overlay
            if given is not None and getattr(given, "id", overlay) == overlay:
                path = given
            else:  # the id the folder names, found on the configured path only
                path = find_overlay(world_id, overlay, "the staged package")
            applied = apply_overlay(path, self.scratch() / f"o-{overlay}-{condition.replace(':', '-')}", condition,
                                    allow_stale=True, check=False)
        except WorldkitError as error:
            self.problems.append(f"cannot re-derive overlay {overlay} [{condition}]: {error.message}")
            return None
        self.sources.add("re-derived")
        self._derived[key] = applied
        return applied


def _json(path: Path) -> dict[str, Any] | None:
    data = read_regular(path)
    try:
        body = json.loads(data) if data is not None else None
    except (ValueError, UnicodeDecodeError):
        return None
    return body if isinstance(body, dict) else None


def _self_digest(body: dict[str, Any], field_name: str) -> str:
    return sha256_json({k: v for k, v in body.items() if k != field_name})


def _entries_diff(staged: list[Entry], reference: list[Entry], prefix: str, subset: bool) -> list[Item]:
    """Every staged entry must be the reference's (and, unless a curated subset, every reference entry staged)."""
    want = {e.path: e for e in reference}
    have = {e.path: e for e in staged}
    items = [Item(kind="unfrozen-file", path=prefix + p, actual=have[p].sha256, detail="not in the frozen projection")
             for p in sorted(set(have) - set(want))]
    items += [Item(kind="unfrozen-file", path=prefix + p, expected=want[p].sha256, actual=have[p].sha256,
                   detail="differs from the frozen projection's entry")
              for p in sorted(set(have) & set(want)) if have[p] != want[p]]
    if not subset:
        items += [Item(kind="unfrozen-missing", path=prefix + p, expected=want[p].sha256,
                       detail="in the frozen projection, not in the staged one") for p in sorted(set(want) - set(have))]
    return items


def _projection(root: Path, ref: _Frozen, prefix: str, curated: set[str] | None) -> list[Item]:
    """A staged projection vs the frozen (rev, date, seat) projection; `curated`: the frozen subset fingerprints."""
    try:
        staged = read_manifest(root)
    except WorldkitError as error:
        return [Item(kind="unverifiable", path=prefix + MANIFEST_NAME, detail=error.message)]
    inputs = staged.inputs
    reference = ref.projection(inputs.rev, inputs.date, inputs.seat)
    if reference is None:
        return [Item(kind="unverifiable", path=prefix + MANIFEST_NAME, rev=inputs.rev, date=inputs.date,
                     seat=inputs.seat, detail="; ".join(ref.problems[-1:]) or "no reference")]
    fingerprint = staged.fingerprint  # read_manifest refuses a manifest whose entries do not give it
    items: list[Item] = []
    allowed = {reference.fingerprint} | (curated or set())
    if curated is None and fingerprint != reference.fingerprint:
        allowed |= _frozen_subsets(ref, inputs.rev, inputs.date, inputs.seat)
    if fingerprint not in allowed:
        items.append(Item(kind="unfrozen-fingerprint", path=prefix + MANIFEST_NAME, rev=inputs.rev, date=inputs.date,
                          seat=inputs.seat, expected=reference.fingerprint, actual=fingerprint,
                          detail="the staged projection's fingerprint is not a frozen one"))
    if staged.environment.templates != reference.environment.templates:
        # Recorded beside the fingerprint, not in it: a forged `environment` would pass unseen. The
        # versions may differ between the freezing and the staging worldkit; the templates may not.
        changed = sorted(set(staged.environment.templates.items()) ^ set(reference.environment.templates.items()))
        items.append(Item(kind="unfrozen-environment", path=prefix + MANIFEST_NAME,
                          detail=f"environment.templates differ from the frozen ones (first: {changed[0][0]})"))
    if staged.inputs != reference.inputs or staged.tool_bundle_sha256 != reference.tool_bundle_sha256:
        items.append(Item(kind="unfrozen-inputs", path=prefix + MANIFEST_NAME, expected=reference.inputs.revision_digest,
                          actual=inputs.revision_digest, detail="inputs or tool bundle differ from the frozen ones"))
    subset = fingerprint != reference.fingerprint and fingerprint in allowed
    items += _entries_diff(staged.files, reference.files, prefix, subset)
    return items


def _frozen_subsets(ref: _Frozen, rev: str, date: str, seat: str) -> set[str]:
    """Fingerprints of curated packets frozen in overlay locks for (rev, date, seat)."""
    from worldkit.overlay.author import read_lock

    if ref.folder is None or not (ref.folder / "overlays").is_dir():
        return set()
    found: set[str] = set()
    for path in sorted((ref.folder / "overlays").glob("*.json")):
        try:
            lock = read_lock(path)
        except (OSError, ValueError):
            continue
        if (lock.rev, lock.date, lock.seat) == (rev, date, seat):
            found |= {c.fingerprint for name, c in lock.conditions.items() if name != "full"}
    return found


def _side(
    root: Path, side: str, ref: _Frozen, overlay: str, condition: str, derived: dict[str, Any] | None, prefix: str
) -> tuple[list[Item], Any]:
    """A candidate or verifier package's digest vs the overlay lock (or a re-derivation)."""
    body = _json(root / MANIFEST_NAME)
    if body is None:
        return [Item(kind="unverifiable", path=prefix + MANIFEST_NAME, detail="unreadable manifest")], None
    name = f"{side}_sha256"
    actual = _self_digest(body, name)
    lock = ref.lock(overlay)
    frozen = lock.conditions.get(condition) if lock is not None else None
    expected: str | None = None
    fresh = None
    if frozen is not None:
        expected = getattr(frozen, name)
    elif derived is not None:
        expected = derived.get(name)
        ref.sources.add("re-derived")
    else:
        fresh = ref.derive(overlay, condition)
        expected = getattr(fresh, name) if fresh is not None else None
    if expected is None:
        return [Item(kind="unverifiable", path=prefix + MANIFEST_NAME, where=f"{overlay}[{condition}]",
                     detail="; ".join(ref.problems[-1:]) or "no frozen lock and no re-derivation")], lock
    if actual == expected:
        return [], lock
    items = [Item(kind="unfrozen-package", path=prefix + MANIFEST_NAME, expected=expected, actual=actual,
                  where=f"{overlay}[{condition}]", detail=f"the {side} package is not the frozen one")]
    fresh = fresh or ref.derive(overlay, condition)
    if fresh is not None:
        fresh_body = _json(fresh.out / side / MANIFEST_NAME) or {}
        want = {str(e.get("path")): str(e.get("sha256")) for e in fresh_body.get("files", []) if isinstance(e, dict)}
        have = {str(e.get("path")): str(e.get("sha256")) for e in body.get("files", []) if isinstance(e, dict)}
        items += [Item(kind="unfrozen-file", path=prefix + p, actual=have[p], detail="not in the frozen package")
                  for p in sorted(set(have) - set(want))]
        items += [Item(kind="unfrozen-file", path=prefix + p, expected=want[p], actual=have[p],
                       detail="differs from the frozen package") for p in sorted(set(have) & set(want)) if have[p] != want[p]]
        items += [Item(kind="unfrozen-missing", path=prefix + p, expected=want[p], detail="in the frozen package only")
                  for p in sorted(set(want) - set(have))]
    return items, lock


def _candidate(root: Path, ref: _Frozen, derived: dict[str, Any] | None, prefix: str) -> list[Item]:
    body = _json(root / MANIFEST_NAME) or {}
    overlay, condition = str(body.get("overlay", "")), str(body.get("condition", "full"))
    items, lock = _side(root, "candidate", ref, overlay, condition, derived, prefix)
    curated: set[str] | None = None
    if condition != "full":
        frozen = lock.conditions.get(condition) if lock is not None else None
        if frozen is not None:
            fingerprint = frozen.fingerprint
        elif derived is not None:
            fingerprint = derived.get("fingerprint")
        else:  # nothing frozen: the curated packet's fingerprint is the re-derivation's (as its digest is, in _side)
            fresh = ref.derive(overlay, condition)
            fingerprint = fresh.fingerprint if fresh is not None else None
        curated = {fingerprint} if fingerprint else set()
    items += _projection(root / "projection", ref, prefix + "projection/", curated)
    if lock is not None:
        for name, want in (("source_fingerprint", lock.fingerprint), ("world", lock.world), ("rev", lock.rev),
                           ("date", lock.date), ("seat", lock.seat)):
            if body.get(name) != want:
                items.append(Item(kind="unfrozen-pin", path=f"{prefix}{MANIFEST_NAME}:{name}", expected=want,
                                  actual=str(body.get(name))))
    return items


def _world_of(directory: Path) -> str | None:
    """The world id the staged folder names (a claim: it only selects which frozen manifests to read)."""
    for path, keys in ((directory / PACKAGE_NAME, ("world",)), (directory / MANIFEST_NAME, ("world",)),
                       (directory / MANIFEST_NAME, ("inputs", "world")), (directory.parent / PACKAGE_NAME, ("world",))):
        body: Any = _json(path)
        for key in keys:
            body = body.get(key) if isinstance(body, dict) else None
        if isinstance(body, str) and body:
            return body
    return None


def _open_reference(directory: Path, manifests: Path | None, world: Any) -> _Frozen:
    from worldkit.frozen.index import default_manifest_dir
    from worldkit.world.load import WorldPackage, load_world

    from worldkit.frozen.resolve import find_world

    package = None
    problems: list[str] = []
    try:
        if isinstance(world, WorldPackage):
            package = world
        elif world:  # the caller's (the command line's) world: configuration, not a claim
            package = load_world(world)
        else:
            # What the folder names is a claim: an id, resolved on the configured path only, never
            # a path the folder gives nor a world inside it (its generator would run).
            named = _world_of(directory)
            if named:
                package = load_world(find_world(named, directory / PACKAGE_NAME, inside=directory))
    except WorldkitError as error:
        problems.append(error.message)
    folder = Path(manifests) if manifests is not None else (default_manifest_dir(package) if package else None)
    ref = _Frozen(folder=folder, world=package)
    ref.problems += problems
    return ref


def verify_frozen(
    directory: str | Path,
    *,
    manifests: Path | None = None,
    world: Any = None,
    trust_staged: bool = False,
    derived: dict[str, Any] | None = None,
    overlay: Any = None,
) -> CheckResult:
    """Compare a staged projection, candidate, verifier or applied package with what was frozen.

    `manifests`: the world's frozen folder (default `manifests/<world>/` beside the world the folder
    names); `world`: the world (name, path or package) to re-derive from where nothing is frozen;
    `derived`: a fresh derivation just made from the world (what `run` or `serve` staged): package
    digests (`candidate_sha256`, `verifier_sha256`, `fingerprint`) and/or the projection `manifest`,
    used where nothing is frozen instead of deriving again; `overlay`: the overlay (model or path)
    to re-derive a package from (default: found by id on the overlay search path).
    """
    root = Path(directory)
    ref = _open_reference(root, manifests, world)
    ref.derived_manifest = (derived or {}).get("manifest")
    ref.overlay = overlay
    items: list[Item] = []
    try:
        if read_regular(root / MANIFEST_NAME) is None and read_regular(root / PACKAGE_NAME) is not None:
            kind = "package"
            summary = _json(root / PACKAGE_NAME) or {}
            overlay, condition = str(summary.get("overlay", "")), str(summary.get("condition", "full"))
            items += _candidate(root / "candidate", ref, derived, "candidate/")
            side, lock = _side(root / "verifier", "verifier", ref, overlay, condition, derived, "verifier/")
            items += side
            if lock is not None and summary.get("overlay_sha256") != lock.overlay_sha256:
                items.append(Item(kind="unfrozen-pin", path=f"{PACKAGE_NAME}:overlay_sha256",
                                  expected=lock.overlay_sha256, actual=str(summary.get("overlay_sha256"))))
        else:
            body = _json(root / MANIFEST_NAME) or {}
            if "candidate_sha256" in body:
                kind = "candidate"
                items += _candidate(root, ref, derived, "")
            elif "verifier_sha256" in body:
                kind = "verifier"
                parent = _json(root.parent / PACKAGE_NAME) or {}
                condition = str(body.get("condition") or parent.get("condition") or "full")
                items += _side(root, "verifier", ref, str(body.get("overlay", "")), condition, derived, "")[0]
            elif "fingerprint" in body and "inputs" in body:
                kind = "projection"
                items += _projection(root, ref, "", None)
            else:
                kind = "unknown"
                items.append(Item(kind="unverifiable", path=MANIFEST_NAME,
                                  detail="not a projection, candidate, verifier or applied package"))
    finally:
        ref.close()
    counts = {"manifest": kind, "reference": "+".join(sorted(ref.sources)) or "none",
              "manifests": str(ref.folder) if ref.folder else None, "trusted_staged": False, **ref.provenance()}
    outcome = result(CHECK_ID, PURPOSE, items, fix=FIX, counts=counts)
    if outcome.status == "fail" and trust_staged:
        return outcome.model_copy(update={
            "status": "skip",
            "counts": {**outcome.counts, "trusted_staged": True},
            "reason": (f"TRUSTED (--trust-staged): {len(items)} difference(s) from the frozen manifests were "
                       "accepted; the staged folder is measured against its own manifest only"),
        })
    return outcome


def check_staged(directory: str | Path, **options: Any) -> list[CheckResult]:
    """Both checks of a staged folder: against its own manifest, and against what was frozen
    (`options`: those of `verify_frozen`)."""
    return [verify_workspace(directory), verify_frozen(directory, **options)]


def require_staged(directory: str | Path, what: str, **options: Any) -> CheckResult:
    """Raise CheckFailed (exit 1) unless the staged folder passes both checks; returns the frozen check."""
    results = check_staged(directory, **options)
    for outcome in results:
        if outcome.status in ("fail", "error"):
            problems = "; ".join(i.line() for i in outcome.items[:5])
            more = f" (+{len(outcome.items) - 5} more)" if len(outcome.items) > 5 else ""
            raise CheckFailed(f"{what} {directory} fails the {outcome.id} check: {problems}{more}. {outcome.fix}")
    return results[1]

"""Apply an overlay: the sealed candidate package and the verifier package, separately digested.

    DIR/candidate/projection/   the seat's projection (full), or a curated subset with the same
                                bytes and a manifest of its own
    DIR/candidate/request.md    the assignment
    DIR/candidate/workspace/    writable; empty unless the overlay seeds files
    DIR/candidate/tool-config.json  seat identity, surfaces, permitted changes (`ToolConfig`)
    DIR/candidate/manifest.json entries + `candidate_sha256`
    DIR/verifier/               rubric.json, evidence.json, task.json, truth.json,
                                reference/solution.json, reference/counterfactuals.json,
                                reference/files/…, manifest.json
                                (entries + `verifier_sha256`)
    DIR/package.json            both digests and the inputs

Nothing under `candidate/` names or digests anything under `verifier/`. Digests cover paths
and file digests only (no times); `projection/manifest.json` is represented by the projection
fingerprint, which (like the projection's) leaves out the rendering-environment record. The
package is built in a hidden sibling folder and renamed into place, so a failed apply leaves
nothing behind. Applying twice gives identical digests.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from worldkit._fs import atomic_directory
from worldkit._model import Model
from worldkit.canon import pretty_json, sha256_bytes, sha256_json
from worldkit.errors import InvalidOverlay, UsageError, WorldkitError
from worldkit.materialize import Manifest, ProjectionResult, materialize, read_manifest
from worldkit.materialize.manifest import (
    MANIFEST_NAME,
    TreeDiff,
    manifest_bytes,
    scan_tree,
)
from worldkit.materialize.project import stamp_seconds
from worldkit.overlay._paths import confined
from worldkit.overlay.candidate_files import request_bytes, tool_config_bytes
from worldkit.overlay.errors import StaleFingerprint
from worldkit.overlay.load import (
    load_overlay,
    overlay_digest,
    overlay_fields,
    overlay_world,
    reference_bytes,
)
from worldkit.overlay.models import Overlay
from worldkit.overlay.view import ProjectionView

PACKAGE_SCHEMA_VERSION = 1
ALWAYS_KEPT = ("seat.json", "tools.json")
"""Projection files every curated packet keeps: they describe the seat, not the organization."""


class PackageEntry(Model):

    path: str
    """Path relative to the package side (`candidate/` or `verifier/`)."""
    sha256: str
    """Digest of the file's bytes."""
    size: int
    """Size in bytes."""


class CandidateManifest(Model):
    """`candidate/manifest.json`."""


    schema_version: Literal[1] = 1
    """Format version."""
    overlay: str
    """Overlay id."""
    condition: str
    """`full` or `curated:<name>`."""
    world: str
    """World id."""
    rev: str
    """Revision."""
    date: str
    """Date (ISO)."""
    seat: str
    """Seat id."""
    fingerprint: str
    """Fingerprint of `projection/` (equals a direct `worldkit materialize` for `full`)."""
    source_fingerprint: str
    """Fingerprint of the seat's full projection the candidate view was taken from."""
    files: list[PackageEntry]
    """Every candidate file except this manifest and `projection/manifest.json`, by path."""
    candidate_sha256: str
    """SHA-256 of the canonical JSON of every other field."""


class VerifierManifest(Model):
    """`verifier/manifest.json`."""


    schema_version: Literal[1] = 1
    """Format version."""
    overlay: str
    """Overlay id."""
    condition: str
    """The condition the package was applied under."""
    files: list[PackageEntry]
    """Every verifier file except this manifest, by path."""
    verifier_sha256: str
    """SHA-256 of the canonical JSON of every other field."""


class PackageSummary(Model):
    """`DIR/package.json`: what was applied, and the two digests."""


    schema_version: Literal[1] = 1
    """Format version."""
    overlay: str
    """Overlay id."""
    overlay_sha256: str
    """Digest of the overlay's canonical content and reference files."""
    condition: str
    """`full` or `curated:<name>`."""
    world: str
    """World id."""
    rev: str
    """Revision."""
    date: str
    """Date (ISO)."""
    seat: str
    """Seat id."""
    fingerprint: str
    """Candidate projection fingerprint."""
    source_fingerprint: str
    """The seat's full projection fingerprint (the overlay's pin)."""
    candidate_sha256: str
    """Digest of the candidate package."""
    verifier_sha256: str
    """Digest of the verifier package."""


@dataclass(frozen=True)
class PackageResult:
    """An applied overlay on disk."""

    out: Path
    overlay: Overlay
    summary_model: PackageSummary

    @property
    def candidate(self) -> Path:
        return self.out / "candidate"

    @property
    def verifier(self) -> Path:
        return self.out / "verifier"

    @property
    def condition(self) -> str:
        return self.summary_model.condition

    @property
    def fingerprint(self) -> str:
        return self.summary_model.fingerprint

    @property
    def candidate_sha256(self) -> str:
        return self.summary_model.candidate_sha256

    @property
    def verifier_sha256(self) -> str:
        return self.summary_model.verifier_sha256

    def summary(self) -> dict[str, Any]:
        return {**self.summary_model.model_dump(mode="json"), "out": str(self.out)}


def packet_name(overlay: Overlay, condition: str) -> str | None:
    """None for `full`, the packet name for `curated:<name>`; anything else is a usage error."""
    if condition == "full":
        return None
    kind, _, name = condition.partition(":")
    if kind == "curated" and name in overlay.curated:
        return name
    choices = ", ".join(overlay.conditions)
    raise UsageError(f"unknown condition {condition!r} for overlay {overlay.id}; use one of: {choices}")


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _entries(root: Path, ignore: frozenset[str]) -> list[PackageEntry]:
    digests = scan_tree(root, ignore)
    return [PackageEntry(path=p, sha256=d, size=(root / p).stat().st_size) for p, d in sorted(digests.items())]


def write_curated(full: Path, target: Path, overlay: Overlay, name: str) -> Manifest:
    """Copy a curated packet's files (byte-identical) and write its own manifest."""
    source = ProjectionView(full)
    wanted: dict[str, str | None] = {p: None for p in ALWAYS_KEPT}
    for index, item in enumerate(overlay.packet(name)):
        entry = source.entries.get(item.path)
        if entry is None:
            raise InvalidOverlay(
                f"curated packet {name!r} lists {item.path}, which is not in the projection; "
                "run `worldkit overlay check`",
                entity=overlay.id,
                field=f"curated.{name}[{index}]",
            )
        if item.sha256 is not None and item.sha256 != entry.sha256:
            raise InvalidOverlay(
                f"curated packet {name!r}: {item.path} has sha256 {entry.sha256}, not the pinned {item.sha256}; "
                "run `worldkit overlay check`",
                entity=overlay.id,
                field=f"curated.{name}[{index}]",
            )
        wanted[item.path] = item.sha256
    kept = [e for e in source.manifest.files if e.path in wanted]
    for entry in kept:
        _write(target / entry.path, (full / entry.path).read_bytes())
        if entry.mtime is not None:
            seconds = stamp_seconds(entry.mtime)
            os.utime(target / entry.path, (seconds, seconds))
        if sha256_bytes((target / entry.path).read_bytes()) != entry.sha256:  # pragma: no cover - disk fault
            raise InvalidOverlay(f"copy of {entry.path} changed its bytes; re-run apply", entity=overlay.id)
    manifest = Manifest(
        inputs=source.manifest.inputs,
        environment=source.manifest.environment,
        tool_bundle_sha256=source.manifest.tool_bundle_sha256,
        files=kept,
        fingerprint=Manifest.compute_fingerprint(source.manifest.inputs, kept, source.manifest.tool_bundle_sha256),
    )
    (target / MANIFEST_NAME).write_bytes(manifest_bytes(manifest))
    return manifest


def _evidence_json(overlay: Overlay, full: ProjectionView, candidate: ProjectionView) -> dict[str, Any]:
    criteria: dict[str, list[list[dict[str, Any]]]] = {}
    for criterion_id, sets in sorted(overlay.evidence.items()):
        resolved_sets = []
        for members in sets:
            resolved = []
            for item in members:
                located, _ = full.resolve(item)
                body = located.as_json() if located else {**item.model_dump(mode="json"), "path": None, "sha256": None}
                body["in_candidate"] = bool(located) and located.path in candidate.entries
                resolved.append(body)
            resolved_sets.append(resolved)
        criteria[criterion_id] = resolved_sets
    return {
        "schema_version": 1,
        "overlay": overlay.id,
        "rule": "a criterion's evidence is accessed when every member of at least one set is accessed",
        "criteria": criteria,
    }


def _write_verifier(
    root: Path,
    overlay: Overlay,
    references: dict[str, bytes],
    full: ProjectionView,
    candidate: ProjectionView,
    task: dict[str, Any],
) -> None:
    dump = lambda value: pretty_json(value).encode("utf-8")  # noqa: E731
    _write(root / "rubric.json", dump({"schema_version": 1, "overlay": overlay.id,
                                       "criteria": [c.model_dump(mode="json") for c in overlay.rubric]}))
    _write(root / "evidence.json", dump(_evidence_json(overlay, full, candidate)))
    _write(root / "task.json", dump(task))
    head = {"schema_version": 1, "overlay": overlay.id}
    _write(root / "truth.json", dump({**head, **overlay.truth.model_dump(mode="json")}))
    _write(root / "reference" / "solution.json", dump({**head, **overlay.reference.model_dump(mode="json")}))
    counterfactuals = [v.model_dump(mode="json") for v in overlay.counterfactuals]
    _write(root / "reference" / "counterfactuals.json", dump({**head, "counterfactuals": counterfactuals}))
    for name, data in sorted(references.items()):
        _write(confined(root / "reference" / "files", name), data)


def apply_overlay(
    overlay: Overlay | str | Path,
    out: str | Path,
    condition: str = "full",
    *,
    force: bool = False,
    allow_stale: bool = False,
    check: bool = True,
    source: Path | None = None,
) -> PackageResult:
    """Write the candidate and verifier packages of `overlay` under `out` (see module docstring).

    Refuses a non-empty `out` without `force`, a projection whose fingerprint differs from the
    overlay's pin unless `allow_stale` (raises `StaleFingerprint`), and, with `check` (the
    default), any overlay `overlay check` rejects (raises `OverlayProblems`, listing them).
    `verify` stages with `check=False`: it must see a faulty overlay's package to report on it.

    `source` is a projection of the overlay's (rev, date, seat) that this process has just
    materialized (verify's rebuilds): a curated packet is then copied from it instead of from a
    fresh full materialization. It is read only, and used only if its manifest names this
    world's revision digest, date and seat; the bytes are the same either way.
    """
    model = overlay if isinstance(overlay, Overlay) else load_overlay(overlay)
    packet = packet_name(model, condition)
    world = overlay_world(model)
    references = reference_bytes(model)
    out = Path(out).absolute()
    with atomic_directory(out, force=force) as tmp:
        summary = _build(model, world, packet, condition, references, tmp, allow_stale, source, check)
    return PackageResult(out=out, overlay=model, summary_model=summary)


def _build(
    model: Overlay,
    world: Any,
    packet: str | None,
    condition: str,
    references: dict[str, bytes],
    tmp: Path,
    allow_stale: bool,
    source: Path | None = None,
    check: bool = True,
) -> PackageSummary:
    candidate = tmp / "candidate"
    projection = candidate / "projection"
    reused = _reusable(source, world, model) if packet else None
    if reused is not None:
        full_dir, full = reused.out, reused
    else:
        full_dir = tmp / ".full" if packet else projection
        with overlay_fields(model):
            full = materialize(world, model.rev, model.date, model.seat, full_dir)
    if full.fingerprint != model.pinned_fingerprint and not allow_stale:
        raise StaleFingerprint(model, full.fingerprint)
    overlay_sha = overlay_digest(model, references)
    if check:
        # A projection materialized just now holds what its fingerprint says; a reused one is read afresh.
        _refuse_problems(model, full, None if reused is not None else (overlay_sha, full.fingerprint, str(model.source)))
    if packet:
        view_manifest = write_curated(full_dir, projection, model, packet)
    else:
        view_manifest = full.manifest
    full_view = ProjectionView(full_dir, full.manifest)
    candidate_view = ProjectionView(projection, view_manifest)
    inputs = full.manifest.inputs

    _write(candidate / "request.md", request_bytes(model))
    (candidate / "workspace").mkdir()
    for seed in model.workspace_seed:
        _write(confined(candidate / "workspace", seed.path), seed.text.encode("utf-8"))
    _write(candidate / "tool-config.json", tool_config_bytes(model, full.manifest))
    files = _entries(candidate, frozenset({MANIFEST_NAME, f"projection/{MANIFEST_NAME}"}))
    head = {
        "schema_version": 1, "overlay": model.id, "condition": condition, "world": inputs.world, "rev": inputs.rev,
        "date": inputs.date, "seat": inputs.seat, "fingerprint": view_manifest.fingerprint,
        "source_fingerprint": full.fingerprint, "files": [f.model_dump(mode="json") for f in files],
    }  # fmt: skip
    cand_manifest = CandidateManifest.model_validate({**head, "candidate_sha256": sha256_json(head)})
    _write(candidate / MANIFEST_NAME, pretty_json(cand_manifest.model_dump(mode="json")).encode("utf-8"))

    task = {
        "schema_version": 1,
        "overlay": model.id,
        "title": model.title,
        "overlay_sha256": overlay_sha,
        "condition": condition,
        "world": inputs.world,
        "rev": inputs.rev,
        "date": inputs.date,
        "seat": inputs.seat,
        "fingerprint": view_manifest.fingerprint,
        "source_fingerprint": full.fingerprint,
        "candidate_sha256": cand_manifest.candidate_sha256,
        "surfaces": list(model.surfaces),
        "permitted": [p.model_dump(mode="json") for p in model.permitted],
        "prohibited": [p.model_dump(mode="json") for p in model.prohibited],
        "deliverable": model.deliverable.model_dump(mode="json"),
        "reviewed_overlaps": [o.model_dump(mode="json") for o in model.reviewed_overlaps],
    }
    verifier = tmp / "verifier"
    _write_verifier(verifier, model, references, full_view, candidate_view, task)
    vfiles = _entries(verifier, frozenset({MANIFEST_NAME}))
    vhead = {
        "schema_version": 1, "overlay": model.id, "condition": condition,
        "files": [f.model_dump(mode="json") for f in vfiles],
    }  # fmt: skip
    ver_manifest = VerifierManifest.model_validate({**vhead, "verifier_sha256": sha256_json(vhead)})
    _write(verifier / MANIFEST_NAME, pretty_json(ver_manifest.model_dump(mode="json")).encode("utf-8"))
    if packet and reused is None:
        shutil.rmtree(full_dir)

    summary = PackageSummary(
        overlay=model.id, overlay_sha256=overlay_sha, condition=condition, world=inputs.world, rev=inputs.rev,
        date=inputs.date, seat=inputs.seat, fingerprint=view_manifest.fingerprint, source_fingerprint=full.fingerprint,
        candidate_sha256=cand_manifest.candidate_sha256, verifier_sha256=ver_manifest.verifier_sha256,
    )
    _write(tmp / "package.json", pretty_json(summary.model_dump(mode="json")).encode("utf-8"))
    return summary


_CHECKED: dict[tuple[str, str, str], list[Any]] = {}
"""The errors `overlay check` found, by (overlay digest, projection fingerprint, overlay source), in this process: the
check is a function of the overlay's content, its reference files and the projection's bytes."""


def _refuse_problems(model: Overlay, full: Any, key: tuple[str, str, str] | None = None) -> None:
    """Run `overlay check` on the projection just materialized (once per `key` in a process: an
    overlay applied again to the same projection, as a campaign does, is not checked again);
    refuse on any error it reports."""
    import tempfile

    from worldkit.overlay.errors import OverlayProblems
    from worldkit.overlay.problems import check_materialized

    errors = None if key is None else _CHECKED.get(key)
    if errors is None:
        with tempfile.TemporaryDirectory(prefix="worldkit-apply-check-") as scratch:
            report = check_materialized(model, full, Path(scratch))
        errors = [p for p in report.errors if p.code != "fingerprint-stale"]  # stale: refused above unless allowed
        if key is not None:
            if len(_CHECKED) >= 256:
                _CHECKED.clear()
            _CHECKED[key] = errors
    if errors:
        lines = "\n".join("  " + p.line() for p in errors)
        raise OverlayProblems(
            f"overlay {model.id} has {len(errors)} problem(s) `worldkit overlay check` rejects; "
            f"apply refuses it:\n{lines}"
        )


def _reusable(source: Path | None, world: Any, model: Overlay) -> ProjectionResult | None:
    """`source` as the overlay's full projection, if its manifest pins exactly this world and view."""
    if source is None:
        return None
    try:
        manifest = read_manifest(source)
    except WorldkitError:
        return None
    inputs = manifest.inputs
    state = world.revision(model.rev)
    wanted = (world.id, model.rev, state.digest, str(model.date), model.seat)
    if (inputs.world, inputs.rev, inputs.revision_digest, inputs.date, inputs.seat) != wanted:
        return None
    return ProjectionResult(out=Path(source), manifest=manifest)


def diff_candidate(candidate: Path) -> TreeDiff:
    """A staged candidate package on disk vs its own manifest (missing, changed, unexpected)."""
    manifest = CandidateManifest.model_validate_json((candidate / MANIFEST_NAME).read_bytes())
    actual = scan_tree(candidate, frozenset({MANIFEST_NAME, f"projection/{MANIFEST_NAME}"}))
    expected = {e.path: e.sha256 for e in manifest.files}
    return TreeDiff(
        missing=sorted(set(expected) - set(actual)),
        changed=sorted((p, expected[p], actual[p]) for p in set(expected) & set(actual) if expected[p] != actual[p]),
        unexpected=sorted(set(actual) - set(expected)),
    )

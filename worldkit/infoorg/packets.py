"""InfoOrgBench packets: turn task selections into candidate/verifier files, and freeze their digests.

A packet on disk (read by the scorer and the organizer server; keep the layout):

    <out>/<task_id>/packet.json                     task id, family, seed, counts, digests
    <out>/<task_id>/candidate/inbox/<ID>.txt        exact record text (UTF-8)
    <out>/<task_id>/candidate/request.md            the rendered instruction (Appendix B)
    <out>/<task_id>/verifier/reference.json         `worldkit.infoorg.reference.Reference`
    <out>/<task_id>/overlay.json                    the task as an overlay on the `infoorg` world
                                                    (`worldkit.infoorg.overlays`; not in any digest)

Records are shuffled with a seed derived from (family, seed, task id) before opaque ids `F001`…
are assigned, so ids carry no source order. `manifests/infoorg/<family>.json` freezes the
selection metadata and digests (never record text): a rebuild must reproduce it byte for byte.
Deterministic: no clock, no unordered iteration, canonical JSON via `worldkit.canon`.
"""

from __future__ import annotations

import os
import random
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from worldkit.canon import canonical_bytes, sha256_bytes
from worldkit.errors import ManifestMismatch, OutputExists
from worldkit.infoorg.instructions import render_request
from worldkit.infoorg.overlays import WorldBinding, bind_world, make_overlay, write_overlay
from worldkit.infoorg.packet_info import (  # packet.json and digests, re-exported here
    SCHEMA_VERSION,
    PacketInfo,
    Sha256,
    check_packet_dir,
    files_digest,
    read_packet_info,
    tree_digest,
)
from worldkit.infoorg.reference import Reference, ReferenceRecord, load_reference
from worldkit.infoorg.sources import (
    Family,
    Progress,
    TaskSelection,
    derived_seed,
    select_tasks,
)

DEFAULT_SEED = 0
RECORD_ID_PREFIX = "F"

class Packet(BaseModel):
    """A built packet held in memory: every file's bytes plus its `packet.json`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    info: PacketInfo
    """The packet's `packet.json` content."""
    candidate: dict[str, bytes]
    """Relative path under `candidate/` to file bytes (what the agent sees)."""
    verifier: dict[str, bytes]
    """Relative path under `verifier/` to file bytes (what only the grader sees)."""
    reference: Reference
    """The parsed `verifier/reference.json`."""
    unit_ids: tuple[str, ...]
    """Source units the task was built from (meetings, subtask keys, `<sig>/<dir>`)."""

    @property
    def task_id(self) -> str:
        return self.info.task_id

    def packet_json(self) -> bytes:
        return canonical_bytes(self.info.model_dump(mode="json"))


def record_id(index: int) -> str:
    return f"{RECORD_ID_PREFIX}{index:03d}"


def make_packet(selection: TaskSelection, seed: int) -> Packet:
    """Shuffle the selection's records with a derived seed, assign ids, render every file."""
    records = list(selection.records)
    order = list(range(len(records)))
    random.Random(derived_seed(selection.family, seed, selection.task_id, "shuffle")).shuffle(order)
    candidate: dict[str, bytes] = {}
    entries: dict[str, ReferenceRecord] = {}
    for number, position in enumerate(order, start=1):
        record = records[position]
        data = record.text.encode("utf-8")
        rid = record_id(number)
        candidate[f"inbox/{rid}.txt"] = data
        entries[rid] = ReferenceRecord(path=record.path, sha256=sha256_bytes(data), source=record.source)
    candidate["request.md"] = render_request(selection.family, len(records)).encode("utf-8")
    reference = Reference(schema_version=SCHEMA_VERSION, records=entries)
    verifier = {"reference.json": reference.canonical_json().encode("utf-8")}
    info = PacketInfo(
        task_id=selection.task_id,
        family=selection.family,
        seed=seed,
        record_count=len(records),
        candidate_digest=files_digest(candidate),
        verifier_digest=files_digest(verifier),
    )
    return Packet(
        info=info,
        candidate=candidate,
        verifier=verifier,
        reference=reference,
        unit_ids=selection.unit_ids,
    )


def build_packets(
    family: Family,
    source: Path,
    tasks: int = 50,
    seed: int = DEFAULT_SEED,
    progress: Progress | None = None,
) -> list[Packet]:
    """Select `tasks` tasks of `family` from `source` and build their packets in memory."""
    selections = select_tasks(family, source, tasks, seed, progress)
    packets = []
    for index, selection in enumerate(selections, start=1):
        packets.append(make_packet(selection, seed))
        if progress:
            progress("build", index, len(selections))
    return packets


def _is_packet_dir(path: Path) -> bool:
    return path.is_dir() and (path / "packet.json").is_file()


def write_packets(
    packets: Sequence[Packet],
    out: Path,
    force: bool = False,
    progress: Progress | None = None,
    binding: WorldBinding | None = None,
    with_overlays: bool = True,
) -> None:
    """Write packets under `out`; refuse a non-empty `out` unless `force` (which replaces packets).

    Each packet gets its `overlay.json` on the `infoorg` world; `binding` (default: the world's
    seat and default date, pinned now) is computed once for all packets. `with_overlays=False`
    writes the packet files only (scratch packets that are scored and thrown away).
    """

    if out.exists() and any(out.iterdir()):
        if not force:
            raise OutputExists(f"{out} is not empty; pass --force to replace the packets in it, "
                               "or choose another --out")
        strays = [p.name for p in sorted(out.iterdir()) if not _is_packet_dir(p)]
        if strays:
            raise OutputExists(f"{out} holds files that are not packets ({', '.join(strays[:5])}); "
                               "refusing to replace it even with --force; choose another --out")
        for child in sorted(out.iterdir()):
            shutil.rmtree(child)
    if with_overlays:
        pinned = binding or (bind_world() if packets else None)
    for index, packet in enumerate(packets, start=1):
        root = out / packet.task_id
        for side, files in (("candidate", packet.candidate), ("verifier", packet.verifier)):
            for relative, data in sorted(files.items()):
                target = root / side / relative
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
        (root / "packet.json").write_bytes(packet.packet_json())
        if with_overlays:
            request = packet.candidate["request.md"].decode("utf-8")
            reference = sha256_bytes(packet.verifier["reference.json"])
            write_overlay(root, make_overlay(packet.info, request, reference, pinned))  # type: ignore[arg-type]
        if progress:
            progress("write", index, len(packets))


def _check_out(out: Path, force: bool) -> None:
    """Refuse, before building, an `out` that `write_packets` would refuse."""
    if out.exists() and not out.is_dir():
        raise OutputExists(f"{out} is a file; choose another --out")
    if out.is_dir() and any(out.iterdir()):
        if not force:
            raise OutputExists(f"{out} is not empty; pass --force to replace the packets in it, "
                               "or choose another --out")
        strays = [p.name for p in sorted(out.iterdir()) if not _is_packet_dir(p)]
        if strays:
            raise OutputExists(f"{out} holds files that are not packets ({', '.join(strays[:5])}); "
                               "refusing to replace it even with --force; choose another --out")


def _move_in(built: Path, out: Path, scratch: Path) -> None:
    """Replace `out` by the finished folder `built` (same filesystem: renames only)."""
    if out.exists():
        os.replace(out, scratch / "old")
    os.replace(built, out)


def read_reference(packet_dir: Path) -> Reference:
    """Load `verifier/reference.json` from a packet folder (errors name the file and record)."""
    return load_reference(packet_dir)


class ManifestRecord(BaseModel):
    """Selection metadata of one record: no text, only its hash and where it came from."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    sha256: Sha256
    """SHA-256 of the record bytes."""
    source: str
    """Locator of the record in the source tree."""


class ManifestTask(BaseModel):
    """Selection metadata and digests of one task."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    task_id: str
    """Task identifier, `<family>-NNN`."""
    units: tuple[str, ...]
    """Source units in selection order (meetings, subtask keys, `<sig>/<dir>`)."""
    groups: tuple[str, ...]
    """Distinct top-level reference groups, sorted (meetings, parent issues, SIGs)."""
    record_count: int
    """Number of records."""
    records: dict[str, ManifestRecord]
    """Record id to its hash and source locator."""
    candidate_digest: Sha256
    """Digest of the candidate side (see `files_digest`)."""
    verifier_digest: Sha256
    """Digest of the verifier side."""
    packet_digest: Sha256
    """SHA-256 of the `packet.json` bytes."""


class FamilyManifest(BaseModel):
    """`manifests/infoorg/<family>.json`: what a rebuild from the pinned source must reproduce."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: Literal[1] = SCHEMA_VERSION
    """Version of this file's format."""
    family: Family
    """Task family."""
    seed: int
    """Build seed."""
    tasks: list[ManifestTask]
    """Every task, in task-id order."""

    def to_bytes(self) -> bytes:
        return canonical_bytes(self.model_dump(mode="json"))


def manifest_task(packet: Packet) -> ManifestTask:
    refs = packet.reference.records
    return ManifestTask(
        task_id=packet.task_id,
        units=packet.unit_ids,
        groups=tuple(sorted({entry.path[0] for entry in refs.values()})),
        record_count=packet.info.record_count,
        records={rid: ManifestRecord(sha256=e.sha256, source=e.source) for rid, e in refs.items()},
        candidate_digest=packet.info.candidate_digest,
        verifier_digest=packet.info.verifier_digest,
        packet_digest=sha256_bytes(packet.packet_json()),
    )


def family_manifest(family: Family, seed: int, packets: Sequence[Packet]) -> FamilyManifest:
    """The manifest of a build (tasks in task-id order)."""
    tasks = sorted((manifest_task(p) for p in packets), key=lambda t: t.task_id)
    return FamilyManifest(family=family, seed=seed, tasks=tasks)


ManifestStatus = Literal["match", "prefix-match", "absent"]


def compare_manifest(built: FamilyManifest, committed_path: Path) -> ManifestStatus:
    """Compare a build with the committed manifest; raise `ManifestMismatch` on any difference.

    `match`: identical bytes. `prefix-match`: the build has fewer tasks and each one equals the
    committed task of the same id. `absent`: there is no committed manifest to compare with.
    """
    if not committed_path.is_file():
        return "absent"
    raw = committed_path.read_bytes()
    if raw == built.to_bytes():
        return "match"
    fix = (
        "rebuild from the pinned source with the committed seed, or regenerate the manifest "
        "with --write-manifest if the change is intended"
    )
    try:
        committed = FamilyManifest.model_validate_json(raw)
    except ValueError as error:
        raise ManifestMismatch(f"{committed_path}: not a valid manifest ({error.__class__.__name__}); "
                               f"{fix}") from error
    if committed.to_bytes() != raw:
        raise ManifestMismatch(f"{committed_path}: not in canonical form; {fix}")
    if (committed.family, committed.seed) != (built.family, built.seed):
        raise ManifestMismatch(
            f"{committed_path}: committed for family {committed.family} seed {committed.seed}, "
            f"built family {built.family} seed {built.seed}; {fix}"
        )
    by_id = {task.task_id: task for task in committed.tasks}
    for task in built.tasks:
        frozen = by_id.get(task.task_id)
        if frozen is None:
            raise ManifestMismatch(f"{committed_path}: task {task.task_id} was built but is not "
                                   f"in the committed manifest ({len(committed.tasks)} tasks); {fix}")
        if frozen != task:
            fields = [name for name in ManifestTask.model_fields
                      if getattr(frozen, name) != getattr(task, name)]
            raise ManifestMismatch(f"{committed_path}: task {task.task_id} differs in "
                                   f"{', '.join(fields)}; {fix}")
    if len(built.tasks) < len(committed.tasks):
        return "prefix-match"
    raise ManifestMismatch(f"{committed_path}: bytes differ from the build; {fix}")


def check_frozen_packet(packet_dir: Path, manifest_path: Path | None = None) -> Literal["match", "absent"]:
    """Compare a packet on disk with its task in the family's frozen manifest (default:
    `manifests/infoorg/<family>.json` on the search path); raise `ManifestMismatch` naming the
    task and the digest that differs. `absent` when no manifest is frozen for the family (Thread
    packets come from a user's own Jira export)."""
    from worldkit.locate import find_manifest

    packet_dir = Path(packet_dir)
    info = check_packet_dir(packet_dir)
    path = manifest_path or find_manifest("infoorg", f"{info.family}.json")
    if path is None or not Path(path).is_file():
        if manifest_path is not None:
            raise ManifestMismatch(f"--manifest {manifest_path} does not exist; pass the family's frozen manifest")
        return "absent"
    try:
        frozen = FamilyManifest.model_validate_json(Path(path).read_bytes())
    except ValueError as error:
        raise ManifestMismatch(f"{path}: not a valid family manifest ({error.__class__.__name__})") from error
    fix = (f"rebuild the packets from the pinned source with `worldkit infoorg build --family {info.family}` "
           "(it refuses a source that does not match)")
    task = next((t for t in frozen.tasks if t.task_id == info.task_id), None)
    if frozen.family != info.family or frozen.seed != info.seed or task is None:
        raise ManifestMismatch(f"{packet_dir}: task {info.task_id} (family {info.family}, seed {info.seed}) is not "
                               f"in the frozen manifest {path}; {fix}")
    actual = {"candidate_digest": info.candidate_digest, "verifier_digest": info.verifier_digest,
              "packet_digest": sha256_bytes((packet_dir / "packet.json").read_bytes()),
              "record_count": info.record_count}  # fmt: skip
    for field, value in actual.items():
        if getattr(task, field) != value:
            raise ManifestMismatch(f"{packet_dir}: {field} {str(value)[:12]}… differs from the frozen manifest {path} "
                                   f"({str(getattr(task, field))[:12]}…) for task {info.task_id}; {fix}")
    return "match"


def write_manifest(manifest: FamilyManifest, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(manifest.to_bytes())


class BuildResult(BaseModel):
    """What `build_to_disk` did: where the packets went and how the manifest compared."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    family: Family
    """Task family."""
    seed: int
    """Build seed."""
    out: str
    """Folder the packets were written to."""
    tasks: int
    """Number of packets written."""
    records: int
    """Total records over all packets."""
    manifest: str
    """Path of the family manifest compared with (or written)."""
    manifest_status: Literal["match", "prefix-match", "absent", "written"]
    """Outcome of the manifest comparison; a mismatch raises instead."""


def build_to_disk(
    family: Family,
    source: Path,
    out: Path,
    manifest_path: Path,
    tasks: int = 50,
    seed: int = DEFAULT_SEED,
    write: bool = False,
    force: bool = False,
    progress: Progress | None = None,
) -> BuildResult:
    """Build the packets, check them against (or write) the family manifest, then write them.

    Nothing reaches `out` unless the build matches: a `ManifestMismatch` is raised before any
    packet is written, and the packets are written into a scratch folder beside `out` that
    replaces it only when complete (an interrupted build leaves `out` as it was).
    """
    _check_out(out, force)
    packets = build_packets(family, source, tasks, seed, progress)
    manifest = family_manifest(family, seed, packets)
    status: Literal["match", "prefix-match", "absent", "written"]
    status = "written" if write else compare_manifest(manifest, manifest_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{out.name}.building-", dir=out.parent))
    try:
        write_packets(packets, scratch / "packets", progress=progress)
        _move_in(scratch / "packets", out, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if write:
        write_manifest(manifest, manifest_path)
    return BuildResult(
        family=family,
        seed=seed,
        out=str(out),
        tasks=len(packets),
        records=sum(p.info.record_count for p in packets),
        manifest=str(manifest_path),
        manifest_status=status,
    )

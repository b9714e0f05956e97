"""InfoOrgBench packets as task overlays on the `infoorg` world: describe, stage, grade.

Every built packet gets `<packet>/overlay.json` beside `packet.json` (neither the candidate nor
the verifier digest covers it, so the frozen family manifests are unchanged). It binds the packet
to the world like any overlay: the seat (`EMP-ORG-001`, the records clerk), the date, the
starting revision and the pinned fingerprint of that projection; the request (the paper's shared
instruction with the family criterion, Appendix B); the surface (the organizer, Table 9); what
may and may not change; the deliverable (the final workspace tree); and a rubric of one
deterministic criterion, the Structure Score (`worldkit.infoorg.check`).

Why not `worldkit.overlay.Overlay`: its surfaces (files, records, communication), evidence map,
curated packets and write/update/send permissions describe WorkWorlds tasks over a projection.
An InfoOrgBench task is served by the organizer alone, on a workspace seeded from the packet's
inbox, and is graded by one criterion that reads the final tree. `PacketOverlay` keeps the Table
A1 fields that apply and reuses the overlay `Criterion` for its rubric.

Running a packet (serving the organizer to an agent and logging its calls) is orchestration and
lives in `worldkit.run.infoorg_packet`; this module stages the workspace and grades the tree.
Packets hold source text: nothing here is ever written outside the packet and run folders.
"""

from __future__ import annotations

import datetime as dt
import shutil
import tempfile
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints, ValidationError

from worldkit._model import Model
from worldkit.canon import canonical_bytes, pretty_json, sha256_file
from worldkit.errors import CheckFailed, InvalidOverlay, UsageError
from worldkit.infoorg.check import REFERENCE_PATH, StructureScoreCheck, register
from worldkit.infoorg.instructions import render_criterion, render_tool_instruction
from worldkit.infoorg.packet_info import PacketInfo, check_packet_dir
from worldkit.infoorg.sources.records import Family
from worldkit.infoorg.validity import check_workspace
from worldkit.overlay.context import CheckResult, GradingContext
from worldkit.overlay.models import Criterion

__all__ = [
    "OVERLAY_FILE",
    "SEAT",
    "WORLD",
    "PacketOverlay",
    "PacketRun",
    "WorldBinding",
    "bind_world",
    "check_overlay",
    "grade_workspace",
    "inbox_inventory",
    "load_overlay",
    "make_overlay",
    "stage_workspace",
    "write_overlay",
]

OVERLAY_FILE = "overlay.json"
WORLD, REV, SEAT = "infoorg", "r1", "EMP-ORG-001"
TOOLS: tuple[str, ...] = ("list_files", "read_file", "search_files", "move_files", "check_inventory")
PROHIBITED: tuple[str, ...] = (
    "renaming, editing, copying, splitting, merging or deleting a record file",
    "creating files or folders in the working root other than hierarchy folders",
    "folder names that are empty, contain / or \\, are . or .., end in .txt or look like a record id",
)
_FAMILY_RECORDS = {
    "design": "design-document excerpts",
    "recap": "meeting-summary sentences",
    "thread": "issue-tracker subtasks and comments",
}

Sha256 = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]


class WorldBinding(Model):
    """The (world, rev, date, seat) a packet is laid on, and that projection's fingerprint."""

    world: str
    """World id (`infoorg`)."""
    rev: str
    """Starting revision."""
    date: dt.date
    """Point in the world's history at which the assignment occurs."""
    seat: str
    """Seat the organizer acts as; every logged call carries it."""
    pinned_fingerprint: Sha256
    """Fingerprint of the seat's projection at (rev, date), as for any overlay."""


class PacketRef(Model):
    """The packet an overlay describes, by the digests in its `packet.json`."""

    task_id: str
    """Task id, `<family>-NNN`."""
    record_count: int
    """Records in the inbox."""
    candidate_digest: Sha256
    """Digest of the candidate side (inbox and request)."""
    verifier_digest: Sha256
    """Digest of the verifier side (the reference)."""


class Deliverable(Model):
    """What the submission is: the final folder tree of the workspace, read from disk."""

    kind: Literal["workspace_tree"] = "workspace_tree"
    """Always `workspace_tree`."""
    description: str
    """The deliverable in words."""


class PacketOverlay(Model):
    """`<packet>/overlay.json`: one InfoOrgBench task as an overlay on the `infoorg` world."""

    schema_version: Literal[1] = 1
    """Format version."""
    id: str
    """Task id (equals the packet's)."""
    title: str
    """One-line title."""
    family: Family
    """Task family."""
    world: str
    """World id."""
    rev: str
    """Starting revision."""
    date: dt.date
    """Date of the assignment."""
    seat: str
    """Seat the agent occupies."""
    pinned_fingerprint: Sha256
    """Projection fingerprint of (world, rev, date, seat) when the packet was built."""
    request: str
    """The request given to the agent: exactly `candidate/request.md` (Appendix B.1 + B.2)."""
    criterion: str
    """The family's organizing criterion alone (Appendix B.2), as included in the request."""
    tool_instruction: str
    """The bounded tool instruction for tool-calling agents (Appendix B.3)."""
    surfaces: tuple[Literal["organizer"], ...] = ("organizer",)
    """Tool surfaces served: the organizer only."""
    tools: tuple[str, ...] = TOOLS
    """The organizer's tools (paper Table 9)."""
    permitted: tuple[Literal["move_files"], ...] = ("move_files",)
    """State changes the seat may make: moving records between folders of the workspace."""
    prohibited: tuple[str, ...] = PROHIBITED
    """What must not happen; each one makes the output invalid (S = 0)."""
    deliverable: Deliverable
    """The final workspace tree."""
    rubric: list[Criterion] = Field(min_length=1, max_length=1)
    """One deterministic criterion: the Structure Score (`structure_score` check)."""
    packet: PacketRef
    """The packet this overlay belongs to."""

    def structure_check(self) -> StructureScoreCheck:
        check = self.rubric[0].check
        if not isinstance(check, StructureScoreCheck):
            raise InvalidOverlay(f"overlay {self.id}: the rubric's check is not `structure_score`")
        return check


def bind_world(
    world: str = WORLD, rev: str = REV, date: dt.date | str | None = None, seat: str = SEAT
) -> WorldBinding:
    """Materialize (world, rev, date, seat) in a scratch folder and pin its fingerprint.

    `date` defaults to the world's `default_date`.
    """
    from worldkit.materialize.write import materialize, parse_date
    from worldkit.world import load_world

    package = load_world(world)
    if date is None:
        if package.spec.default_date is None:
            raise UsageError(f"world {package.id} has no default_date; pass a date")
        date = package.spec.default_date
    day = parse_date(date)
    with tempfile.TemporaryDirectory(prefix="worldkit-infoorg-pin-") as scratch:
        result = materialize(package, rev, day, seat, Path(scratch) / "projection")
    return WorldBinding(
        world=package.id, rev=rev, date=day, seat=seat, pinned_fingerprint=result.fingerprint
    )


def make_overlay(
    info: PacketInfo, request: str, reference_sha256: str, binding: WorldBinding
) -> PacketOverlay:
    """The overlay of one packet (`request` is the packet's `candidate/request.md` text)."""
    check = StructureScoreCheck(reference_sha256=reference_sha256)
    criterion = Criterion(
        id="S",
        text=(
            "The final tree agrees with the source hierarchy at every level: Structure Score "
            "S = F1_bal · E over rooted triples, 0 for an invalid output (paper §4.1, Appendix D)."
        ),
        route="deterministic",
        check=check,
    )
    return PacketOverlay(
        id=info.task_id,
        title=f"Organize {info.record_count} {_FAMILY_RECORDS[info.family]} into a two-level hierarchy",
        family=info.family,
        world=binding.world,
        rev=binding.rev,
        date=binding.date,
        seat=binding.seat,
        pinned_fingerprint=binding.pinned_fingerprint,
        request=request,
        criterion=render_criterion(info.family),
        tool_instruction=render_tool_instruction(),
        deliverable=Deliverable(
            description="Every record of the inbox filed once as <group>/<subgroup>/<ID>.txt under "
            "the workspace root, bytes unchanged; the tree on disk when the agent stops."
        ),
        rubric=[criterion],
        packet=PacketRef(
            task_id=info.task_id,
            record_count=info.record_count,
            candidate_digest=info.candidate_digest,
            verifier_digest=info.verifier_digest,
        ),
    )


def overlay_bytes(overlay: PacketOverlay) -> bytes:
    return canonical_bytes(overlay.model_dump(mode="json"))


def write_overlay(packet_dir: Path, overlay: PacketOverlay) -> Path:
    path = Path(packet_dir) / OVERLAY_FILE
    path.write_bytes(overlay_bytes(overlay))
    return path


def load_overlay(packet_dir: Path) -> PacketOverlay:
    """Read `<packet>/overlay.json` (errors name the file and field)."""
    register()
    file = Path(packet_dir) / OVERLAY_FILE
    if not file.is_file():
        raise InvalidOverlay(
            f"no {OVERLAY_FILE}; pass a packet directory built by `worldkit infoorg build`", file=file
        )
    try:
        return PacketOverlay.model_validate_json(file.read_bytes())
    except ValidationError as error:
        first = error.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or None
        raise InvalidOverlay(f"{first['msg']}; rebuild the packet", file=file, field=field) from None


def check_overlay(packet_dir: Path, *, fresh: bool = True) -> PacketOverlay:
    """Load a packet's overlay and prove it still describes the packet on disk.

    Checks the packet's digests, that the overlay names this packet, that its request is the
    packet's `request.md`, that its reference digest matches, and (with `fresh`) that the world
    projection still has the pinned fingerprint. Raises `CheckFailed` naming what differs.
    """
    packet_dir = Path(packet_dir)
    overlay = load_overlay(packet_dir)
    if not (packet_dir / "packet.json").is_file():
        raise InvalidOverlay("no packet.json beside the overlay; rebuild the packet", file=packet_dir)
    info = check_packet_dir(packet_dir)
    where = packet_dir / OVERLAY_FILE
    expected = PacketRef(
        task_id=info.task_id,
        record_count=info.record_count,
        candidate_digest=info.candidate_digest,
        verifier_digest=info.verifier_digest,
    )
    if overlay.packet != expected or overlay.id != info.task_id:
        raise CheckFailed(f"{where}: describes packet {overlay.packet.task_id} with other digests than "
                          f"{packet_dir / 'packet.json'}; rebuild the packet")
    request = (packet_dir / "candidate" / "request.md").read_bytes()
    if request != overlay.request.encode("utf-8"):
        raise CheckFailed(f"{where}: request differs from candidate/request.md; rebuild the packet")
    if sha256_file(packet_dir / REFERENCE_PATH) != overlay.structure_check().reference_sha256:
        raise CheckFailed(f"{where}: the reference digest differs from {REFERENCE_PATH}; rebuild the packet")
    if fresh:
        now = bind_world(overlay.world, overlay.rev, overlay.date, overlay.seat).pinned_fingerprint
        if now != overlay.pinned_fingerprint:
            raise CheckFailed(
                f"{where}: pinned_fingerprint {overlay.pinned_fingerprint[:12]}… no longer matches the "
                f"projection of {overlay.world} {overlay.rev} {overlay.date} {overlay.seat} "
                f"({now[:12]}…); the world changed since the build — rebuild the packets"
            )
    return overlay


# --- workspace ---------------------------------------------------------------------------------


def inbox_inventory(packet_dir: Path) -> dict[str, str]:
    """Record id → SHA-256 of its bytes, from the candidate inbox (never the verifier side)."""
    inbox = Path(packet_dir) / "candidate" / "inbox"
    return {path.stem: sha256_file(path) for path in sorted(inbox.glob("*.txt"))}


def stage_workspace(packet_dir: Path, workspace: Path) -> bool:
    """Copy the packet's inbox into `workspace/inbox` if the workspace is missing or empty.

    A non-empty workspace is resumed as it is, but only if it holds every record of this packet
    exactly once. Returns True when it staged a fresh inbox.
    """
    workspace = Path(workspace)
    if workspace.exists() and not workspace.is_dir():
        raise UsageError(f"--workspace {workspace} is a file; pass a folder (it may be empty)")
    if not workspace.exists() or not any(workspace.iterdir()):
        workspace.mkdir(parents=True, exist_ok=True)
        shutil.copytree(Path(packet_dir) / "candidate" / "inbox", workspace / "inbox")
        return True
    scan = check_workspace(workspace, inbox_inventory(packet_dir), hash_bytes=False)
    if scan.missing or scan.duplicated:
        lost = (scan.missing + sorted(scan.duplicated))[:3]
        raise UsageError(
            f"--workspace {workspace} is not empty and does not hold this packet's records once each "
            f"({', '.join(lost)}…); pass an empty folder to start fresh, or this packet's workspace"
        )
    return False


def grade_workspace(
    packet_dir: Path,
    workspace: Path,
    overlay: PacketOverlay,
    events: list[dict[str, Any]] | None = None,
) -> dict[str, CheckResult]:
    """Criterion id → result, graded on the final tree like any overlay rubric."""
    ctx = GradingContext(
        workspace=Path(workspace),
        records={},
        sent=[],
        events=events,
        projection=Path(packet_dir) / "candidate",
    )
    return {c.id: c.check.evaluate(ctx) for c in overlay.rubric if c.check is not None}

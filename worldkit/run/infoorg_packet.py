"""Running an InfoOrgBench packet: the organizer served to an agent, every call logged, the tree scored.

`run_packet` stages a workspace from the packet's inbox (`worldkit.infoorg.overlays`), serves the
organizer MCP server (`worldkit.mcp.organizer`) to an agent through an in-memory client with every
call going to the store's event log, then captures the tree from disk, scores it, grades the
packet's rubric and replays the logged moves as a cross-check. The result goes to
`<run>/result.json` (`PacketRun`). Nothing is written outside the run folder.
"""

from __future__ import annotations

import shutil
import tempfile
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from worldkit._model import Model
from worldkit.canon import canonical_json, pretty_json, sha256_bytes
from worldkit.errors import ExitCode, OutputExists, WorldkitError
from worldkit.infoorg.overlays import (
    check_overlay,
    grade_workspace,
    inbox_inventory,
    stage_workspace,
)
from worldkit.infoorg.scoring import StructureScore, score_workspace
from worldkit.infoorg.validity import check_workspace

if TYPE_CHECKING:
    from worldkit.agents.registry import Agent
    from worldkit.store import Store

__all__ = ["MESSAGE_CHARS_MAX", "TRANSCRIPT_FILE", "PacketRun", "PacketRunFailed", "RunUsage", "run_packet"]

TRANSCRIPT_FILE = "transcript.jsonl"
"""The run folder's transcript of the agent's conversation."""

MESSAGE_CHARS_MAX = 100_000
"""Longest final message kept in a run result; the declaration of 60 records takes ~4,000."""


class PacketRunFailed(WorldkitError):
    """An agent could not finish a packet (its endpoint was unreachable or kept failing): the run
    is marked `failed` in its `result.json`, which is still written (exit 1)."""

    exit_code = ExitCode.CHECK_FAILED


class RunUsage(Model):
    """What one episode used (Table 16, Appendix C.6). Wall time is measured, so never digested."""

    tokens_in: int
    """Prompt tokens the endpoint reported, summed over the episode (0 for agents without a model)."""
    tokens_out: int
    """Completion tokens the endpoint reported, summed over the episode."""
    steps: int
    """Model turns (a baseline: its tool calls)."""
    tool_calls: int
    """Tool calls logged in the run's event log."""
    stop_reason: str
    """Why the episode ended: done (a response called no tool), step_budget, token_budget, or error."""
    wall_time_s: float
    """Seconds from the agent's start to its end."""
    transcript: str | None
    """The run folder's transcript file (JSON lines: settings, every message sent and received,
    each response's usage and finish reason), or None for an agent without a conversation."""
    transcript_sha256: str | None
    """SHA-256 of the transcript file."""


class PacketRun(Model):
    """What `run_packet` did and how the captured workspace scored (`<run>/result.json`)."""


    schema_version: Literal[1, 2] = 2
    """Format version (the file and `worldkit infoorg run --json` carry the same object); version
    1 files (without status, harness, usage) are still read."""
    status: Literal["completed", "failed"] = "completed"
    """`failed` when the agent could not finish (see `error`); the tree it left is still scored."""
    error: str | None = None
    """Why the run failed."""
    harness: dict[str, Any] = {}
    """The agent's configuration: harness name and version, model, Table 8's settings sent."""
    manifest_status: Literal["match", "absent", "unchecked"] = "unchecked"
    """The packet against its family's frozen manifest (`absent`: none is frozen for the family)."""
    usage: RunUsage | None = None
    """Tokens, steps, tool calls, stop reason, wall time and the transcript's file."""
    run_id: str
    """Run id in the store's event log."""
    task_id: str
    """The packet's task id."""
    agent: str
    """Agent name (`noop`, `baseline:<name>`)."""
    seat: str
    """Seat the calls were logged as."""
    run_dir: str
    """The run's folder: `workspace/` (the agent's tree) and `result.json` (this object)."""
    store: str
    """The store holding the event log (password masked)."""
    events: int
    """Tool calls logged."""
    event_log_head: str
    """Hash of the last event ('' when nothing was logged)."""
    replay_matches: bool
    """Replaying the logged moves onto a fresh inbox reproduces the captured tree."""
    agent_message: str
    """The agent's final message (the paper's JSON declaration), cut at `MESSAGE_CHARS_MAX`."""
    score: StructureScore
    """The Structure Score of the captured workspace."""
    rubric: dict[str, tuple[bool, str]]
    """Criterion id → (passed, detail)."""


def _replay_tree(packet_dir: Path, changes: list[Mapping[str, Any]], scratch: Path) -> dict[str, Any]:
    from worldkit.infoorg.organizer import Organizer

    workspace = scratch / "replay"
    shutil.copytree(Path(packet_dir) / "candidate" / "inbox", workspace / "inbox")
    organizer = Organizer(workspace, inventory=inbox_inventory(packet_dir))
    for change in changes:
        organizer.replay(change)
    return check_workspace(workspace, organizer.inventory, hash_bytes=False).paths


def _leaf(error: BaseException) -> BaseException:
    """The error inside (possibly nested) exception groups — a WorldkitError if there is one."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        found = [e for e in error.exceptions if isinstance(_leaf(e), WorldkitError)]
        error = found[0] if found else error.exceptions[0]
    return error


def _write_transcript(run_dir: Path, entries: list[dict[str, Any]]) -> tuple[str | None, str | None]:
    if not entries:
        return None, None
    data = "".join(canonical_json(entry) for entry in entries).encode("utf-8")
    (run_dir / TRANSCRIPT_FILE).write_bytes(data)
    return TRANSCRIPT_FILE, sha256_bytes(data)


def run_packet(
    packet_dir: Path,
    agent: Agent,
    store: Store,
    *,
    out: Path = Path("runs"),
    run_id: str | None = None,
    manifest: Path | None = None,
) -> PacketRun:
    """Run `agent` on a packet in `<out>/<run id>/workspace` and score what it leaves on disk.

    The packet must match its family's frozen manifest (`manifest`, default
    `manifests/infoorg/<family>.json`; none is frozen for Thread). The workspace is staged from
    the packet's inbox; the agent works through the organizer tools (every call logged as the
    overlay's seat); the tree is captured from disk, scored, graded and cross-checked by
    replaying the logged moves. The result goes to `result.json` beside the workspace, the
    agent's conversation to `transcript.jsonl`. An agent that fails (an unreachable endpoint)
    ends the run as `failed`: its result is still written and returned. Refuses a run folder
    that already exists.
    """
    import anyio
    from mcp import Client

    from worldkit.agents.registry import AgentResult, AgentTask
    from worldkit.agents.session import MCPToolSession
    from worldkit.infoorg.packets import check_frozen_packet
    from worldkit.mcp.organizer import build_organizer_server
    from worldkit.mcp.session import open_run
    from worldkit.run.runner import FAILED_TOOL
    from worldkit.store import read_events, state_changes

    packet_dir = Path(packet_dir)
    overlay = check_overlay(packet_dir)
    manifest_status = check_frozen_packet(packet_dir, manifest)
    run_id = run_id or f"{overlay.id}.{agent.name.replace(':', '-')}.{uuid.uuid4().hex[:10]}"
    run_dir = Path(out).absolute() / run_id
    if run_dir.exists():
        raise OutputExists(f"run folder {run_dir} exists; give a new --run-id or another --out")
    workspace = run_dir / "workspace"
    stage_workspace(packet_dir, workspace)
    task = AgentTask(request=overlay.request, seat=overlay.seat)
    failure: str | None = None
    describe = getattr(agent, "describe", None)
    harness = dict(describe()) if callable(describe) else {"id": agent.name, "harness": agent.name}
    with open_run(store, run_id, overlay.seat) as log:
        server = build_organizer_server(
            workspace, event_log=log, inventory=inbox_inventory(packet_dir),
            request=overlay.request,
        )

        async def drive() -> Any:
            async with Client(server) as client:
                return await agent.run(task, MCPToolSession(client))

        started = time.monotonic()
        try:
            outcome = anyio.run(drive)
        except Exception as error:  # noqa: BLE001 - any agent failure ends the run as failed
            leaf = _leaf(error)
            failure = leaf.message if isinstance(leaf, WorldkitError) else f"{type(leaf).__name__}: {leaf}"
            log.append(FAILED_TOOL, {"agent": agent.name}, "error", None, {"error": failure[:1000]})
            outcome = getattr(agent, "partial", None) or AgentResult()
            outcome.stopped_by = "error"
        wall = time.monotonic() - started
    events = [event.model_dump(mode="json") for event in read_events(store, run_id)]
    changes = [event.state_change for event in state_changes(store, run_id) if event.state_change]
    # Capture: the tree on disk, independently of the agent's last message.
    score = score_workspace(packet_dir, workspace)
    rubric = grade_workspace(packet_dir, workspace, overlay, events)
    with tempfile.TemporaryDirectory(prefix="worldkit-infoorg-replay-") as scratch:
        replayed = _replay_tree(packet_dir, changes, Path(scratch))
    captured = check_workspace(workspace, inbox_inventory(packet_dir), hash_bytes=False).paths
    transcript, transcript_sha = _write_transcript(run_dir, outcome.transcript)
    result = PacketRun(
        status="failed" if failure else "completed",
        error=failure,
        harness=harness,
        manifest_status=manifest_status,
        usage=RunUsage(
            tokens_in=outcome.tokens_in, tokens_out=outcome.tokens_out, steps=outcome.steps,
            tool_calls=sum(1 for e in events if e["tool"] != FAILED_TOOL), stop_reason=outcome.stopped_by,
            wall_time_s=round(wall, 3), transcript=transcript, transcript_sha256=transcript_sha,
        ),  # fmt: skip
        run_id=run_id,
        task_id=overlay.id,
        agent=agent.name,
        seat=overlay.seat,
        run_dir=str(run_dir),
        store=store.url,
        events=len(events),
        event_log_head=events[-1]["hash"] if events else "",
        replay_matches=replayed == captured,
        agent_message=outcome.final_message[:MESSAGE_CHARS_MAX],
        score=score,
        rubric={cid: (verdict.passed, verdict.detail) for cid, verdict in rubric.items()},
    )
    (run_dir / "result.json").write_text(pretty_json(result.model_dump(mode="json")), encoding="utf-8")
    return result

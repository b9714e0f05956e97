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
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from worldkit._model import Model
from worldkit.canon import pretty_json
from worldkit.errors import OutputExists
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

__all__ = ["MESSAGE_CHARS_MAX", "PacketRun", "run_packet"]

MESSAGE_CHARS_MAX = 100_000
"""Longest final message kept in a run result; the declaration of 60 records takes ~4,000."""


class PacketRun(Model):
    """What `run_packet` did and how the captured workspace scored (`<run>/result.json`)."""


    schema_version: Literal[1] = 1
    """Format version (the file and `worldkit infoorg run --json` carry the same object)."""
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


def run_packet(
    packet_dir: Path,
    agent: Agent,
    store: Store,
    *,
    out: Path = Path("runs"),
    run_id: str | None = None,
) -> PacketRun:
    """Run `agent` on a packet in `<out>/<run id>/workspace` and score what it leaves on disk.

    The workspace is staged from the packet's inbox; the agent works through the organizer tools
    (every call logged as the overlay's seat); the tree is captured from disk, scored, graded
    and cross-checked by replaying the logged moves. The result goes to `result.json` beside the
    workspace. Refuses a run folder that already exists.
    """
    import anyio
    from mcp import Client

    from worldkit.agents.registry import AgentTask
    from worldkit.agents.session import MCPToolSession
    from worldkit.mcp.organizer import build_organizer_server
    from worldkit.mcp.session import open_run
    from worldkit.store import read_events, state_changes

    packet_dir = Path(packet_dir)
    overlay = check_overlay(packet_dir)
    run_id = run_id or f"{overlay.id}.{agent.name.replace(':', '-')}.{uuid.uuid4().hex[:10]}"
    run_dir = Path(out).absolute() / run_id
    if run_dir.exists():
        raise OutputExists(f"run folder {run_dir} exists; give a new --run-id or another --out")
    workspace = run_dir / "workspace"
    stage_workspace(packet_dir, workspace)
    task = AgentTask(request=overlay.request, seat=overlay.seat)
    with open_run(store, run_id, overlay.seat) as log:
        server = build_organizer_server(
            workspace, event_log=log, inventory=inbox_inventory(packet_dir),
            request=overlay.request,
        )

        async def drive() -> Any:
            async with Client(server) as client:
                return await agent.run(task, MCPToolSession(client))

        outcome = anyio.run(drive)
    events = [event.model_dump(mode="json") for event in read_events(store, run_id)]
    changes = [event.state_change for event in state_changes(store, run_id) if event.state_change]
    # Capture: the tree on disk, independently of the agent's last message.
    score = score_workspace(packet_dir, workspace)
    rubric = grade_workspace(packet_dir, workspace, overlay, events)
    with tempfile.TemporaryDirectory(prefix="worldkit-infoorg-replay-") as scratch:
        replayed = _replay_tree(packet_dir, changes, Path(scratch))
    captured = check_workspace(workspace, inbox_inventory(packet_dir), hash_bytes=False).paths
    result = PacketRun(
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

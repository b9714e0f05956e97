"""worldkit tasks as inspect_ai tasks (`pip install worldkit[inspect]`).

Registered through inspect_ai's `inspect_ai` entry point (pyproject.toml), so from any directory:

    inspect eval worldkit/qualification_sweep --model openai/gpt-4o -T condition=curated:curator-1
    inspect eval worldkit/task -T overlay=path/to/overlay.yaml --model mockllm/model

One task per overlay of the PharmaCo demo world (`worldkit/<overlay id with _>`), plus
`worldkit/task` for any overlay (`-T overlay=ID|PATH`). Task arguments: `condition` (`full` or
`curated:NAME`), `world` (the world whose overlays to look in, a name under overlays/), `judge`
(`none`, `facts` or `openai`, for semantic criteria), `runs` (where run folders are kept).

Per sample, `seat_session` stages a run folder (`worldkit.run.folder`) under `runs/`, serves it with
`python -m worldkit serve --run-folder DIR` through inspect's `mcp_server_stdio` — the model sees
the seat's tools and nothing else — and lets the model call tools until it stops. `worldkit_scorer`
then grades the folder with `worldkit.run.regrade.grade_folder` (what `worldkit grade RUN_DIR` runs):
the score's value holds one entry per graded criterion (1 pass, 0 fail) and `pass_fraction`; its
metadata holds every criterion's verdict and access label, the run folder and the execution record.
"""

from __future__ import annotations

import os
import re
import sys
import uuid
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import mcp_connection, mcp_server_stdio

__all__ = [
    "PHARMACO_TASKS",
    "infoorg_task",
    "organizer_session",
    "overlay_task",
    "seat_session",
    "structure_scorer",
    "worldkit_scorer",
    "worldkit_task",
]

DEMO_WORLD = "pharmaco_demo"
PHARMACO_TASKS = (
    "authority-response", "overwrap-position", "qualification-sweep", "records-integrity",
    "shelf-life-assessment", "stability-update", "supplier-change-audit", "validation-defense",
)  # fmt: skip
"""The overlays of overlays/pharmaco_demo/, each registered as `worldkit/<id with _>`."""
RUN_DIR_KEY = "worldkit_run_dir"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")


def _instruction(overlay: Any) -> str:
    from worldkit.overlay.apply import request_bytes

    return (
        request_bytes(overlay).decode("utf-8").rstrip("\n")
        + f"\n\n---\n\nYou act as {overlay.seat} (as of {overlay.date.isoformat()}). Your company systems are your "
        "tools. Write every deliverable with the `write_file` tool: only what the tools record is graded.\n"
    )


def worldkit_task(overlay_ref: str, *, condition: str = "full", judge: str = "none", runs: str = "runs") -> Task:
    """The inspect task of one overlay under `condition` (see module doc)."""
    from worldkit.grade.judge import make_judge
    from worldkit.overlay import load_overlay, overlay_digest, resolve_overlay
    from worldkit.overlay.apply import packet_name

    make_judge(judge, {})  # refuse an unknown judge, an unknown task or condition before anything runs
    overlay = load_overlay(resolve_overlay(overlay_ref))
    packet_name(overlay, condition)
    sample = Sample(
        id=f"{overlay.id}:{condition}",
        input=_instruction(overlay),
        metadata={"overlay": overlay.id, "overlay_sha256": overlay_digest(overlay), "condition": condition,
                  "rev": overlay.rev, "date": overlay.date.isoformat(), "seat": overlay.seat},  # fmt: skip
    )
    return Task(
        dataset=MemoryDataset([sample], name=f"worldkit-{overlay.id}"),
        solver=seat_session(str(overlay.source or overlay_ref), condition=condition, runs=runs),
        scorer=worldkit_scorer(judge=judge),
        metadata={"overlay": overlay.id, "condition": condition},
    )


def _server_env() -> dict[str, str]:
    """What `worldkit serve` needs from this process: the same import path and worldkit's settings."""
    env = {k: v for k, v in os.environ.items() if k.startswith("WORLDKIT_")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    return env


@solver
def seat_session(overlay_ref: str, condition: str = "full", runs: str = "runs") -> Solver:
    """Stage a run folder, serve the seat's tools over MCP (stdio) and let the model work until it stops."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        import anyio

        from worldkit.overlay import load_overlay, resolve_overlay
        from worldkit.run.folder import stage_run_folder

        overlay = load_overlay(resolve_overlay(overlay_ref))
        run_id = f"inspect.{_slug(overlay.id)}.{_slug(condition)}.{uuid.uuid4().hex[:10]}"
        run_dir = Path(runs).absolute() / run_id
        await anyio.to_thread.run_sync(lambda: stage_run_folder(
            overlay, run_dir, run_id=run_id, condition=condition, store=f"sqlite:///{run_dir / 'store.db'}",
            agent=f"inspect:{state.model}", agent_config={"id": f"inspect:{state.model}", "engine": "inspect_ai"},
        ))  # fmt: skip
        state.store.set(RUN_DIR_KEY, str(run_dir))
        server = mcp_server_stdio(
            name="worldkit-seat", command=sys.executable,
            args=["-m", "worldkit", "serve", "--run-folder", str(run_dir)], env=_server_env(), cwd=str(run_dir),
        )  # fmt: skip
        # The server runs for this sample only: it has stopped (and stored every event) before scoring.
        async with mcp_connection([server]):
            state.tools = await server.tools()
            state = await generate(state, tool_calls="loop")
        return state

    return solve


@scorer(metrics={"*": [mean()]})
def worldkit_scorer(judge: str = "none") -> Scorer:
    """Grade the sample's run folder as `worldkit grade RUN_DIR` does (`grade_folder`)."""

    async def score(state: TaskState, target: Target) -> Score:
        import anyio

        from worldkit.grade.grading import summary
        from worldkit.grade.judge import make_judge
        from worldkit.run.regrade import grade_folder

        run_dir = Path(state.store.get(RUN_DIR_KEY))
        record = await anyio.to_thread.run_sync(lambda: grade_folder(run_dir, judge=make_judge(judge, {})))
        result = summary(record, run_dir / "execution-record.json")
        graded = {cid: float(v == "pass") for cid, v in result["criteria"].items() if v in ("pass", "fail")}
        value = {"pass_fraction": sum(graded.values()) / len(graded) if graded else 0.0, **graded}
        deliverables = {path: (run_dir / "workspace" / path).read_text(encoding="utf-8", errors="replace")
                        for path in record.deliverables if (run_dir / "workspace" / path).is_file()}  # fmt: skip
        return Score(
            value=value,
            answer="\n\n".join(f"## {p}\n{t}" for p, t in deliverables.items()) or None,
            explanation="; ".join(f"{c.id} {c.result} ({c.access}): {c.detail}" for c in record.criteria),
            metadata={"criteria": result["criteria"], "access": result["access"], "graded_by": result["graded_by"],
                      "run_dir": str(run_dir), "execution_record": record.model_dump(mode="json")},  # fmt: skip
        )

    return score


def _overlay_task(overlay_id: str) -> Any:
    def factory(condition: str = "full", world: str = DEMO_WORLD, judge: str = "none", runs: str = "runs") -> Task:
        return worldkit_task(f"{world}/{overlay_id}", condition=condition, judge=judge, runs=runs)

    factory.__name__ = factory.__qualname__ = overlay_id.replace("-", "_")
    factory.__doc__ = f"worldkit task {overlay_id} (overlays/<world>/{overlay_id}), served over MCP and graded by worldkit."
    return task(name=factory.__name__)(factory)


for _id in PHARMACO_TASKS:
    globals()[_id.replace("-", "_")] = _overlay_task(_id)


@task(name="task")
def overlay_task(overlay: str, condition: str = "full", judge: str = "none", runs: str = "runs") -> Task:
    """Any worldkit task overlay (`-T overlay=ID|PATH`)."""
    return worldkit_task(overlay, condition=condition, judge=judge, runs=runs)


# --- InfoOrgBench ------------------------------------------------------------------------------


@task(name="infoorg")
def infoorg_task(packet: str, runs: str = "runs") -> Task:
    """An InfoOrgBench packet (`-T packet=DIR`): the organizer's five tools over MCP, the Structure
    Score of the tree the model leaves as the score."""
    from worldkit.infoorg.overlays import check_overlay

    overlay = check_overlay(Path(packet))
    sample = Sample(id=overlay.id, input=overlay.request,
                    metadata={"task_id": overlay.id, "seat": overlay.seat, "records": overlay.packet.record_count})  # fmt: skip
    return Task(
        dataset=MemoryDataset([sample], name=f"infoorg-{overlay.id}"),
        solver=organizer_session(str(Path(packet).absolute()), runs=runs),
        scorer=structure_scorer(str(Path(packet).absolute())),
        metadata={"benchmark": "InfoOrgBench", "task_id": overlay.id},
    )


@solver
def organizer_session(packet: str, runs: str = "runs") -> Solver:
    """Serve the packet's organizer (`worldkit infoorg serve`, stdio) on a fresh workspace under `runs/`."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        run_id = f"inspect.infoorg.{_slug(Path(packet).name)}.{uuid.uuid4().hex[:10]}"
        run_dir = Path(runs).absolute() / run_id
        run_dir.mkdir(parents=True)
        state.store.set(RUN_DIR_KEY, str(run_dir))
        server = mcp_server_stdio(
            name="worldkit-organizer", command=sys.executable,
            args=["-m", "worldkit", "infoorg", "serve", "--packet", packet, "--workspace", str(run_dir / "workspace"),
                  "--store", f"sqlite:///{run_dir / 'store.db'}", "--run-id", run_id],
            env=_server_env(), cwd=str(run_dir),
        )  # fmt: skip
        async with mcp_connection([server]):
            state.tools = await server.tools()
            state = await generate(state, tool_calls="loop")
        return state

    return solve


@scorer(metrics={"*": [mean()]})
def structure_scorer(packet: str) -> Scorer:
    """The Structure Score of the run's workspace (`worldkit infoorg score`'s `score_workspace`)."""

    async def score(state: TaskState, target: Target) -> Score:
        import anyio

        from worldkit.infoorg.scoring import score_workspace

        run_dir = Path(state.store.get(RUN_DIR_KEY))
        result = await anyio.to_thread.run_sync(lambda: score_workspace(Path(packet), run_dir / "workspace"))
        parts = {"f1_bal": result.f1_bal, "E": result.E, "triplet_f1": result.triplet_f1} if result.valid else {}
        value = {"S": float(result.S or 0.0) if result.valid else 0.0, "valid": float(result.valid),
                 **{k: float(v) for k, v in parts.items() if v is not None}}  # fmt: skip
        return Score(value=value, explanation="; ".join(result.problems) or None,
                     metadata={"structure_score": result.model_dump(mode="json"), "run_dir": str(run_dir)})  # fmt: skip

    return score

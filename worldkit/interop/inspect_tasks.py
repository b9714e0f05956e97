"""worldkit tasks as inspect_ai tasks (`pip install worldkit-bench[inspect]`).

Registered through inspect_ai's `inspect_ai` entry point (pyproject.toml), so from any directory:

    inspect eval worldkit/qualification_sweep --model openai/gpt-4o -T condition=curated:curator-1
    inspect eval worldkit/task -T overlay=path/to/overlay.yaml --model mockllm/model

One task per overlay of every shipped world (`worldkit/<overlay id with _>`, the names `worldkit tasks
list` shows; ids are unique across the shipped worlds), plus `worldkit/task` for any overlay
(`-T overlay=ID|PATH`). Each task is shown under its overlay's id (`display_name`) with its title as
the description, so `worldkit/task` runs read as the task they run; in a checkout, the names `inspect
list tasks` prints (`worldkit/interop/inspect_shipped.py@ild_warning`) run too (`reachable`). Task arguments: `condition` (`full` or `curated:NAME`), `world` (the world
whose overlays to look in, a name under overlays/; default the task's own), `judge` (`none`, `facts`
or `openai`, for semantic criteria), `runs` (where run folders are kept).

inspect's `mockllm` provider makes up token usage for outputs that carry none by counting with
tiktoken's o200k_base encoding, which tiktoken downloads on first use; worldkit's tasks must run
offline, so `mockllm`'s count is a length estimate here (`_offline_mock_token_counts`). No other
provider is touched.

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
from collections.abc import Callable
from typing import Any, TypeVar

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import mcp_connection, mcp_server_stdio

__all__ = [
    "PHARMACO_TASKS",
    "SHIPPED_TASKS",
    "shipped_module_source",
    "shipped_task",
    "infoorg_task",
    "organizer_session",
    "overlay_task",
    "reachable",
    "seat_session",
    "structure_scorer",
    "worldkit_scorer",
    "worldkit_task",
]

from worldkit.overlay.catalog import inspect_name, shipped_task_ids

DEMO_WORLD = "pharmaco_demo"
PHARMACO_TASKS = (
    "authority-response", "overwrap-position", "qualification-sweep", "records-integrity",
    "shelf-life-assessment", "stability-update", "supplier-change-audit", "validation-defense",
)  # fmt: skip
"""The overlays of overlays/pharmaco_demo/, each registered as `worldkit/<id with _>`."""
SHIPPED_TASKS: dict[str, str] = shipped_task_ids()
"""Every shipped overlay id → its world; each is registered as `worldkit/<id with _>`."""
RUN_DIR_KEY = "worldkit_run_dir"
TaskFactory = TypeVar("TaskFactory", bound=Callable[..., Task])


def reachable(registered_task: TaskFactory) -> TaskFactory:
    """Put over `@task(name="<name>")` so that the task is found as `worldkit/<name>` wherever worldkit is
    installed, and as `FILE.py@<name>`, the name `inspect list tasks` prints, in a checkout.

    The name must be a literal: `inspect list tasks` reads it from the source (anything else lists the
    Python function's name, which inspect cannot find). inspect prefixes a task with its package
    (`worldkit/`) when the module lies in site-packages or is an editable install of a distribution
    named like the package; worldkit's distribution is `worldkit-bench`, so in an editable checkout the
    name stays bare and the same function is registered once more under `worldkit/<name>`; installed
    from a wheel, the name is prefixed and the function is registered once more under the bare name
    that `inspect eval FILE.py@<name>` looks up."""
    from inspect_ai._util.registry import RegistryInfo, registry_add, registry_info

    info = registry_info(registered_task)
    if "/" not in info.name:
        task(name=f"worldkit/{info.name}")(registered_task.__wrapped__)  # type: ignore[attr-defined]
    else:
        bare = info.name.split("/", 1)[1]
        again = task(name=bare)(registered_task.__wrapped__)  # type: ignore[attr-defined]
        registry_add(again, RegistryInfo(type="task", name=bare, metadata=registry_info(again).metadata))
        registry_add(registered_task, info)  # `task` took the prefixed name for the copy: it stays the original's
    return registered_task


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
    _runs_folder(runs)
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
        display_name=overlay.id,
        description=overlay.title,
        metadata={"overlay": overlay.id, "world": str(overlay.world), "title": overlay.title, "condition": condition},
    )


def _runs_folder(runs: str) -> Path:
    """`runs`, made now: a folder that cannot be made fails the task before it runs, and so `inspect eval`
    exits non-zero (an error inside a sample only marks the log's status)."""
    from worldkit.errors import UsageError

    folder = Path(runs).absolute()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise UsageError(f"-T runs={runs}: cannot make the folder for run folders ({error.strerror}); "
                         "name a writable folder") from None
    return folder


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


def shipped_task(overlay_id: str, world: str, condition: str, judge: str, runs: str) -> Task:
    """The inspect task of the shipped overlay `world/overlay_id` (what `inspect_shipped`'s tasks call)."""
    return worldkit_task(f"{world}/{overlay_id}", condition=condition, judge=judge, runs=runs)


def shipped_module_source() -> str:
    """The source of `worldkit/interop/inspect_shipped.py`: one `@task` per shipped overlay, declared so that
    `inspect list tasks` (which reads `@task` decorators from source) shows each. A test keeps it current;
    `python -m worldkit.interop.inspect_tasks --write` rewrites it."""
    lines = [
        '"""Every task of every shipped world as an inspect_ai task: `inspect eval worldkit/<id with _>`.',
        "",
        "Generated from the shipped overlays by `python -m worldkit.interop.inspect_tasks --write` (a test keeps",
        "it current); the entry point `inspect_ai` names this module, so importing it registers these tasks and",
        "`worldkit/task` and `worldkit/infoorg` (worldkit.interop.inspect_tasks). `-T world=W` looks for the",
        'same overlay id in another world\'s overlays; `-T condition`, `-T judge` and `-T runs` as for any task.',
        "(`reachable` makes each also `worldkit/<name>` in a checkout, where inspect adds no package prefix.)",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from inspect_ai import Task, task",
        "",
        "from worldkit.interop.inspect_tasks import PHARMACO_TASKS, infoorg_task, overlay_task, reachable, shipped_task",
        "",
        '__all__ = ["PHARMACO_TASKS", "SHIPPED", "infoorg_task", "overlay_task"]',
        "",
        "SHIPPED: dict[str, str] = {",
        *(f'    "{task_id}": "{world}",' for task_id, world in sorted(SHIPPED_TASKS.items())),
        "}",
        '"""Shipped overlay id → its world."""',
    ]
    for task_id, world in sorted(SHIPPED_TASKS.items()):
        name = inspect_name(task_id).split("/", 1)[1]
        lines += [
            "", "",
            "@reachable",
            f'@task(name="{name}")',
            f'def {name}(condition: str = "full", world: str = "{world}", judge: str = "none", runs: str = "runs") -> Task:',
            f'    """worldkit task {task_id} of {world}, served over MCP and graded by worldkit."""',
            f'    return shipped_task("{task_id}", world, condition, judge, runs)',
        ]  # fmt: skip
    return "\n".join(lines) + "\n"


def _offline_mock_token_counts() -> None:
    """`mockllm`'s made-up token usage as a length estimate (4 characters a token, +10% as inspect adds)
    instead of tiktoken's o200k_base, which would be downloaded (see module doc)."""
    from inspect_ai.model._providers.mockllm import MockLLM

    async def count_text_tokens(self: Any, text: str) -> int:
        return max(1, int(len(text) / 4 * 1.1))

    MockLLM.count_text_tokens = count_text_tokens  # type: ignore[method-assign]


_offline_mock_token_counts()


@reachable
@task(name="task")
def overlay_task(overlay: str, condition: str = "full", judge: str = "none", runs: str = "runs") -> Task:
    """Any worldkit task overlay (`-T overlay=ID|PATH`)."""
    return worldkit_task(overlay, condition=condition, judge=judge, runs=runs)


# --- InfoOrgBench ------------------------------------------------------------------------------


@reachable
@task(name="infoorg")
def infoorg_task(packet: str, runs: str = "runs") -> Task:
    """An InfoOrgBench packet (`-T packet=DIR`): the organizer's five tools over MCP, the Structure
    Score of the tree the model leaves as the score."""
    from worldkit.infoorg.overlays import check_overlay

    overlay = check_overlay(Path(packet))
    _runs_folder(runs)
    sample = Sample(id=overlay.id, input=overlay.request,
                    metadata={"task_id": overlay.id, "seat": overlay.seat, "records": overlay.packet.record_count})  # fmt: skip
    return Task(
        dataset=MemoryDataset([sample], name=f"infoorg-{overlay.id}"),
        solver=organizer_session(str(Path(packet).absolute()), runs=runs),
        scorer=structure_scorer(str(Path(packet).absolute())),
        display_name=f"infoorg:{overlay.id}",
        description=overlay.title,
        metadata={"benchmark": "InfoOrgBench", "task_id": overlay.id, "title": overlay.title},
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


if __name__ == "__main__":
    import sys as _sys

    _target = Path(__file__).with_name("inspect_shipped.py")
    if _sys.argv[1:] == ["--write"]:
        _target.write_text(shipped_module_source(), encoding="utf-8")
        print(f"wrote {_target}")
    else:
        print(shipped_module_source(), end="")

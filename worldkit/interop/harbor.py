"""Export a task (overlay × condition) as a Harbor task directory.

    DIR/<overlay>__<condition>/
      instruction.md        the request (candidate/request.md) and how to reach the seat's tools
      task.toml             metadata (world, revision, date, seat, fingerprint, package digests),
                            timeouts, and the seat's MCP server under [[environment.mcp_servers]]
      environment/
        Dockerfile          the agent's container (worldkit installed: the verifier runs there)
        docker-compose.yaml `main` plus the `seat` sidecar serving the seat's tools over HTTP;
                            both mount the run folder volume (read-only in `main`)
        seat/Dockerfile     the sidecar: `worldkit serve --run-folder /worldkit/run --transport http`
        seat/run/           the staged run folder: run.json, package/package.json,
                            package/candidate/ (the candidate files only), workspace/
      tests/                uploaded by Harbor only after the agent has finished
        test.sh             `worldkit grade` on a copy of the run folder, then the reward file
        overlay/            the overlay (rubric, truth, reference): what grading reads
        verifier/           the applied verifier package
      solution/
        solve.sh, actions.json   the oracle's reference actions, performed through the sidecar

Nothing verifier-side is written to `environment/` or `instruction.md`: `export_harbor_task`
checks the agent side with the leak detector of `worldkit.overlay.leaks` (every verifier item and
every verifier-package file) and refuses to finish an export that leaks.

The reward file (`/logs/verifier/reward.json`) holds `reward` — the fraction of graded criteria
that passed — and one value per graded criterion (1 pass, 0 fail); ungraded criteria (semantic
ones without a judge) are left out. `write_reward` writes it from `worldkit grade --json`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from worldkit import DISTRIBUTION, __version__
from worldkit.canon import pretty_json
from worldkit.errors import CheckFailed, UsageError

__all__ = [
    "HarborExport",
    "RUN_MOUNT",
    "SEAT_PORT",
    "SEAT_SERVICE",
    "export_harbor",
    "export_harbor_task",
    "harbor_reward",
    "task_dir_name",
    "write_reward",
]

RUN_MOUNT = "/worldkit/run"
"""Where the run folder volume is mounted, in the sidecar (read-write) and in `main` (read-only)."""
SEAT_SERVICE = "seat"
SEAT_PORT = 8000
MCP_NAME = "worldkit-seat"
AGENT_TIMEOUT_S = 1800.0
VERIFIER_TIMEOUT_S = 600.0
DEFAULT_REQUIREMENT = f"{DISTRIBUTION}=={__version__}"
"""What the images install by default: this worldkit's own distribution, pinned (never the PyPI project
`worldkit`, which is another one); `--build-arg WORLDKIT_REQUIREMENT=…` installs a wheel or a VCS URL."""


@dataclass(frozen=True)
class HarborExport:
    """One exported task directory."""

    path: Path
    overlay: str
    condition: str
    name: str
    """The Harbor task name (`worldkit/<overlay>__<condition>`)."""


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")


def task_dir_name(overlay_id: str, condition: str) -> str:
    """`<overlay>__<condition>`, e.g. `qualification-sweep__curated-curator-1`."""
    return f"{_slug(overlay_id)}__{_slug(condition)}"


def _toml(sections: list[tuple[str, dict[str, Any]]]) -> str:
    """TOML (tomli-w) of `[section]` / `[[array.section]]` headers (`""`: the top level) and their values."""
    import tomli_w

    document: dict[str, Any] = {}
    for header, values in sections:
        array = header.startswith("[[")
        path = [part for part in header.strip("[]").split(".") if part]
        table = document
        for part in path[:-1]:
            table = table.setdefault(part, {})
        if not path:
            document.update(values)
        elif array:
            table.setdefault(path[-1], []).append(dict(values))
        else:
            table.setdefault(path[-1], {}).update(values)
    return tomli_w.dumps(document)


def task_toml(name: str, summary: dict[str, Any], description: str) -> str:
    """The `task.toml` of an exported task (Harbor's `TaskConfig`)."""
    metadata = {
        "source": "worldkit", "worldkit_version": __version__,
        "world": summary["world"], "rev": summary["rev"], "date": summary["date"], "seat": summary["seat"],
        "overlay": summary["overlay"], "condition": summary["condition"],
        "overlay_sha256": summary["overlay_sha256"], "fingerprint": summary["fingerprint"],
        "source_fingerprint": summary["source_fingerprint"], "candidate_sha256": summary["candidate_sha256"],
        "verifier_sha256": summary["verifier_sha256"],
    }  # fmt: skip
    return _toml([
        ("", {"schema_version": "1.1", "source": "worldkit"}),
        ("[task]", {"name": name, "description": description, "keywords": ["worldkit", summary["world"], summary["seat"]]}),
        ("[metadata]", metadata),
        ("[verifier]", {"timeout_sec": VERIFIER_TIMEOUT_S, "env": {"WORLDKIT_JUDGE": "${WORLDKIT_JUDGE:-none}"}}),
        ("[agent]", {"timeout_sec": AGENT_TIMEOUT_S}),
        ("[environment]", {"build_timeout_sec": 900.0, "cpus": 1, "memory_mb": 2048}),
        ("[environment.healthcheck]", {"command": _port_probe(SEAT_SERVICE), "interval_sec": 2.0, "retries": 30}),
        ("[[environment.mcp_servers]]", {"name": MCP_NAME, "transport": "streamable-http",
                                         "url": f"http://{SEAT_SERVICE}:{SEAT_PORT}/mcp"}),
    ])  # fmt: skip


def _port_probe(host: str) -> str:
    return f"python3 -c \"import socket; socket.create_connection(('{host}', {SEAT_PORT}), 2)\""


def _instruction(request: str, config: dict[str, Any]) -> str:
    return (
        request.rstrip("\n")
        + "\n\n---\n\n"
        + f"You act as {config.get('seat')} ({config.get('world')}, {config.get('rev')}, as of {config.get('date')}). "
        + f"Your company systems are the tools of the MCP server `{MCP_NAME}` "
        + f"(streamable HTTP at http://{SEAT_SERVICE}:{SEAT_PORT}/mcp). Read with them, and write every deliverable "
        + "with its `write_file` tool: only what the seat's tools record is graded.\n"
    )


def _dockerfile() -> str:
    return f"""FROM python:3.11-slim
# The agent's container. worldkit is installed because Harbor's verifier step runs tests/test.sh here;
# build with --build-arg WORLDKIT_REQUIREMENT=... to install worldkit from elsewhere (a wheel, a VCS URL).
ARG WORLDKIT_REQUIREMENT="{DEFAULT_REQUIREMENT}"
RUN pip install --no-cache-dir "$WORLDKIT_REQUIREMENT"
WORKDIR /app
"""


def _seat_dockerfile() -> str:
    return f"""FROM python:3.11-slim
# The seat's MCP server: the staged candidate package (run/, candidate files only), served over HTTP.
ARG WORLDKIT_REQUIREMENT="{DEFAULT_REQUIREMENT}"
RUN pip install --no-cache-dir "$WORLDKIT_REQUIREMENT"
COPY run/ {RUN_MOUNT}/
EXPOSE {SEAT_PORT}
# --trust-staged: the sidecar holds neither the world nor its frozen manifests; the package was checked
# against them when the task was exported (export_harbor_task), and the serve banner says it is trusted.
# --private-network --allow-host {SEAT_SERVICE}: only the task's containers reach the compose network, and they
# call the server by its service name (Harbor's MCP server entry carries no bearer token).
CMD ["python", "-m", "worldkit", "serve", "--run-folder", "{RUN_MOUNT}", "--trust-staged", "--transport", "http", "--host", "0.0.0.0", "--port", "{SEAT_PORT}", "--private-network", "--allow-host", "{SEAT_SERVICE}"]
"""


def compose_yaml(sidecar: str, context: str) -> str:
    """docker-compose.yaml (PyYAML): `main` waits for the healthy `sidecar` (built from `context`); both
    mount the run folder volume, read-only in `main`."""
    import yaml

    probe = ["CMD", "python3", "-c", f"import socket; socket.create_connection(('localhost', {SEAT_PORT}), 2)"]
    compose = {
        "services": {
            "main": {"depends_on": {sidecar: {"condition": "service_healthy"}},
                     "volumes": [f"worldkit-run:{RUN_MOUNT}:ro"]},
            sidecar: {"build": {"context": context}, "volumes": [f"worldkit-run:{RUN_MOUNT}"],
                      "healthcheck": {"test": probe, "interval": "2s", "timeout": "5s", "retries": 30}},
        },
        "volumes": {"worldkit-run": {}},
    }  # fmt: skip
    return yaml.safe_dump(compose, sort_keys=False, default_flow_style=False, width=1000)


def _compose() -> str:
    return compose_yaml(SEAT_SERVICE, "./seat")


def _test_sh() -> str:
    return f"""#!/bin/bash
# Harbor's verifier step: grade the seat's run folder with `worldkit grade` and write the reward file.
# Refusals (an altered workspace or log) exit non-zero and write no reward.
set -euo pipefail
RUN="${{WORLDKIT_RUN:-{RUN_MOUNT}}}"
TESTS="${{WORLDKIT_TESTS:-/tests}}"
LOGS="${{WORLDKIT_LOGS:-/logs/verifier}}"
mkdir -p "$LOGS"
work="$(mktemp -d)"
cp -a "$RUN" "$work/run"
rm -f "$work/run/execution-record.json"
export WORLDKIT_OVERLAYS="$TESTS/overlay"
# --json puts a refusal on stdout too: show it on stderr as well, and exit with its code (no reward).
status=0
python3 -m worldkit grade "$work/run" --store "sqlite:///$work/run/store.db" --judge "${{WORLDKIT_JUDGE:-none}}" --json > "$LOGS/grade.json" || status=$?
if [ "$status" -ne 0 ]; then cat "$LOGS/grade.json" >&2; exit "$status"; fi
cp "$work/run/execution-record.json" "$LOGS/execution-record.json"
python3 -c 'import sys; from worldkit.interop.harbor import write_reward; write_reward(sys.argv[1], sys.argv[2])' "$LOGS/grade.json" "$LOGS/reward.json"
cat "$LOGS/reward.json"
"""


def _solve_sh() -> str:
    return f"""#!/bin/bash
# The oracle: the task's reference actions, performed through the seat's MCP server.
set -euo pipefail
python3 -m worldkit.interop.actions "$(dirname "$0")/actions.json" --url "${{WORLDKIT_MCP_URL:-http://{SEAT_SERVICE}:{SEAT_PORT}/mcp}}"
"""


def harbor_reward(summary: dict[str, Any]) -> dict[str, float]:
    """Harbor's reward from `worldkit grade --json`: `reward` (passed / graded criteria) and one
    value per graded criterion (1.0 pass, 0.0 fail). A run with no graded criterion has reward 0."""
    graded = {cid: verdict for cid, verdict in summary["criteria"].items() if verdict in ("pass", "fail")}
    values = {cid: 1.0 if verdict == "pass" else 0.0 for cid, verdict in graded.items()}
    reward = sum(values.values()) / len(values) if values else 0.0
    if "reward" in values:
        raise CheckFailed("a criterion is named `reward`, which Harbor's reward file reserves; rename the criterion")
    return {"reward": reward, **values}


def write_reward(grade_json: str | Path, reward_json: str | Path) -> dict[str, float]:
    """Read `worldkit grade --json` output and write Harbor's `reward.json`."""
    summary = json.loads(Path(grade_json).read_text(encoding="utf-8"))
    reward = harbor_reward(summary)
    Path(reward_json).write_text(json.dumps(reward, sort_keys=True) + "\n", encoding="utf-8")
    return reward


def _copy_overlay(overlay: Any, into: Path) -> None:
    """Copy the overlay (its folder, when it has reference files beside it) to `into/<world>/<id>`,
    where `worldkit grade` finds it by id with `WORLDKIT_OVERLAYS=into`.

    The grader checks the staged package against the overlay's world, so a world the overlay names
    by a relative path travels with it, to the same relative place (the overlay and its digest stay
    as they are); a world named by name is found where worldkit is installed."""
    from worldkit.overlay.load import overlay_world

    source = Path(overlay.source)
    by_path = str(overlay.world).startswith((".", "/"))
    world_pkg = overlay_world(overlay) if by_path else None
    world = into / _slug(world_pkg.id if world_pkg is not None else Path(str(overlay.world)).name)
    world.mkdir(parents=True)
    if source.name == "overlay.yaml":
        shutil.copytree(source.parent, world / overlay.id)
        placed = world / overlay.id
    else:
        shutil.copy2(source, world / f"{overlay.id}.yaml")
        placed = world
    if world_pkg is not None:
        target = Path(os.path.normpath(placed / str(overlay.world)))
        tests = into.parent
        if not target.is_relative_to(tests) or target.exists():
            raise UsageError(f"overlay {overlay.id} ({source}) names its world by the path {overlay.world!r}, which "
                             "cannot be placed beside the exported overlay; name the world by its name (worlds/<name>)")  # fmt: skip
        shutil.copytree(world_pkg.root, target)


def _files(root: Path) -> list[tuple[str, bytes]]:
    return [(p.relative_to(root).as_posix(), p.read_bytes()) for p in sorted(root.rglob("*")) if p.is_file()]


def check_agent_side(task_dir: Path, overlay: Any, verifier: Path) -> None:
    """Refuse an export whose agent side (environment/, instruction.md, task.toml) carries verifier text."""
    from worldkit.overlay import reference_bytes
    from worldkit.overlay.leaks import VerifierItem, find_leaks, verifier_items

    items = verifier_items(overlay, reference_bytes(overlay))
    items += [VerifierItem(f"verifier/{rel}", data) for rel, data in _files(verifier) if rel != "manifest.json"]
    agent_side = [(f"environment/{rel}", data) for rel, data in _files(task_dir / "environment")]
    agent_side += [(name, (task_dir / name).read_bytes()) for name in ("instruction.md", "task.toml")]
    # Files the candidate package itself carries are checked by `overlay check` (reviewed overlaps apply).
    leaks = find_leaks(items, agent_side, [o.sha256 for o in overlay.reviewed_overlaps])
    if leaks:
        first = leaks[0]
        raise CheckFailed(f"export of {overlay.id} would put verifier material on the agent side: {first.item} found in "
                          f"{task_dir / first.candidate_path} ({first.rule}); nothing was exported — run "
                          f"`worldkit overlay check` on the overlay")  # fmt: skip


def export_harbor_task(overlay_ref: str | Path, out: Path, condition: str = "full") -> HarborExport:
    """Write one Harbor task directory for (overlay, condition) under `out` (see module doc)."""
    from worldkit._fs import writable_folder
    from worldkit.overlay import load_overlay, resolve_overlay
    from worldkit.run.folder import RunPaths, stage_run_folder, write_run_folder

    overlay = load_overlay(resolve_overlay(overlay_ref))
    out = writable_folder(out)
    target = Path(out) / task_dir_name(overlay.id, condition)
    if target.exists():
        raise UsageError(f"{target} exists; export into a new folder (or remove the old export)")
    name = f"worldkit/{task_dir_name(overlay.id, condition)}"
    with tempfile.TemporaryDirectory(prefix="worldkit-harbor-", dir=Path(out).parent if Path(out).parent.is_dir() else None) as tmp:
        build = Path(tmp) / "task"
        run_dir = build / "environment" / "seat" / "run"
        run_id = f"harbor.{_slug(overlay.id)}.{_slug(condition)}"
        folder, package = stage_run_folder(overlay, run_dir, run_id=run_id, condition=condition,
                                           store=f"sqlite:///{RUN_MOUNT}/store.db")  # fmt: skip
        paths = RunPaths(run_dir)
        from worldkit.run.runner import check_staged

        # Against the frozen manifests (or a fresh derivation): the sidecar can only trust what it is given.
        check_staged(paths.candidate, overlay=overlay, derived=package.summary_model.model_dump(mode="json"))
        summary = json.loads((paths.package / "package.json").read_text(encoding="utf-8"))
        tests = build / "tests"
        _copy_overlay(overlay, tests / "overlay")
        shutil.move(str(paths.package / "verifier"), tests / "verifier")
        # run.json must not name a path of this machine: grading finds the overlay in tests/overlay by id.
        write_run_folder(run_dir, folder.model_copy(update={"overlay_path": ""}))
        config = json.loads((paths.candidate / "tool-config.json").read_text(encoding="utf-8"))
        request = (paths.candidate / "request.md").read_text(encoding="utf-8")
        (build / "instruction.md").write_text(_instruction(request, config), encoding="utf-8")
        first_line = next((ln.strip("# ").strip() for ln in request.splitlines() if ln.strip()), overlay.id)
        description = f"{overlay.id} ({condition}) on {summary['world']} {summary['rev']}: {first_line}"[:300]
        (build / "task.toml").write_text(task_toml(name, summary, description), encoding="utf-8")
        env = build / "environment"
        (env / "Dockerfile").write_text(_dockerfile(), encoding="utf-8")
        (env / "docker-compose.yaml").write_text(_compose(), encoding="utf-8")
        (env / "seat" / "Dockerfile").write_text(_seat_dockerfile(), encoding="utf-8")
        (tests / "test.sh").write_text(_test_sh(), encoding="utf-8")
        solution = build / "solution"
        solution.mkdir()
        actions = [a.model_dump(mode="json") for a in overlay.reference.actions]
        (solution / "actions.json").write_text(pretty_json(actions), encoding="utf-8")
        (solution / "solve.sh").write_text(_solve_sh(), encoding="utf-8")
        for script in (tests / "test.sh", solution / "solve.sh"):
            script.chmod(0o755)
        check_agent_side(build, overlay, tests / "verifier")
        Path(out).mkdir(parents=True, exist_ok=True)
        shutil.move(str(build), target)
    del package
    return HarborExport(path=target, overlay=overlay.id, condition=condition, name=name)


def export_harbor(
    out: Path, *, overlays: list[str] | None = None, world: str | None = None, conditions: list[str] | None = None
) -> list[HarborExport]:
    """Export the given overlays (default condition `full`), or every overlay of `world` (default:
    every condition it has, `full` and each curated packet)."""
    from worldkit.overlay import find_overlays, load_overlay, resolve_overlay

    if world is not None:
        found = find_overlays(world)
        if not found:
            raise UsageError(f"no overlays for world {world!r}; check the name (overlays/<world>/) or $WORLDKIT_OVERLAYS")
        refs = [str(p) for p in found]
    elif overlays:
        refs = list(overlays)
    else:
        raise UsageError("name the task: --overlay T (repeatable), or --all --world W")
    exported: list[HarborExport] = []
    for ref in refs:
        model = load_overlay(resolve_overlay(ref))
        wanted = conditions or (["full", *(f"curated:{n}" for n in sorted(model.curated))] if world else ["full"])
        for condition in wanted:
            exported.append(export_harbor_task(ref, out, condition))
    return exported

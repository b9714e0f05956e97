"""Export an InfoOrgBench packet as a Harbor task directory.

    DIR/<task id>/
      instruction.md        the packet's request (candidate/request.md) and how to reach the organizer
      task.toml             metadata (task id, family, world, revision, date, seat, packet digests),
                            timeouts, and the organizer's MCP server under [[environment.mcp_servers]]
      environment/
        Dockerfile, docker-compose.yaml   `main` plus the `organizer` sidecar; both mount the
                                          run volume (read-only in `main`)
        organizer/Dockerfile              `worldkit infoorg serve --candidate-only … --transport http`
        organizer/packet/                 packet.json, overlay.json, candidate/ (inbox, request.md)
      tests/
        test.sh             `worldkit infoorg score` on the organized tree → reward.json
        packet/             the whole packet, verifier/reference.json included
      solution/
        solve.sh, actions.json   the reference tree as `move_files` calls

The reward file holds `reward` = the Structure Score S (0 for an invalid tree, as the paper
scores it), `valid`, `f1_bal`, `E` and `triplet_f1` (0–1). Nothing under `verifier/` reaches
`environment/` or `instruction.md`: `export_harbor_packet` checks that no reference path or
verifier file appears on the agent side and refuses otherwise.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from worldkit import __version__
from worldkit.canon import pretty_json
from worldkit.errors import CheckFailed, UsageError
from worldkit.interop.harbor import (
    AGENT_TIMEOUT_S,
    DEFAULT_REQUIREMENT,
    RUN_MOUNT,
    SEAT_PORT,
    VERIFIER_TIMEOUT_S,
    HarborExport,
    _slug,
    _toml,
    compose_yaml,
)

__all__ = ["ORGANIZER_SERVICE", "check_candidate_packet", "export_harbor_packet", "packet_reward", "write_packet_reward"]

ORGANIZER_SERVICE = "organizer"
MCP_NAME = "worldkit-organizer"
PACKET_MOUNT = "/worldkit/packet"


def check_candidate_packet(packet_dir: Path) -> Any:
    """The packet's overlay, after checking what a candidate-side copy can prove: the candidate
    digest of `packet.json`, that the overlay names this packet and that its request is
    `candidate/request.md`. (The verifier side is checked where it exists: `check_overlay`.)"""
    from worldkit.infoorg.overlays import load_overlay
    from worldkit.infoorg.packets import read_packet_info, tree_digest

    packet_dir = Path(packet_dir)
    overlay = load_overlay(packet_dir)
    info = read_packet_info(packet_dir)
    actual = tree_digest(packet_dir / "candidate")
    if actual != info.candidate_digest:
        raise CheckFailed(f"{packet_dir / 'candidate'}: digest {actual[:12]}… differs from packet.json "
                          f"({info.candidate_digest[:12]}…); a file was changed — export the packet again")  # fmt: skip
    if overlay.id != info.task_id or overlay.packet.candidate_digest != info.candidate_digest:
        raise CheckFailed(f"{packet_dir / 'overlay.json'} describes another packet than packet.json; rebuild the packet")
    if (packet_dir / "candidate" / "request.md").read_bytes() != overlay.request.encode("utf-8"):
        raise CheckFailed(f"{packet_dir / 'overlay.json'}: request differs from candidate/request.md; rebuild the packet")
    return overlay


def packet_reward(score: dict[str, Any]) -> dict[str, float]:
    """Harbor's reward from `worldkit infoorg score --json`: S (0 when invalid) and its parts."""
    valid = bool(score.get("valid"))
    parts = {"f1_bal": score.get("f1_bal"), "E": score.get("E"), "triplet_f1": score.get("triplet_f1")}
    reward = {"reward": float(score.get("S") or 0.0) if valid else 0.0, "valid": float(valid)}
    reward.update({k: float(v) for k, v in parts.items() if v is not None and valid})
    return reward


def write_packet_reward(score_json: str | Path, reward_json: str | Path) -> dict[str, float]:
    reward = packet_reward(json.loads(Path(score_json).read_text(encoding="utf-8")))
    Path(reward_json).write_text(json.dumps(reward, sort_keys=True) + "\n", encoding="utf-8")
    return reward


def _compose() -> str:
    return compose_yaml(ORGANIZER_SERVICE, f"./{ORGANIZER_SERVICE}")


def _dockerfile() -> str:
    return f"""FROM python:3.11-slim
# The agent's container; worldkit is installed for Harbor's verifier step (tests/test.sh).
ARG WORLDKIT_REQUIREMENT="{DEFAULT_REQUIREMENT}"
RUN pip install --no-cache-dir "$WORLDKIT_REQUIREMENT"
WORKDIR /app
"""


def _organizer_dockerfile(run_id: str) -> str:
    return f"""FROM python:3.11-slim
# The organizer's five tools over the packet's candidate side (inbox, request), served over HTTP.
ARG WORLDKIT_REQUIREMENT="{DEFAULT_REQUIREMENT}"
RUN pip install --no-cache-dir "$WORLDKIT_REQUIREMENT"
COPY packet/ {PACKET_MOUNT}/
RUN mkdir -p {RUN_MOUNT}
EXPOSE {SEAT_PORT}
CMD ["python", "-m", "worldkit", "infoorg", "serve", "--packet", "{PACKET_MOUNT}", "--candidate-only", "--workspace", "{RUN_MOUNT}/workspace", "--store", "sqlite:///{RUN_MOUNT}/store.db", "--run-id", "{run_id}", "--transport", "http", "--host", "0.0.0.0", "--port", "{SEAT_PORT}"]
"""


def _test_sh() -> str:
    return f"""#!/bin/bash
# Harbor's verifier step: the Structure Score of the organized tree, written as the reward file.
set -euo pipefail
RUN="${{WORLDKIT_RUN:-{RUN_MOUNT}}}"
TESTS="${{WORLDKIT_TESTS:-/tests}}"
LOGS="${{WORLDKIT_LOGS:-/logs/verifier}}"
mkdir -p "$LOGS"
work="$(mktemp -d)"
cp -a "$RUN/workspace" "$work/workspace"
# exit 0: a valid tree, 1: an invalid tree (S = 0, still a score); anything else is an error
code=0
python3 -m worldkit infoorg score --packet "$TESTS/packet" --workspace "$work/workspace" --json > "$LOGS/score.json" || code=$?
if [ "$code" -gt 1 ]; then exit "$code"; fi
python3 -c 'import sys; from worldkit.interop.harbor_infoorg import write_packet_reward; write_packet_reward(sys.argv[1], sys.argv[2])' "$LOGS/score.json" "$LOGS/reward.json"
cat "$LOGS/reward.json"
"""


def _solve_sh() -> str:
    return f"""#!/bin/bash
# The oracle: the reference tree, filed through the organizer's move_files tool.
set -euo pipefail
python3 -m worldkit.interop.actions "$(dirname "$0")/actions.json" --url "${{WORLDKIT_MCP_URL:-http://{ORGANIZER_SERVICE}:{SEAT_PORT}/mcp}}"
"""


def reference_actions(packet_dir: Path) -> list[dict[str, Any]]:
    """One `move_files` call per reference folder (records in id order), folders in path order."""
    from worldkit.infoorg.reference import load_reference

    by_folder: dict[tuple[str, ...], list[str]] = {}
    for record, path in load_reference(packet_dir).paths().items():
        by_folder.setdefault(tuple(path), []).append(record)
    return [{"tool": "move_files", "args": {"ids": sorted(ids), "destination": list(folder)}}
            for folder, ids in sorted(by_folder.items())]  # fmt: skip


def _instruction(request: str) -> str:
    return (
        request.rstrip("\n")
        + f"\n\n---\n\nThe records are reached only through the tools of the MCP server `{MCP_NAME}` "
        + f"(streamable HTTP at http://{ORGANIZER_SERVICE}:{SEAT_PORT}/mcp): list, read, search, move, check inventory.\n"
    )


def _check_agent_side(task_dir: Path, packet_dir: Path) -> None:
    from worldkit.infoorg.reference import load_reference

    reference = load_reference(packet_dir)
    folders = sorted({"/".join(p) for p in reference.paths().values() if p and p != ("inbox",)})
    verifier = [p.read_bytes() for p in sorted((packet_dir / "verifier").rglob("*")) if p.is_file()]
    for path in [task_dir / "instruction.md", task_dir / "task.toml", *(task_dir / "environment").rglob("*")]:
        if not path.is_file():
            continue
        data = path.read_bytes()
        if any(data == v for v in verifier) or (path.name == "reference.json"):
            raise CheckFailed(f"export of {packet_dir.name} would put the verifier's reference at {path}; nothing was exported")
        text = data.decode("utf-8", errors="replace")
        found = [f for f in folders if "/" in f and f in text]
        if found:
            raise CheckFailed(f"export of {packet_dir.name} would put the reference folder {found[0]!r} in {path}; "
                              "nothing was exported")  # fmt: skip


def export_harbor_packet(packet_dir: Path, out: Path) -> HarborExport:
    """Write one Harbor task directory for an InfoOrgBench packet under `out` (see module doc)."""
    from worldkit.infoorg.overlays import check_overlay
    from worldkit.infoorg.packets import read_packet_info

    packet_dir = Path(packet_dir)
    overlay = check_overlay(packet_dir)  # the whole packet, verifier side included, is what was built
    info = read_packet_info(packet_dir)
    target = Path(out) / _slug(overlay.id)
    if target.exists():
        raise UsageError(f"{target} exists; export into a new folder (or remove the old export)")
    name = f"worldkit/infoorg-{_slug(overlay.id)}"
    run_id = f"harbor.infoorg.{_slug(overlay.id)}"
    with tempfile.TemporaryDirectory(prefix="worldkit-harbor-") as tmp:
        build = Path(tmp) / "task"
        env = build / "environment"
        served = env / "organizer" / "packet"
        served.mkdir(parents=True)
        for item in ("packet.json", "overlay.json"):
            shutil.copy2(packet_dir / item, served / item)
        shutil.copytree(packet_dir / "candidate", served / "candidate")
        (env / "Dockerfile").write_text(_dockerfile(), encoding="utf-8")
        (env / "docker-compose.yaml").write_text(_compose(), encoding="utf-8")
        (env / "organizer" / "Dockerfile").write_text(_organizer_dockerfile(run_id), encoding="utf-8")
        request = (packet_dir / "candidate" / "request.md").read_text(encoding="utf-8")
        (build / "instruction.md").write_text(_instruction(request), encoding="utf-8")
        metadata = {
            "source": "worldkit", "worldkit_version": __version__, "benchmark": "InfoOrgBench",
            "task_id": info.task_id, "family": str(getattr(info, "family", "")), "records": info.record_count,
            "world": overlay.world, "rev": overlay.rev, "date": str(overlay.date), "seat": overlay.seat,
            "fingerprint": overlay.pinned_fingerprint, "candidate_digest": info.candidate_digest,
            "verifier_digest": info.verifier_digest,
        }  # fmt: skip
        (build / "task.toml").write_text(_toml([
            ("", {"schema_version": "1.1", "source": "worldkit"}),
            ("[task]", {"name": name, "description": f"InfoOrgBench {overlay.id}: organize {info.record_count} records",
                        "keywords": ["worldkit", "infoorgbench", metadata["family"]]}),
            ("[metadata]", metadata),
            ("[verifier]", {"timeout_sec": VERIFIER_TIMEOUT_S}),
            ("[agent]", {"timeout_sec": AGENT_TIMEOUT_S}),
            ("[environment]", {"build_timeout_sec": 900.0, "cpus": 1, "memory_mb": 2048}),
            ("[[environment.mcp_servers]]", {"name": MCP_NAME, "transport": "streamable-http",
                                             "url": f"http://{ORGANIZER_SERVICE}:{SEAT_PORT}/mcp"}),
        ]), encoding="utf-8")  # fmt: skip
        tests = build / "tests"
        tests.mkdir()
        shutil.copytree(packet_dir, tests / "packet")
        (tests / "test.sh").write_text(_test_sh(), encoding="utf-8")
        solution = build / "solution"
        solution.mkdir()
        (solution / "actions.json").write_text(pretty_json(reference_actions(packet_dir)), encoding="utf-8")
        (solution / "solve.sh").write_text(_solve_sh(), encoding="utf-8")
        for script in (tests / "test.sh", solution / "solve.sh"):
            script.chmod(0o755)
        _check_agent_side(build, packet_dir)
        Path(out).mkdir(parents=True, exist_ok=True)
        shutil.move(str(build), target)
    return HarborExport(path=target, overlay=overlay.id, condition="packet", name=name)

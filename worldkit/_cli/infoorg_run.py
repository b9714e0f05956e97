"""`worldkit infoorg serve` and `worldkit infoorg run`: a packet's organizer, served or driven.

Thin adapters over `worldkit.infoorg.overlays` (check the packet's overlay, stage its workspace),
`worldkit.run.infoorg_packet` (run an agent and score the result) and `worldkit.mcp.organizer`
(the MCP server). Every tool call goes to the store's event log as the overlay's seat. Over stdio,
stdout carries the protocol; what is being served goes to stderr.
"""

from __future__ import annotations

import signal
import sys
from enum import Enum
from pathlib import Path
from typing import Any

import typer

from worldkit._cli.infoorg_group import infoorg_app
from worldkit._cli.output import echo_json

STORE_HELP = (
    "Store URL for the event log (sqlite:///path or postgresql+psycopg://…); default "
    "$WORLDKIT_STORE, else .worldkit/store.db here."
)


class Transport(str, Enum):
    stdio = "stdio"
    http = "http"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.2f}"


@infoorg_app.command("serve")
def serve_command(
    packet: Path = typer.Option(..., "--packet", metavar="DIR", help="Packet directory."),
    workspace: Path = typer.Option(
        ..., "--workspace", metavar="DIR",
        help="The agent's record tree; staged from the packet's inbox when missing or empty.",
    ),
    transport: Transport = typer.Option(Transport.stdio, "--transport", help="stdio or http."),
    host: str = typer.Option("127.0.0.1", "--host", help="HTTP: address to listen on."),
    port: int = typer.Option(8000, "--port", help="HTTP: port to listen on."),
    store: str | None = typer.Option(None, "--store", help=STORE_HELP),
    run_id: str | None = typer.Option(
        None, "--run-id", help="Run id for the event log (default: a new one)."
    ),
    candidate_only: bool = typer.Option(
        False, "--candidate-only",
        help="The packet is its candidate side only (packet.json, overlay.json, candidate/), as exported for "
        "Harbor: check that side's digest instead of the whole packet and the world.",
    ),
) -> None:
    """Serve a packet's organizer tools (list, read, search, move, check inventory) over MCP.

    Checks the packet and its overlay first; logs every call to the run's event log.
    """
    from worldkit.infoorg.overlays import (
        check_overlay,
        inbox_inventory,
        stage_workspace,
    )
    from worldkit.mcp.organizer import build_organizer_server, check_settled
    from worldkit.mcp.session import new_run_id, open_run
    from worldkit.mcp.stdio import run_stdio
    from worldkit.store import Store

    if candidate_only:
        from worldkit.interop.harbor_infoorg import check_candidate_packet

        overlay = check_candidate_packet(packet)
    else:
        overlay = check_overlay(packet)
    staged = stage_workspace(packet, workspace)
    with Store.open(store) as opened:
        run = run_id or new_run_id(overlay.seat)
        # A move a killed server of another run left half-done is that run's to log: refuse
        # before this run is claimed (`worldkit log recover` settles it).
        check_settled(workspace, opened, run)
        # The log is written before each call returns, so no move reaches the agent unlogged.
        with open_run(opened, run, overlay.seat) as log:
            server = build_organizer_server(
                workspace, event_log=log, inventory=inbox_inventory(packet),
                request=overlay.request,
            )
            typer.echo(
                f"serving packet {overlay.id} as seat {overlay.seat} ({overlay.world} {overlay.rev} "
                f"{overlay.date}) over {transport.value}: {', '.join(overlay.tools)}; workspace "
                f"{workspace} ({'fresh inbox' if staged else 'resumed'}); run {run} in store "
                f"{opened.url}",
                err=True,
            )
            signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
            stopped_by = None
            if transport is Transport.stdio:  # a first SIGINT or SIGTERM ends the input (`run_stdio`)
                stopped_by = run_stdio(server)
            else:
                server.run("streamable-http", host=host, port=port)
    if stopped_by is not None:  # the log is sealed: exit as the signal asked
        raise SystemExit(128 + stopped_by)


@infoorg_app.command("run")
def run_command(
    packet: list[Path] = typer.Option(
        ..., "--packet", metavar="DIR",
        help="Packet directory; repeat it (or give a folder of packets) to run a family and print Tables 3 and 13.",
    ),
    agent: str = typer.Option(
        ..., "--agent", metavar="[noop|openai:MODEL|codex:MODEL|pi:MODEL|deepagents:MODEL|baseline:NAME|PLUGIN]",
        help="Any registered agent: noop, openai:MODEL (the ReAct-FC harness), codex:MODEL (Codex CLI, on a Responses "
        "API endpoint), pi:MODEL (Pi), deepagents:MODEL (Deep Agents), "
        "baseline:flat, baseline:fixed, baseline:silhouette, baseline:random (its five seeds, as Table 12) or "
        "baseline:random:SEED, or a plug-in's.",
    ),
    out: Path = typer.Option(
        Path("runs"), "--out", metavar="DIR", help="Folder that receives the run's folder."
    ),
    store: str | None = typer.Option(None, "--store", help=STORE_HELP),
    run_id: str | None = typer.Option(None, "--run-id", help="Run id (default: a new one; one packet only)."),
    base_url: str | None = typer.Option(None, "--base-url", help="openai: OpenAI-compatible endpoint."),
    max_steps: int | None = typer.Option(None, "--max-steps", help="openai: turn limit (the paper sets none)."),
    reasoning_effort: str | None = typer.Option(
        None, "--reasoning-effort",
        help="openai: reasoning effort sent to the endpoint (Table 8: medium); provider-default sends none.",
    ),
    max_output_tokens: int | None = typer.Option(
        None, "--max-output-tokens", min=0,
        help="openai: output tokens per response, sent as max_completion_tokens (Table 8: 128000); 0 sends none.",
    ),
    manifest: Path | None = typer.Option(
        None, "--manifest", metavar="FILE",
        help="Family manifest the packets must match (default: manifests/infoorg/<family>.json; none for thread).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object (0–1 scale)."),
) -> None:
    """Run an agent on a packet through the organizer tools, then score the tree it left.

    The run folder holds the workspace, result.json and the agent's transcript.jsonl; the calls
    are in the event log. A packet that does not match its family's frozen manifest is refused
    (exit 1). An agent that cannot finish (unreachable endpoint) ends its run as `failed`, with
    its result.json written, and the command exits 1. With several packets, the family means are
    printed in the paper's Table 3 and Table 13 layouts.
    """
    from worldkit.agents.registry import make_agent
    from worldkit.errors import UsageError
    from worldkit.infoorg.overlays import load_overlay
    from worldkit.run.infoorg_packet import run_packet
    from worldkit.store import Store

    packets = _expand_packets(packet)
    if run_id and len(packets) > 1:
        raise UsageError("--run-id names one run; drop it when running several packets")
    options = {"base_url": base_url, "max_steps": max_steps, "benchmark": "infoorg",
               "reasoning_effort": reasoning_effort, "max_output_tokens": max_output_tokens}
    overlays = [load_overlay(p) for p in packets]
    # Table 12 averages the random shape over five seeds: `baseline:random` runs all five.
    from worldkit.infoorg.baselines import RANDOM_SEEDS

    specs = [f"baseline:random:{seed}" for seed in range(RANDOM_SEEDS)] if agent == "baseline:random" else [agent]
    if run_id and len(specs) > 1:
        raise UsageError("--run-id names one run; baseline:random runs its five seeds (or name one: baseline:random:SEED)")
    results = []
    with Store.open(store) as opened:
        for path, overlay in zip(packets, overlays):
            for spec in specs:
                chosen = make_agent(spec, {**options, "task": overlay.id})
                results.append(run_packet(path, chosen, opened, out=out, run_id=run_id, manifest=manifest))
    _print_results(results, as_json)
    failed = [r for r in results if r.status == "failed"]
    if failed:
        from worldkit.run.infoorg_packet import PacketRunFailed

        raise PacketRunFailed(
            f"{len(failed)} of {len(results)} run(s) failed; first: run {failed[0].run_id}: {failed[0].error}. "
            f"Each is marked failed in its result.json ({failed[0].run_dir}/result.json)"
        )


def _print_results(results: list[Any], as_json: bool) -> None:
    if len(results) > 1:
        from worldkit.report.infoorg import packet_tables
        from worldkit.report.infoorg_text import render_tables

        if as_json:
            echo_json({"runs": [r.model_dump(mode="json") for r in results], "tables": packet_tables(results).as_json()})
        else:
            for result in results:
                typer.echo(f"run {result.run_id}: S {_pct(result.score.S if result.score.valid else 0.0)}")
            typer.echo(render_tables(results))
        return
    result = results[0]
    if as_json:
        echo_json(result.model_dump(mode="json"))
        return
    score = result.score
    typer.echo(f"run {result.run_id}: {result.task_id} · {result.agent} · seat {result.seat}")
    typer.echo(f"S {_pct(score.S if score.valid else 0.0)}  category {score.category or 'n/a'}  "
               f"valid {'yes' if score.valid else 'no'}")
    typer.echo(f"F1_bal {_pct(score.f1_bal)}  E {_pct(score.E)}  triplet F1 {_pct(score.triplet_f1)}")
    typer.echo(f"events {result.events}  replay {'matches' if result.replay_matches else 'DIFFERS'}")
    if result.status == "failed":
        typer.echo(f"status FAILED: {result.error}")
    typer.echo(f"run folder: {result.run_dir}")


def _expand_packets(paths: list[Path]) -> list[Path]:
    """Packet directories, a folder of packets expanded (sorted)."""
    found: list[Path] = []
    for path in paths:
        if not (path / "overlay.json").exists() and path.is_dir():
            inner = sorted(p for p in path.iterdir() if (p / "overlay.json").is_file())
            if inner:
                found.extend(inner)
                continue
        found.append(path)
    return found


def register(app: typer.Typer) -> None:  # noqa: ARG001 - commands live on the infoorg group
    """Commands are added to `infoorg_app` when this module is imported."""

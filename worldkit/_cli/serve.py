"""`worldkit serve` (the seat's MCP server) and `worldkit log replay` (adapters over `worldkit.mcp`)."""

from __future__ import annotations

import signal
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import Any

import typer

from worldkit._cli.output import echo_json
from worldkit.errors import CheckFailed, LogTampered, PortUnavailable, UsageError, WorldkitError

STORE_HELP = (
    "Store URL (sqlite:///path or postgresql+psycopg://…); default $WORLDKIT_STORE, "
    "else .worldkit/store.db here."
)


class Transport(str, Enum):
    stdio = "stdio"
    http = "http"


def _check_port_free(host: str, port: int) -> None:
    """Refuse, before anything is staged or printed, a port that cannot be listened on."""
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as error:
        raise UsageError(f"--host {host!r} does not resolve ({error.strerror}); pass an address such as 127.0.0.1")
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as error:
            raise PortUnavailable(
                f"cannot listen on {host}:{port}: {error.strerror}; pick another --port or stop what holds it"
            ) from None


def serve_command(
    world: str | None = typer.Option(None, "--world", help="World name under worlds/ or a path."),
    rev: str | None = typer.Option(None, "--rev", help="Revision name, e.g. r2."),
    date: str | None = typer.Option(None, "--date", help="Projection date, YYYY-MM-DD."),
    seat: str | None = typer.Option(None, "--seat", help="Seat id the server acts as, e.g. EMP-QC-001."),
    overlay: str | None = typer.Option(None, "--overlay", help="Task overlay: serve its candidate package."),
    condition: str | None = typer.Option(None, "--condition", help="Overlay condition: full or curated:NAME."),
    projection: Path | None = typer.Option(
        None, "--projection", help="Serve an already materialized projection directory (read-only)."
    ),
    out: Path | None = typer.Option(
        None, "--out",
        help="Stage into this directory and keep it (default: a temporary one); with --overlay it is a "
        "run folder that `worldkit grade DIR` grades.",
    ),
    run_folder: Path | None = typer.Option(
        None, "--run-folder",
        help="Serve an already staged run folder (run.json, package/, workspace/), e.g. one exported for Harbor; "
        "its run id and store are the folder's.",
    ),
    transport: Transport = typer.Option(Transport.stdio, "--transport", help="stdio or http (streamable HTTP)."),
    host: str = typer.Option("127.0.0.1", "--host", metavar="HOST", help="HTTP: address to listen on."),
    port: int = typer.Option(8000, "--port", min=1, max=65535, metavar="PORT", help="HTTP: port to listen on (1-65535)."),
    token: str | None = typer.Option(
        None, "--token", metavar="TOKEN",
        help="HTTP: bearer token every request must send (default: $WORLDKIT_HTTP_TOKEN; beyond loopback, "
        "else one is generated and printed).",
    ),
    allow_host: list[str] = typer.Option(
        [], "--allow-host", metavar="NAME",
        help="HTTP: a Host name clients may use besides loopback and the bound address (repeatable).",
    ),
    private_network: bool = typer.Option(
        False, "--private-network",
        help="HTTP: the bind is on a network only the task's own containers reach (a docker-compose network): "
        "no bearer token is required there; Host/Origin checks stay on (name the service with --allow-host).",
    ),
    store: str | None = typer.Option(None, "--store", help=STORE_HELP),
    run_id: str | None = typer.Option(None, "--run-id", help="Run id for the event log (default: a new one)."),
    trust_staged: bool = typer.Option(
        False, "--trust-staged",
        help="Serve a staged folder that is not a frozen one (checked against its own manifest only); recorded.",
    ),
    anchor: Path | None = typer.Option(
        None, "--anchor",
        help="File that receives the log's head (default: OUT/ or RUN_FOLDER/log-anchor.json, else .worldkit/anchors/RUN.json).",
    ),
) -> None:
    """Serve one seat's company systems as MCP tools, logging every call to the run's event log.

    What is served must be a frozen projection or package (compared with manifests/<world>/, or a
    re-derivation from the world where nothing is frozen); anything else is refused (exit 1)
    unless --trust-staged. Over stdio, stdout carries the protocol; the run id and store go to stderr.
    """
    import anyio

    from worldkit.mcp.server import build_seat_server
    from worldkit.mcp.session import default_anchor, new_run_id, open_run, stage_seat
    from worldkit.mcp.stdio import run_stdio
    from worldkit.store import Store

    mode = Transport(transport).value
    if mode == "http":
        from worldkit.mcp.http import http_access

        _check_port_free(host, port)
        access = http_access(host, port, token=token, allow_hosts=allow_host, private_network=private_network)
    elif token is not None or allow_host or private_network:
        raise UsageError("--token, --allow-host and --private-network apply to --transport http")
    if run_folder is not None:
        if any(v is not None for v in (world, rev, date, seat, overlay, condition, projection, out)):
            raise UsageError("--run-folder excludes --world/--rev/--date/--seat/--overlay/--condition/--projection/--out: "
                             "the run folder names its task")  # fmt: skip
        staged, run_id, store = _open_run_folder(run_folder, run_id, store, trust_staged=trust_staged)
    elif overlay is not None and out is not None:
        staged, run_id = _stage_run_folder(overlay, condition, out, run_id, store, trust_staged=trust_staged,
                                           world=world, rev=rev, date=date, seat=seat)
    else:
        staged = stage_seat(
            world=world, rev=rev, date=date, seat=seat, projection=projection, overlay=overlay,
            condition=condition, out=out, trust_staged=trust_staged,
        )
    stopped_by: int | None = None
    try:
        with Store.open(store) as opened:
            run = run_id or new_run_id(staged.config.seat)
            # A run folder's anchor lives in the folder, where `worldkit grade DIR` checks the log against it.
            anchor_file = anchor or default_anchor(run, run_folder if run_folder is not None else out)
            # Write-ahead: each call's event is committed before its result is sent back.
            with open_run(opened, run, staged.config.seat, anchor=anchor_file, staged=staged) as log:  # type: ignore[arg-type]
                server = build_seat_server(staged.projection, staged.config, workspace=staged.workspace, event_log=log)
                config = staged.config
                tools = [tool.name for tool in anyio.run(server.list_tools)]
                typer.echo(
                    f"serving seat {config.seat} ({config.world} {config.rev} {config.date}) over {mode}: "
                    f"{len(tools)} tools ({', '.join(tools)}); run {run} in store {opened.url}; "
                    f"log anchor {anchor_file}" + (f"; listening on http://{host}:{port}/mcp" if mode == "http" else ""),
                    err=True,
                )
                check = staged.frozen_check
                if staged.trusted_staged:
                    typer.echo(f"TRUSTED STAGED (--trust-staged): {check.reason}", err=True)
                elif check is not None:
                    typer.echo(f"verified against the frozen manifests ({check.counts.get('reference')})", err=True)
                # A terminated server seals its log and writes the final anchor (the `with` closes).
                signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
                if mode == "stdio":
                    # SIGINT ends it the same way. Left to asyncio, a first SIGINT only cancels the main task,
                    # and a server caught mid-call by that cancel could go on reading stdin (seen once in
                    # tests/func/test_serve_signals.py under load: no exit within 60 s). While serving, a
                    # first SIGINT or SIGTERM is the end of input instead (`run_stdio`): the calls read are
                    # answered, the server ends as at EOF, and the exit status is the signal's.
                    signal.signal(signal.SIGINT, lambda *_: sys.exit(128 + signal.SIGINT))
                    with signal_exits():
                        stopped_by = run_stdio(server)
                else:
                    from worldkit.mcp.http import serve_http

                    for line in access.notices():
                        typer.echo(line, err=True)
                    with signal_exits():
                        serve_http(server, access)
    finally:
        staged.close()
    if stopped_by is not None:
        raise SystemExit(128 + stopped_by)


@contextmanager
def signal_exits() -> Iterator[None]:
    """The exit a signal handler raised (`sys.exit(128 + N)`) comes out as itself. Raised while one of
    the server's tasks runs, it leaves the task group wrapped in an exception group, which would end
    the process with status 1 and a traceback instead of 128 + N (seen under load in
    tests/func/test_serve_signals.py)."""
    try:
        yield
    except BaseExceptionGroup as group:
        exits, _ = group.split(SystemExit)
        if exits is None:
            raise
        first: BaseException = exits
        while isinstance(first, BaseExceptionGroup):
            first = first.exceptions[0]
        raise first from None


def _stage_run_folder(
    overlay: str, condition: str | None, out: Path, run_id: str | None, store: str | None, *,
    trust_staged: bool = False, **given: str | None
) -> tuple[object, str]:
    """`serve --overlay T --out DIR`: stage a complete run folder (`worldkit.run.folder`) — package,
    workspace and run.json naming the log's run id and store — so `worldkit grade DIR` can grade
    whatever an outside agent does through these tools."""
    from worldkit.mcp.session import StagedSeat, _require_match, new_run_id
    from worldkit.overlay import load_overlay, resolve_overlay
    from worldkit.overlay.toolconfig import ToolConfig
    from worldkit.run.folder import RunPaths, stage_run_folder
    from worldkit.run.runner import check_staged
    from worldkit.store import resolve_url

    if out.exists() and any(out.iterdir()):
        raise UsageError(f"--out {out} is not empty; a run folder is staged fresh — give a new folder")
    model = load_overlay(resolve_overlay(overlay))
    run = run_id or new_run_id(model.seat)
    stage_run_folder(model, out, run_id=run, condition=condition or "full", store=resolve_url(store))
    paths = RunPaths(out.absolute())
    config = ToolConfig.model_validate_json((paths.candidate / "tool-config.json").read_bytes())
    _require_match(config, given["world"], given["rev"], given["date"], given["seat"], f"overlay {overlay}")
    staged = StagedSeat(projection=paths.projection, config=config, workspace=paths.workspace, root=paths.root)
    staged.frozen_check = check_staged(paths.candidate, overlay=model, trust_staged=trust_staged)
    staged.trusted_staged = bool(staged.frozen_check.counts.get("trusted_staged"))
    return staged, run


def _open_run_folder(
    root: Path, run_id: str | None, store: str | None, *, trust_staged: bool = False
) -> tuple[object, str, str | None]:
    """`serve --run-folder DIR`: serve a folder staged elsewhere (`worldkit.run.folder`), after checking
    its candidate package against its manifests; the run id and (unless --store) the store are run.json's."""
    from worldkit.mcp.session import StagedSeat
    from worldkit.overlay.toolconfig import ToolConfig
    from worldkit.run.folder import RunPaths, read_run_folder
    from worldkit.run.runner import check_staged

    paths = RunPaths(Path(root).absolute())
    folder = read_run_folder(paths.root)
    if run_id is not None and run_id != folder.run_id:
        raise UsageError(f"--run-id {run_id} differs from {paths.manifest}'s run id {folder.run_id}; leave --run-id out")
    from worldkit.run.folder import resolve_run_task

    # The task is resolved by id and digest on worldkit's own path; a folder naming anything else is
    # refused (with --trust-staged only the frozen manifests are left to compare with, and it is recorded).
    claims = {"overlay": folder.overlay, "overlay_sha256": folder.overlay_sha256, "seat": folder.seat,
              "condition": folder.condition}  # fmt: skip
    try:
        overlay = resolve_run_task(paths.root, claims).overlay
    except WorldkitError:
        if not trust_staged:
            raise
        overlay = None
    frozen_check = check_staged(paths.candidate, overlay=overlay, trust_staged=trust_staged)
    if not paths.workspace.is_dir():
        raise UsageError(f"{paths.workspace} is missing; a run folder holds the seat's workspace copy — stage it afresh")
    from worldkit.frozen.seed import require_fresh_workspace

    require_fresh_workspace(paths.workspace, paths.candidate, overlay, what="run folder workspace")
    config = ToolConfig.model_validate_json((paths.candidate / "tool-config.json").read_bytes())
    if config.seat != folder.seat:
        raise CheckFailed(f"{paths.manifest} names seat {folder.seat}, but the package serves {config.seat}; "
                          "the run folder was altered — stage it afresh")  # fmt: skip
    chosen = store or folder.store
    if chosen is not None and "***" in chosen:
        raise UsageError(f"{paths.manifest} names the store {chosen} with its password masked; pass --store with the full URL")
    staged = StagedSeat(projection=paths.projection, config=config, workspace=paths.workspace, root=paths.root)
    staged.frozen_check = frozen_check
    staged.trusted_staged = bool(frozen_check.counts.get("trusted_staged"))
    return staged, folder.run_id, chosen


def replay_command(
    run_id: str = typer.Argument(..., metavar="RUN", help="Run id (see `worldkit log list`)."),
    pre_task: Path | None = typer.Option(
        None, "--from", help="The pre-task state: a projection or an untouched candidate package directory."
    ),
    world: str | None = typer.Option(None, "--world", help="Rebuild the pre-task projection: world."),
    rev: str | None = typer.Option(None, "--rev", help="Rebuild: revision."),
    date: str | None = typer.Option(None, "--date", help="Rebuild: date (the seat is the run's)."),
    overlay: str | None = typer.Option(None, "--overlay", help="Rebuild: the task overlay's candidate package."),
    condition: str | None = typer.Option(None, "--condition", help="Rebuild: overlay condition."),
    workspace: Path | None = typer.Option(
        None, "--workspace", help="Also check this post-run workspace folder against the replayed one."
    ),
    packet: Path | None = typer.Option(
        None, "--packet", metavar="DIR",
        help="InfoOrgBench: replay the organizer run's moves onto this packet's inbox and compare with --workspace.",
    ),
    after: list[str] = typer.Option(  # noqa: B008 - typer declares options this way
        None, "--after", metavar="RUN",
        help="With --packet: runs that worked on the same workspace before RUN, in order (replayed first).",
    ),
    store: str | None = typer.Option(None, "--store", help=STORE_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print the report as one JSON object."),
) -> None:
    """Re-apply a run's state changes to its pre-task state; exit 1 if the post-task digest differs.

    With --packet (an InfoOrgBench organizer run), the run's logged moves (after those of the
    --after runs) are replayed onto the packet's inbox and the tree must equal --workspace."""
    from worldkit.mcp.replay import replay_run
    from worldkit.mcp.session import stage_seat
    from worldkit.store import Store, get_run

    if packet is not None:
        from worldkit.mcp.organizer_replay import replay_organizer_runs

        if workspace is None:
            raise UsageError("--packet needs --workspace: the organizer workspace the runs left")
        with Store.open(store, create=False) as opened:
            organizer_report = replay_organizer_runs(opened, [*(after or []), run_id], packet, workspace)
        if as_json:
            echo_json({**organizer_report.model_dump(mode="json"), "message": organizer_report.message})
        if not organizer_report.ok:
            raise CheckFailed(organizer_report.message)
        if not as_json:
            typer.echo(f"ok: {organizer_report.message}")
        return
    with Store.open(store, create=False) as opened:
        if pre_task is not None:
            if any(v is not None for v in (world, rev, date, overlay)):
                raise UsageError(
                    "--from excludes --world/--rev/--date/--overlay: give the pre-task directory or how to rebuild it"
                )
            report = replay_run(opened, run_id, pre_task, post_task_workspace=workspace)
        else:
            seat = get_run(opened, run_id).seat
            with tempfile.TemporaryDirectory(prefix="worldkit-replay-") as tmp:
                staged = stage_seat(
                    world=world, rev=rev, date=date, seat=seat, overlay=overlay, condition=condition,
                    out=Path(tmp) / "staged",
                )
                pre = staged.root / "package" / "candidate" if overlay else staged.projection
                report = replay_run(opened, run_id, pre, post_task_workspace=workspace)
    if as_json:
        echo_json({**report.model_dump(mode="json"), "message": report.message})
    if not report.ok:
        raise CheckFailed(report.message)
    if not as_json:
        typer.echo(f"ok: {report.message}")


def recover_command(
    run_id: str = typer.Argument(..., metavar="RUN", help="Run id (see `worldkit log list`)."),
    workspace: Path = typer.Option(..., "--workspace", help="The workspace folder the killed server wrote in."),
    store: str | None = typer.Option(None, "--store", help=STORE_HELP),
    anchor: Path | None = typer.Option(None, "--anchor", help="Check the log against this anchor file first."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as one JSON object."),
) -> None:
    """Settle a killed server's workspace with its run's log (the next start's crash recovery).

    Seat workspaces: a write killed after its event was committed is completed; one killed before
    is dropped. Organizer workspaces (InfoOrgBench): a move killed mid-way is completed and logged
    in RUN's own log (the next `infoorg serve` refuses to start until this is done). Either way
    `log replay` of every run then agrees with the disk. Exit 1 if the log does not check out.
    """
    from worldkit.infoorg.validity import ORGANIZER_STATE_DIR
    from worldkit.mcp.organizer import recover_organizer
    from worldkit.mcp.recover import recover_workspace
    from worldkit.store import Store, read_anchor, verify_chain

    found = read_anchor(anchor) if anchor is not None else None
    report: Any
    with Store.open(store, create=False) as opened:
        if (workspace / ORGANIZER_STATE_DIR).is_dir():
            checked = verify_chain(opened, run_id, anchor=found)
            if not checked.ok:
                raise LogTampered(checked.message)
            report = recover_organizer(opened, run_id, workspace)
        else:
            report = recover_workspace(opened, run_id, workspace, anchor=found)
    if as_json:
        echo_json({**report.model_dump(mode="json"), "message": report.message})
    else:
        typer.echo(f"ok: {report.message}")


def register(app: typer.Typer) -> None:
    from worldkit._cli.log import log_app

    app.command("serve")(serve_command)
    log_app.command("replay")(replay_command)
    log_app.command("recover")(recover_command)

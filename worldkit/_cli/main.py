"""The `worldkit` command: a thin adapter that parses, calls the library, prints and exits.

Each module listed in `_COMMAND_MODULES` defines `register(app)`. Library errors become a one-line
message on stderr and the exit code of `worldkit.errors.ExitCode`; tracebacks only with --debug.

Start-up is kept short: `worldkit --version` imports neither typer nor the library, and a command
registers (imports) only the command modules it needs (`_COMMANDS`); `--help`, an unknown command
and `from worldkit._cli.main import app` register every module, in the order of `_COMMAND_MODULES`.

Run as a program (`main`), the cyclic garbage collector is paused while the command's modules are
imported (`_PRELOAD` names those a server imports in its body): importing the MCP SDK and the
models builds some 10^6 objects that all live as long as the process, and the collector, run every
700 allocations, would traverse them over and over (a sixth of a server's start-up here). Once
they are in, they are frozen out of its sight (`gc.freeze`) and it runs as usual.
"""

from __future__ import annotations

import gc
import importlib
import sys
from typing import Any

from worldkit import __version__
from worldkit._cli.process import claim_process
from worldkit.errors import ExitCode, WorldkitError

_COMMAND_MODULES = [
    "world",
    "materialize",
    "schema",
    "report",
    "log",
    "infoorg_group",
    "infoorg_build",
    "infoorg_score",
    "infoorg_run",
    "serve",
    "overlay",
    "verify",
    "run",
    "grade",
    "judge",
    "audit",
    "campaign",
    "export",
    "simulate",
    "tasks",
]

_COMMANDS: dict[str, tuple[str, ...]] = {
    "world": ("world",),
    "materialize": ("materialize",),
    "schema": ("schema",),
    "report": ("report",),
    "log": ("log", "serve"),  # `serve` adds `log replay`
    "infoorg": ("infoorg_group", "infoorg_build", "infoorg_score", "infoorg_run"),
    "serve": ("log", "serve"),
    "overlay": ("overlay",),
    "verify": ("verify",),
    "freeze": ("verify",),
    "run": ("run",),
    "regrade": ("run",),
    "grade": ("grade",),
    "judge-batch": ("grade",),
    "judge": ("judge",),
    "audit": ("audit",),
    "campaign": ("campaign",),
    "export": ("export",),
    "simulate": ("simulate",),
    "power": ("simulate",),
    "tasks": ("tasks",),
}
"""Top-level command name → the command modules that define it (and its sub-commands)."""

_ROOT_OPTIONS = {"--debug"}

_SERVER_MODULES = ("anyio", "worldkit.mcp.session", "worldkit.mcp.stdio", "worldkit.store")
_PRELOAD: dict[tuple[str, ...], tuple[str, ...]] = {
    ("serve",): ("worldkit.mcp.server", *_SERVER_MODULES),
    ("infoorg", "serve"): ("worldkit.infoorg.overlays", "worldkit.mcp.organizer", *_SERVER_MODULES),
}
"""Command → the library modules its body imports, loaded before it runs (under the paused collector):
the seat server and the organizer are started once per agent run."""


def _global_options(args: list[str]) -> tuple[list[str], bool, list[str]]:
    """`args` without the global options (`--debug`, `--worlds DIR`), which are accepted anywhere."""
    rest: list[str] = []
    debug = False
    worlds: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            rest += args[i:]
            break
        if arg == "--debug":
            debug = True
        elif arg == "--worlds" and i + 1 < len(args):
            worlds.append(args[i + 1])
            i += 1
        elif arg.startswith("--worlds="):
            worlds.append(arg.split("=", 1)[1])
        else:
            rest.append(arg)
        i += 1
    return rest, debug, worlds

_state: dict[str, Any] = {"debug": False, "gc_paused": False}
_built: dict[str, Any] = {}
_registered: list[str] = []


def _version(value: bool) -> None:
    if value:
        import typer

        typer.echo(f"worldkit {__version__}")
        raise typer.Exit()


def _root_app() -> Any:
    """The root typer app with no commands yet (built once per process)."""
    if "app" not in _built:
        import typer

        app = typer.Typer(
            name="worldkit",
            help="Build organizational worlds, lay tasks on them, serve them to agents and grade the runs.",
            no_args_is_help=True,
            add_completion=True,
            pretty_exceptions_enable=False,
        )

        @app.callback()
        def _root(
            debug: bool = typer.Option(False, "--debug", help="Show tracebacks for errors (accepted anywhere)."),
            worlds: list[str] = typer.Option(
                [], "--worlds", metavar="DIR",
                help="Also search DIR for worlds, overlays and manifests, first (repeatable, accepted anywhere; "
                "see $WORLDKIT_PATH).",
            ),
            version: bool = typer.Option(
                False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
            ),
        ) -> None:
            """worldkit command line."""
            # the global options are taken out of argv by `run` (so they work anywhere); listed here for --help

        _built["app"] = app
    return _built["app"]


def _register(modules: list[str] | tuple[str, ...]) -> Any:
    """Register the given command modules (once each) on the root app, keeping the canonical order."""
    app = _root_app()
    for name in _COMMAND_MODULES:
        if name in modules and name not in _registered:
            importlib.import_module(f"worldkit._cli.{name}").register(app)
            _registered.append(name)
    rank = {name: n for n, name in enumerate(_COMMAND_NAMES)}
    app.registered_commands.sort(key=lambda info: rank.get(info.name or "", len(rank)))
    app.registered_groups.sort(key=lambda info: rank.get(info.name or "", len(rank)))
    return app


_COMMAND_NAMES = [
    "materialize", "schema", "report", "serve", "verify", "freeze", "run", "regrade", "grade", "judge-batch", "world", "log", "infoorg",
    "overlay", "tasks", "judge", "audit", "campaign", "export", "power", "simulate",
]  # fmt: skip
"""The order `worldkit --help` lists the commands in (commands first, then groups, as registered)."""


def _modules_for(argv: list[str]) -> tuple[str, ...] | list[str]:
    """The command modules `argv` needs: those of its command, or all of them (help, unknown)."""
    for arg in argv:
        if arg in _ROOT_OPTIONS:
            continue
        return _COMMANDS.get(arg, _COMMAND_MODULES)
    return _COMMAND_MODULES


def __getattr__(name: str) -> Any:
    if name == "app":  # the whole CLI, every command registered (tests walk it)
        return _register(_COMMAND_MODULES)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _fail(message: str, code: int, as_json: bool) -> int:
    """Report an error: `error: …` on stderr, or under --json `{"error", "exit_code"}` on stdout.

    When the command already printed its JSON result (e.g. a score with S = 0, then exit 1), the
    error goes to stderr, so stdout stays one JSON object.
    """
    from worldkit._cli.output import json_printed

    if as_json and not json_printed():
        import json

        sys.stdout.write(json.dumps({"error": message, "exit_code": code, "schema_version": 1}, sort_keys=True) + "\n")
    else:
        sys.stderr.write(f"error: {message}\n")
    return code


def _imports_done(args: list[str]) -> None:
    """Import what the command in `args` will (`_PRELOAD`; not for --help), then, if `main` paused the
    collector, freeze what start-up built and let the collector run again."""
    if not _state["gc_paused"]:
        return
    if "--help" not in args:
        for prefix, modules in _PRELOAD.items():
            if tuple(args[: len(prefix)]) == prefix:
                for module in modules:
                    importlib.import_module(module)
    from worldkit._process import freeze_process

    _state["gc_paused"] = False
    freeze_process()
    gc.enable()


def run(argv: list[str] | None = None) -> int:
    """Run the CLI and return its exit code (used by `main` and by tests)."""
    args, debug, worlds = _global_options(list(argv if argv is not None else sys.argv[1:]))
    if args[:1] == ["--version"]:
        sys.stdout.write(f"worldkit {__version__}\n")  # eager, as the typer option: no command runs
        return 0
    if args[:2] == ["infoorg", "score-trees"]:  # the scorer alone, without building the CLI
        from worldkit._cli.output import reset_json_printed
        from worldkit._cli.score_trees import score_trees_fast, score_trees_files

        _imports_done(args)
        parsed = score_trees_fast(args[2:])
        if parsed is not None:
            reset_json_printed()
            try:
                score_trees_files(*parsed)
            except WorldkitError as error:
                if debug:
                    raise
                return _fail(error.message, int(error.exit_code), "--json" in args)
            except Exception as error:  # a bug, not bad input: as below
                if debug:
                    raise
                return _fail(f"internal error: {type(error).__name__}: {error} (rerun with --debug for the traceback)",
                             int(ExitCode.INTERNAL), "--json" in args)  # fmt: skip
            return 0
    import click
    import typer

    try:  # typer ≥ 0.2x vendors its own click exceptions beside the real click's
        from typer._click.exceptions import ClickException as _TyperClickException
    except ImportError:  # pragma: no cover - older typer
        _TyperClickException = click.ClickException
    click_errors = (click.ClickException, _TyperClickException)
    from worldkit.locate import extra_roots

    as_json = "--json" in args[: args.index("--") if "--" in args else len(args)]
    from worldkit._cli.helpfmt import readable

    command = readable(typer.main.get_command(_register(_modules_for(args))))
    _imports_done(args)
    _state["debug"] = debug
    from worldkit._cli.output import reset_json_printed

    reset_json_printed()
    try:
        with extra_roots(worlds):
            result = command.main(args=args, prog_name="worldkit", standalone_mode=False)
    except WorldkitError as error:
        if debug:
            raise
        return _fail(error.message, int(error.exit_code), as_json)
    except click.exceptions.Exit as done:
        return int(done.exit_code)
    except click_errors as error:
        if not as_json:
            error.show()
            return int(ExitCode.USAGE)
        return _fail(error.format_message(), int(ExitCode.USAGE), as_json)
    except click.exceptions.Abort:
        return _fail("aborted", int(ExitCode.USAGE), as_json)
    except Exception as error:  # a bug, not bad input: one line (the traceback with --debug)
        if debug:
            raise
        return _fail(f"internal error: {type(error).__name__}: {error} (rerun with --debug for the traceback)",
                     int(ExitCode.INTERNAL), as_json)  # fmt: skip
    return int(result) if isinstance(result, int) else 0


def main() -> None:
    """The `worldkit` program: `run` with the collector paused through start-up (see the module's doc)."""
    claim_process()
    if gc.isenabled():
        gc.disable()
        _state["gc_paused"] = True
    code = run()
    # Nothing is left to collect that matters: the interpreter's own collections at exit would only
    # traverse the loaded world again (0.12 s of a 1 s materialize here).
    gc.freeze()
    sys.exit(code)

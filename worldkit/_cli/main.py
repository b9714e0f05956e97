"""The `worldkit` command: a thin adapter that parses, calls the library, prints and exits.

Each module listed in `_COMMAND_MODULES` defines `register(app)`. Library errors become a one-line
message on stderr and the exit code of `worldkit.errors.ExitCode`; tracebacks only with --debug.
"""

from __future__ import annotations

import importlib
import sys

import click
import typer

from worldkit import __version__
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
    "export",
]

app = typer.Typer(
    name="worldkit",
    help="Build organizational worlds, lay tasks on them, serve them to agents and grade the runs.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

_state = {"debug": False}

try:  # typer ≥ 0.2x vendors its own click exceptions beside the real click's
    from typer._click.exceptions import ClickException as _TyperClickException
except ImportError:  # pragma: no cover - older typer
    _TyperClickException = click.ClickException
_CLICK_ERRORS = (click.ClickException, _TyperClickException)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"worldkit {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks for errors."),
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """worldkit command line."""
    _state["debug"] = debug


for _name in _COMMAND_MODULES:
    importlib.import_module(f"worldkit._cli.{_name}").register(app)


def run(argv: list[str] | None = None) -> int:
    """Run the CLI and return its exit code (used by `main` and by tests)."""
    command = typer.main.get_command(app)
    debug = "--debug" in (argv if argv is not None else sys.argv[1:])
    try:
        result = command.main(args=argv, prog_name="worldkit", standalone_mode=False)
    except WorldkitError as error:
        if debug:
            raise
        typer.echo(f"error: {error.message}", err=True)
        return int(error.exit_code)
    except click.exceptions.Exit as done:
        return int(done.exit_code)
    except _CLICK_ERRORS as error:
        error.show()
        return int(ExitCode.USAGE)
    except click.exceptions.Abort:
        typer.echo("aborted", err=True)
        return int(ExitCode.USAGE)
    return int(result) if isinstance(result, int) else 0


def main() -> None:
    sys.exit(run())

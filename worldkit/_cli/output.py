"""Printing helpers shared by CLI commands."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


OUTPUT_SCHEMA_VERSION = 1
"""`schema_version` of every JSON object a command prints that has no version of its own (the report has)."""


def versioned(value: Any) -> Any:
    """`value` with `schema_version` (when it is an object without one)."""
    if isinstance(value, dict) and "schema_version" not in value:
        return {"schema_version": OUTPUT_SCHEMA_VERSION, **value}
    return value


_printed = {"json": False}


def reset_json_printed() -> None:
    """Forget that a JSON object was printed (the CLI calls this before each command)."""
    _printed["json"] = False


def json_printed() -> bool:
    """Whether this command already printed its JSON object (an error after it then goes to stderr)."""
    return _printed["json"]


def echo_json(value: Any) -> None:
    """Print one JSON object on stdout (sorted keys, so output is stable), carrying `schema_version`."""
    # Written directly (as typer.echo would), so printing JSON does not import the CLI toolkit.
    sys.stdout.write(json.dumps(versioned(value), sort_keys=True, indent=2, ensure_ascii=False) + "\n")
    sys.stdout.flush()
    _printed["json"] = True


@contextmanager
def progress_bar(title: str, *, enabled: bool = True) -> Iterator[Callable[[str, int, int], None] | None]:
    """A `progress(label, done, total)` callback drawing a rich bar on stderr, or None.

    None (nothing drawn) when `enabled` is false (e.g. `--json`) or stderr is not a terminal, so
    piped and captured output stays exactly the report.
    """
    if not enabled or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn(f"{title}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TextColumn("{task.description}"),
        console=Console(stderr=True), transient=True,
    ) as bar:
        task = bar.add_task("", total=None)

        def tick(label: str, done: int, total: int) -> None:
            bar.update(task, description=label, completed=done, total=total or None)

        yield tick

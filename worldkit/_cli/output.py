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
    piped and captured output stays exactly the report. The bar is redrawn by the callback itself
    (at most ten times a second, and always on the last step), not by rich's refresh thread: a
    process with a second thread running cannot fork safely, and verify then runs its checks one
    by one instead of in parallel processes (what made `make demo` on a terminal slower than
    captured). Long waits call the callback again to keep the elapsed time moving.
    """
    if not enabled or not sys.stderr.isatty():
        yield None
        return
    import time

    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    with Progress(
        TextColumn(f"{title}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TextColumn("{task.description}"),
        console=Console(stderr=True), transient=True, auto_refresh=False,
    ) as bar:
        task = bar.add_task("", total=None)
        drawn = [0.0]

        def tick(label: str, done: int, total: int) -> None:
            bar.update(task, description=label, completed=done, total=total or None)
            now = time.monotonic()
            if now - drawn[0] >= 0.1 or (total and done >= total):
                drawn[0] = now
                bar.refresh()

        yield tick


TABLE_WIDTH = 240
"""Width tables are laid out in (as `worldkit report` does): fixed, so output is the same on every terminal."""


def render_table(
    header: list[str],
    rows: list[list[str]],
    *,
    title: str | None = None,
    right: frozenset[str] | set[str] = frozenset(),
    wrap: frozenset[str] | set[str] = frozenset(),
) -> str:
    """A rich table as plain text, in the style of `worldkit report` (no colour, trailing spaces stripped).

    Columns named in `right` are right-aligned (counts, scores); columns in `wrap` fold long
    values over several lines instead of widening the table; every other column stays on one line.
    """
    import io

    from rich import box
    from rich.console import Console
    from rich.table import Table

    out = io.StringIO()
    console = Console(file=out, width=TABLE_WIDTH, color_system=None, force_terminal=False,
                      highlight=False, emoji=False, markup=False)
    table = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left", highlight=False)
    for name in header:
        folds = name in wrap
        table.add_column(name, justify="right" if name in right else "left", no_wrap=not folds,
                         overflow="fold" if folds else "ellipsis")
    for row in rows:
        table.add_row(*row)
    console.print(table)
    return "\n".join(line.rstrip() for line in out.getvalue().splitlines()) + "\n"


def echo_table(header: list[str], rows: list[list[str]], **options: Any) -> None:
    """Print `render_table(header, rows, **options)` on stdout."""
    sys.stdout.write(render_table(header, rows, **options))
    sys.stdout.flush()

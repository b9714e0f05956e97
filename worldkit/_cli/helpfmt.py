"""Readable option metavars for `--help`: `TEXT`, `PATH`, `INTEGER`, `[a|b]` instead of typer's `<str>`.

Applied to the click command tree once per process (`readable`); options that name their own
metavar keep it, flags show none (the flag is its own value), arguments (named by their metavar)
get a readable type column.
"""

from __future__ import annotations

import re
from typing import Any

_NAMES = {"str": "TEXT", "path": "PATH", "int": "INTEGER", "int range": "INTEGER", "float": "NUMBER",
          "float range": "NUMBER", "bool": "BOOLEAN"}  # fmt: skip
_LIST = re.compile(r"^list\[(\w+)\]$")


def metavar_for(raw: str) -> str:
    """The readable metavar for typer's raw display type (`<str>`, `<list[Path]>`, `<stdio|http>`)."""
    inner = raw[1:-1] if raw.startswith("<") and raw.endswith(">") else raw
    if inner in _NAMES:
        return _NAMES[inner]
    listed = _LIST.match(inner)
    if listed:
        return _NAMES.get(listed.group(1).lower(), listed.group(1).upper())
    if "|" in inner:
        return f"[{inner}]"
    return inner.upper()


def _commands(command: Any) -> list[Any]:
    found = [command]
    for sub in getattr(command, "commands", {}).values():
        found += _commands(sub)
    return found


def readable(command: Any) -> Any:
    """Give every option of `command` and its sub-commands a readable metavar (in place); returns it."""
    import click

    for cmd in _commands(command):
        ctx = click.Context(cmd)
        help_option = cmd.get_help_option(ctx)
        if help_option is not None and help_option.metavar is None:
            help_option.metavar = ""
        for param in cmd.params:
            if param.param_type_name == "argument":  # the name is its metavar; only the type column is raw
                raw = param.display_type_rich(ctx) if hasattr(param, "display_type_rich") else None
                if raw and str(raw).startswith("<"):
                    shown = metavar_for(str(raw))
                    param.display_type_rich = lambda ctx, shown=shown: shown  # type: ignore[method-assign]
                continue
            if param.metavar is not None:
                continue
            if getattr(param, "is_flag", False):
                param.metavar = ""
                continue
            raw = param.display_type_rich(ctx) if hasattr(param, "display_type_rich") else None
            if raw:
                param.metavar = metavar_for(str(raw))
    return command

"""Printing helpers shared by CLI commands."""

from __future__ import annotations

import json
from typing import Any

import typer


def echo_json(value: Any) -> None:
    """Print one JSON object on stdout (sorted keys, so output is stable)."""
    typer.echo(json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False))

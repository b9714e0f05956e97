"""The `worldkit infoorg` command group, shared by the modules that add InfoOrgBench commands.

Modules such as `infoorg_score` and `infoorg_build` import `infoorg_app` and add commands to it;
`register` mounts the group once on the root app (list this module first in `_COMMAND_MODULES`).
"""

from __future__ import annotations

import typer

infoorg_app = typer.Typer(
    help="InfoOrgBench: build packets, score organized workspaces, run text-only baselines.",
    no_args_is_help=True,
)


def register(app: typer.Typer) -> None:
    app.add_typer(infoorg_app, name="infoorg")

"""`worldkit schema`: write JSON Schemas for world, overlay and campaign design files."""

from __future__ import annotations

from pathlib import Path

import typer


def schema_command(
    out: Path = typer.Option(Path("schemas"), "--out", help="Folder to write *.schema.json into."),
) -> None:
    """Write JSON Schemas for world, overlay and campaign design files (for editor support)."""
    from worldkit.canon import pretty_json
    from worldkit.overlay.schemas import schemas as overlay_schemas
    from worldkit.run.campaign.design import CampaignDesign
    from worldkit.world.schemas import world_schemas

    schemas = {**world_schemas(), **overlay_schemas(), "campaign.schema.json": CampaignDesign.model_json_schema()}
    out.mkdir(parents=True, exist_ok=True)
    for name, schema in sorted(schemas.items()):
        (out / name).write_text(pretty_json(schema), encoding="utf-8")
        typer.echo(str(out / name))


def register(app: typer.Typer) -> None:
    app.command("schema")(schema_command)

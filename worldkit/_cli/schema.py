"""`worldkit schema`: write JSON Schemas for the files worldkit reads and the JSON it prints.

Input files: world and overlay files, campaign designs (for editor support). Outputs: the shapes
that are pydantic models — the execution record, the report, `verify --json` (its check results),
`log verify --json` and `log list --json`. Every schema carries `$schema` (draft 2020-12) and `$id`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_ID_PREFIX = "urn:worldkit:schema:"


def _with_version(schema: dict[str, Any], version: int) -> dict[str, Any]:
    """An output schema: the object also carries `schema_version` (added by `echo_json`)."""
    properties = schema.setdefault("properties", {})
    properties.setdefault("schema_version", {"const": version, "title": "Schema Version"})
    return schema


def output_schemas() -> dict[str, dict[str, Any]]:
    """JSON Schemas of the JSON worldkit prints or writes, by file name."""
    from pydantic import BaseModel, ConfigDict, create_model

    from worldkit._cli.output import OUTPUT_SCHEMA_VERSION
    from worldkit.run.record import ExecutionRecord
    from worldkit.run.report import Report
    from worldkit.store.chain import ChainReport
    from worldkit.store.runs import RunSummary
    from worldkit.verify.result import CheckResult

    open_object = ConfigDict(extra="allow")
    verify_output: type[BaseModel] = create_model(
        "VerifyOutput", __config__=open_object,
        status=(str, ...), checks=(list[CheckResult], ...), world=(str | None, None),
        validation=(dict[str, Any] | None, None), seeded=(dict[str, Any] | None, None),
        mutations=(dict[str, Any] | None, None),
    )  # fmt: skip
    log_list: type[BaseModel] = create_model("LogList", __config__=open_object, runs=(list[RunSummary], ...))
    log_verify = ChainReport.model_json_schema(mode="serialization")  # printed with its one-line `message`
    log_verify["properties"]["message"] = {"type": "string", "title": "Message"}
    log_verify["required"] = [*log_verify.get("required", []), "message"]
    return {
        "execution-record.schema.json": ExecutionRecord.model_json_schema(mode="serialization"),
        "report.schema.json": Report.model_json_schema(mode="serialization"),
        "verify-output.schema.json": _with_version(verify_output.model_json_schema(mode="serialization"), OUTPUT_SCHEMA_VERSION),
        "log-list.schema.json": _with_version(log_list.model_json_schema(mode="serialization"), OUTPUT_SCHEMA_VERSION),
        "log-verify.schema.json": _with_version(log_verify, OUTPUT_SCHEMA_VERSION),
    }


def all_schemas() -> dict[str, dict[str, Any]]:
    """Every schema `worldkit schema` writes, each with `$schema` and `$id`."""
    from worldkit.overlay.schemas import schemas as overlay_schemas
    from worldkit.run.campaign.design import CampaignDesign
    from worldkit.world.schemas import world_schemas

    found = {**world_schemas(), **overlay_schemas(), "campaign.schema.json": CampaignDesign.model_json_schema(),
             **output_schemas()}  # fmt: skip
    return {
        name: {"$schema": JSON_SCHEMA_DIALECT, "$id": SCHEMA_ID_PREFIX + name.removesuffix(".schema.json"),
               **{k: v for k, v in schema.items() if k not in ("$schema", "$id")}}  # fmt: skip
        for name, schema in found.items()
    }


def schema_command(
    out: Path = typer.Option(Path("schemas"), "--out", metavar="DIR", help="Folder to write *.schema.json into."),
) -> None:
    """Write JSON Schemas for world, overlay and campaign files and for the JSON outputs (execution record, report, verify, log)."""
    from worldkit.canon import pretty_json

    out.mkdir(parents=True, exist_ok=True)
    for name, schema in sorted(all_schemas().items()):
        (out / name).write_text(pretty_json(schema), encoding="utf-8")
        typer.echo(str(out / name))


def register(app: typer.Typer) -> None:
    app.command("schema")(schema_command)

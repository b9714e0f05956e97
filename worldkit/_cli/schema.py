"""`worldkit schema`: write JSON Schemas for the files worldkit reads and the JSON it prints.

Input files: world and overlay files, campaign designs and the generator banks of a world's
`gen/banks/` (for editor support). Outputs: the execution record, the report, the run summary
(`run --json`, `grade --json`), `verify --json` (its check results), `materialize --json`,
`campaign status --json`, `log verify --json` and `log list --json`. Every schema carries
`$schema` (draft 2020-12) and `$id`; shipped YAML names its schema on its first line
(`# yaml-language-server: $schema=…`, see `yaml_schema_line`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

YAML_SCHEMA_PREFIX = "# yaml-language-server: $schema="
"""First line of a YAML file naming its JSON Schema for editors (the YAML language server)."""
JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_ID_PREFIX = "urn:worldkit:schema:"


def _with_version(schema: dict[str, Any], version: int) -> dict[str, Any]:
    """An output schema: the object also carries `schema_version` (added by `echo_json`)."""
    properties = schema.setdefault("properties", {})
    properties.setdefault("schema_version", {"const": version, "title": "Schema Version"})
    return schema


def _versioned_model(model: Any) -> dict[str, Any]:
    """A closed output model's schema with the required `schema_version` the CLI adds to it."""
    from worldkit._cli.output import OUTPUT_SCHEMA_VERSION

    schema = _with_version(model.model_json_schema(mode="serialization"), OUTPUT_SCHEMA_VERSION)
    schema["required"] = ["schema_version", *schema.get("required", [])]
    return schema


def output_schemas() -> dict[str, dict[str, Any]]:
    """JSON Schemas of the JSON worldkit prints or writes, by file name."""
    from pydantic import BaseModel, ConfigDict, create_model

    from worldkit._cli.output import OUTPUT_SCHEMA_VERSION
    from worldkit.check_result import CheckResult
    from worldkit.record.execution import CriterionOutcome, ExecutionRecord
    from worldkit.report.build import Report
    from worldkit.store.chain import ChainReport
    from worldkit.store.runs import RunSummary

    open_object = ConfigDict(extra="allow")
    verify_output: type[BaseModel] = create_model(
        "VerifyOutput", __config__=open_object,
        status=(str, ...), checks=(list[CheckResult], ...), world=(str | None, None),
        validation=(dict[str, Any] | None, None), seeded=(dict[str, Any] | None, None),
        mutations=(dict[str, Any] | None, None),
    )  # fmt: skip
    log_list: type[BaseModel] = create_model("LogList", __config__=open_object, runs=(list[RunSummary], ...))
    closed = ConfigDict(extra="forbid")
    outcome = CriterionOutcome.model_fields
    run_output: type[BaseModel] = create_model(
        "RunOutput", __config__=closed, __doc__="`worldkit run --json` and `worldkit grade --json`.",
        run_id=(str, ...), task=(str, ...), agent=(str, ...), condition=(str, ...),
        status=(ExecutionRecord.model_fields["status"].annotation, ...),
        criteria=(dict[str, outcome["result"].annotation], ...),  # type: ignore[name-defined]
        access=(dict[str, outcome["access"].annotation], ...),  # type: ignore[name-defined]
        deterministic_passed=(int, ...), deterministic_total=(int, ...), semantic_passed=(int, ...),
        semantic_total=(int, ...), graded_by=(dict[str, str], ...), judge=(dict[str, Any] | None, ...),
        seen_in_listing=(dict[str, list[str]], ...), judge_failure=(str, ...),
        calibration=(dict[str, Any] | None, ...), record=(str | None, ...),
    )  # fmt: skip
    materialize_output: type[BaseModel] = create_model(
        "MaterializeOutput", __config__=closed, __doc__="`worldkit materialize --json`.",
        fingerprint=(str, ...), files=(int, ...), surfaces=(dict[str, int], ...), revision_digest=(str, ...),
        tool_bundle_sha256=(str, ...), world=(str, ...), rev=(str, ...), date=(str, ...), seat=(str, ...),
        out=(str, ...),
    )  # fmt: skip
    failure: type[BaseModel] = create_model(
        "CampaignFailure", __config__=closed, seq=(int, ...), run_id=(str, ...), error=(str | None, ...),
    )  # fmt: skip
    discard: type[BaseModel] = create_model(
        "CampaignDiscard", __config__=closed, seq=(int, ...), run_id=(str, ...), reason=(str, ...),
    )  # fmt: skip
    campaign_status: type[BaseModel] = create_model(
        "CampaignStatus", __config__=closed, __doc__="`worldkit campaign status --json`.",
        campaign_id=(str, ...), plan_sha256=(str, ...), store=(str, ...), planned=(int, ...), done=(int, ...),
        failed=(int, ...), running=(int, ...), pending=(int, ...), records=(int, ...),
        failures=(list[failure], ...),  # type: ignore[valid-type]
        discarded=(list[discard], ...),  # type: ignore[valid-type]
    )  # fmt: skip
    log_verify = ChainReport.model_json_schema(mode="serialization")  # printed with its one-line `message`
    log_verify["properties"]["message"] = {"type": "string", "title": "Message"}
    log_verify["required"] = [*log_verify.get("required", []), "message"]
    return {
        "execution-record.schema.json": ExecutionRecord.model_json_schema(mode="serialization"),
        "report.schema.json": Report.model_json_schema(mode="serialization"),
        "run-output.schema.json": _versioned_model(run_output),
        "materialize-output.schema.json": _versioned_model(materialize_output),
        "campaign-status.schema.json": _versioned_model(campaign_status),
        "verify-output.schema.json": _with_version(verify_output.model_json_schema(mode="serialization"), OUTPUT_SCHEMA_VERSION),
        "log-list.schema.json": _with_version(log_list.model_json_schema(mode="serialization"), OUTPUT_SCHEMA_VERSION),
        "log-verify.schema.json": _with_version(log_verify, OUTPUT_SCHEMA_VERSION),
    }


def generator_bank_schema() -> dict[str, Any]:
    """`gen/banks/*.yaml` of a world's generator: named banks of plain YAML values.

    A bank file maps snake_case names to strings, numbers, booleans, non-empty lists and mappings
    (no nulls, no empty lists: a generator drawing from an empty bank has nothing to draw). SOP
    banks (`sops:`) list topics with the fields the SOP generator reads unconditionally.
    """
    from typing import Annotated, Union

    from pydantic import BaseModel, ConfigDict, Field, RootModel
    from typing_extensions import TypeAliasType

    BankValue = TypeAliasType(  # type: ignore[misc]
        "BankValue",
        Union[str, int, float, bool, Annotated[list["BankValue"], Field(min_length=1)], dict[str, "BankValue"]],  # type: ignore[name-defined]
    )
    Name = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*$")]

    class SopTopic(BaseModel):
        """One SOP of the site: its versions and the text the generator renders for each."""

        model_config = ConfigDict(extra="allow")
        number: str = Field(pattern=r"^SOP-[A-Z]+-\d{3}$")
        title: str = Field(min_length=1)
        dept: str = Field(min_length=1)
        versions: Annotated[list[BankValue], Field(min_length=1)]
        purpose: BankValue
        scope: BankValue
        responsibilities: BankValue
        sections: Annotated[list[BankValue], Field(min_length=1)]
        references: list[BankValue]

    class GeneratorBank(RootModel[dict[Name, BankValue]]):
        """A generator bank file: named banks of YAML values (see `sops` for SOP topic banks)."""

    schema = GeneratorBank.model_json_schema()
    topic = SopTopic.model_json_schema(ref_template="#/$defs/{model}")
    schema["$defs"].update(topic.pop("$defs", {}), SopTopic=topic)
    schema["properties"] = {"sops": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/SopTopic"}}}
    schema.update(minProperties=1, additionalProperties=False)  # bank names are snake_case
    return schema


def all_schemas() -> dict[str, dict[str, Any]]:
    """Every schema `worldkit schema` writes, each with `$schema` and `$id`."""
    from worldkit.campaign.design import CampaignDesign
    from worldkit.overlay.schemas import schemas as overlay_schemas
    from worldkit.world.schemas import world_schemas

    found = {**world_schemas(), **overlay_schemas(), "campaign.schema.json": CampaignDesign.model_json_schema(),
             "generator-bank.schema.json": generator_bank_schema(), **output_schemas()}  # fmt: skip
    return {
        name: {"$schema": JSON_SCHEMA_DIALECT, "$id": SCHEMA_ID_PREFIX + name.removesuffix(".schema.json"),
               **{k: v for k, v in schema.items() if k not in ("$schema", "$id")}}  # fmt: skip
        for name, schema in found.items()
    }


def yaml_schema_name(path: Path) -> str | None:
    """The schema of a world or overlay YAML file, from where it sits (None: not a file worldkit reads).

    `worlds/<w>/world.yaml` → world; `worlds/<w>/data/**` → world-data; `worlds/<w>/gen/banks/*` →
    generator-bank; `overlays/<w>/**` → overlay.
    """
    parts = path.parts
    tops = [i for i, part in enumerate(parts) if part in ("worlds", "overlays")]
    if path.suffix not in (".yaml", ".yml") or not tops:
        return None
    top = tops[-1]
    inner = parts[top + 2:]  # below worlds/<w>/ or overlays/<w>/
    if parts[top] == "overlays":
        return "overlay.schema.json" if inner else None
    if inner == ("world.yaml",):
        return "world.schema.json"
    if inner[:1] == ("data",):
        return "world-data.schema.json"
    if inner[:2] == ("gen", "banks"):
        return "generator-bank.schema.json"
    return None


def yaml_schema_line(path: Path, schemas: Path) -> str | None:
    """`# yaml-language-server: $schema=<relative path to its schema under schemas/>`, or None."""
    import os

    name = yaml_schema_name(path)
    if name is None:
        return None
    return YAML_SCHEMA_PREFIX + Path(os.path.relpath(schemas.resolve() / name, path.resolve().parent)).as_posix()


def stamp_yaml(path: Path, schemas: Path) -> bool:
    """Make the file's first line its schema line (replacing an older one); True if the file changed.

    Only the first line is touched, so the content — and every digest computed from it — is unchanged.
    """
    line = yaml_schema_line(path, schemas)
    if line is None:
        return False
    text = path.read_text(encoding="utf-8")
    first, newline, rest = text.partition("\n")
    body = rest if first.startswith(YAML_SCHEMA_PREFIX) else text
    stamped = f"{line}\n{body}"
    if stamped == text:
        return False
    path.write_text(stamped, encoding="utf-8")
    return True


def schema_command(
    out: Path = typer.Option(Path("schemas"), "--out", metavar="DIR", help="Folder to write *.schema.json into."),
    stamp: list[Path] = typer.Option(
        [], "--stamp", metavar="DIR",
        help="Also give every world and overlay YAML under DIR (repeatable) a first line naming its schema in --out "
        "(`# yaml-language-server: $schema=…`, for editors).",
    ),
) -> None:
    """Write JSON Schemas for world, overlay, campaign and generator-bank files and for the JSON outputs."""
    from worldkit.canon import pretty_json
    from worldkit.errors import UsageError

    missing = [str(folder) for folder in stamp if not folder.is_dir()]
    if missing:
        raise UsageError(f"--stamp {missing[0]} is not a directory; pass a worlds/ or overlays/ folder")
    out.mkdir(parents=True, exist_ok=True)
    for name, schema in sorted(all_schemas().items()):
        (out / name).write_text(pretty_json(schema), encoding="utf-8")
        typer.echo(str(out / name))
    for folder in stamp:
        for path in sorted(folder.rglob("*.y*ml")):
            if stamp_yaml(path, out):
                typer.echo(f"stamped {path}")


def register(app: typer.Typer) -> None:
    app.command("schema")(schema_command)

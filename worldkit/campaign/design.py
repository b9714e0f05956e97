"""The campaign design file: which tasks, agents and conditions, how many runs, which seed.

A design is YAML validated by `CampaignDesign` (`worldkit schema` exports its JSON Schema):

    tasks: [qualification-sweep, shelf-life-assessment]   # overlay ids or paths; packet dirs too
    agents: [oracle, noop, openai:gpt-x]                   # any registered agent, with options
    conditions: {full: 2, curated: 1}                       # runs per task × agent
    seed: 7                                                 # fixes the interleaved schedule
    judge: {kind: facts, calibration: facts.json}          # optional, frozen for the campaign

This module only parses and validates; `plan.py` expands a design into its schedule.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, ClassVar

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    field_validator,
    model_serializer,
    model_validator,
)

from worldkit.errors import InvalidWorld

__all__ = ["DESIGN_SCHEMA_VERSION", "AgentEntry", "CampaignDesign", "Conditions", "InvalidDesign", "JudgeEntry", "OmitWhenNone",
           "load_design"]

DESIGN_SCHEMA_VERSION = 1


class InvalidDesign(InvalidWorld):
    """A campaign design file is malformed: the message names the file, the item and the fix."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class AgentEntry(_Frozen):
    """One agent of the design: a registered agent spec and the options its factory gets."""

    agent: str = Field(min_length=1)
    """Registered agent spec: `oracle`, `noop`, `openai:MODEL`, `baseline:silhouette`, a plug-in…"""
    options: dict[str, Any] = Field(default_factory=dict)
    """Options passed to the agent's factory (e.g. base_url, max_steps); secrets belong in the
    environment, not here (the design is copied into the plan)."""

    @property
    def name(self) -> str:
        """The agent's name in run ids, records and reports: its spec."""
        return self.agent


class Conditions(_Frozen):
    """Runs per task × agent under each condition."""

    full: int = Field(default=1, ge=0)
    """Runs on the full projection (the paper: 4)."""
    curated: int = Field(default=0, ge=0)
    """Runs on each curated packet the overlay declares (the paper: 2 per curator's packet)."""


class OmitWhenNone(_Frozen):
    """A model that leaves the fields named in `omit_when_none` out of its dump while they are None,
    so a field added later keeps the bytes (and digests) of what was written before it."""

    omit_when_none: ClassVar[tuple[str, ...]] = ()

    @model_serializer(mode="wrap")
    def _omit_none(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for key in self.omit_when_none:
            if data.get(key) is None:
                data.pop(key, None)
        return data


class JudgeEntry(OmitWhenNone):
    """The judge for semantic criteria, frozen for the whole campaign."""

    omit_when_none = ("calibration",)

    kind: str = "none"
    """Judge name as `worldkit run --judge` takes it (`openai`, `none`, …)."""
    model: str | None = None
    """Model at the judge's endpoint."""
    base_url: str | None = None
    """The judge's OpenAI-compatible endpoint."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Further options for the judge's factory."""
    calibration: str | None = Field(default=None, min_length=1)
    """The judge's calibration file (`worldkit judge calibrate --out`), relative to the design file's
    folder: read when the campaign is planned, refused if it was made with another judge configuration
    or edited; its digest and figures are pinned in the plan, recorded with every verdict of the
    campaign's runs and shown by `worldkit report`."""

    @model_validator(mode="after")
    def _calibration_needs_a_judge(self) -> JudgeEntry:
        if self.calibration is not None and self.kind in ("", "none"):
            raise ValueError("judge.calibration needs a judge: set judge.kind (facts, openai, …) to the judge it calibrates")
        return self

    def factory_options(self) -> dict[str, Any]:
        return {**self.options, **{k: v for k, v in (("model", self.model), ("base_url", self.base_url)) if v}}


class CampaignDesign(_Frozen):
    """A designed experiment: tasks × agents × conditions × repeats, in seeded interleaved blocks."""

    schema_version: int = DESIGN_SCHEMA_VERSION
    """Version of the design format."""
    name: str | None = None
    """A human name for the campaign (not digested into run ids)."""
    tasks: list[str] = Field(min_length=1)
    """Overlay ids (`qualification-sweep`, `world/id`), overlay paths, or InfoOrgBench packet
    directories; relative paths are read from the design file's folder."""
    agents: list[AgentEntry] = Field(min_length=1, json_schema_extra=lambda schema: schema.update(
        items={"anyOf": [{"type": "string", "minLength": 1}, schema["items"]]}))  # a spec string too (`_agent_strings`)
    """Agents: a spec string, or a mapping with `agent` and `options`; each spec once."""
    conditions: Conditions = Field(default_factory=Conditions)
    """Runs per task × agent: `full`, and `curated` per curated packet."""
    blocks: int | None = Field(default=None, ge=1)
    """Collection blocks: each holds an equal share of every condition's runs (default: the
    largest number that divides every non-zero count, as the paper's two blocks of 2 + 1 + 1)."""
    seed: int = 0
    """Seed of the interleaved schedule; same design and seed give the same plan bytes."""
    judge: JudgeEntry | None = None
    """Optional judge for semantic criteria."""

    @field_validator("agents", mode="before")
    @classmethod
    def _agent_strings(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [{"agent": item} if isinstance(item, str) else item for item in value]
        return value

    @field_validator("schema_version")
    @classmethod
    def _version(cls, value: int) -> int:
        if value != DESIGN_SCHEMA_VERSION:
            raise ValueError(f"design schema_version {value} is not supported; this worldkit reads {DESIGN_SCHEMA_VERSION}")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> CampaignDesign:
        counts = [n for n in (self.conditions.full, self.conditions.curated) if n]
        if not counts:
            raise ValueError("conditions plan no run: set conditions.full and/or conditions.curated above 0")
        if self.blocks is not None and any(n % self.blocks for n in counts):
            raise ValueError(
                f"blocks: {self.blocks} does not divide every run count ({self.conditions.full} full, "
                f"{self.conditions.curated} per curated packet); choose a common divisor"
            )
        for what, items in (("tasks", self.tasks), ("agent names", [a.name for a in self.agents])):
            repeated = sorted({x for x in items if items.count(x) > 1})
            if repeated:
                raise ValueError(f"{what} repeated: {', '.join(repeated)}; give each once")
        return self

    @property
    def block_count(self) -> int:
        """The number of collection blocks the schedule uses."""
        if self.blocks is not None:
            return self.blocks
        return math.gcd(self.conditions.full, self.conditions.curated)


def load_design(path: Path) -> CampaignDesign:
    """Read and validate a design file; errors name the file, the item and the fix."""
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InvalidDesign("no such design file; give the path of a campaign YAML file", file=path) from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        raise InvalidDesign(f"not valid YAML{where}: {getattr(error, 'problem', error)}. Fix the syntax.", file=path) from None
    if not isinstance(raw, dict):
        raise InvalidDesign("a design is a mapping with tasks, agents, conditions and seed", file=path)
    try:
        return CampaignDesign.model_validate(raw)
    except ValidationError as error:
        errors = error.errors()
        first = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
        item = ".".join(str(p) for p in first["loc"]) or None
        message = first["msg"].removeprefix("Value error, ")
        if first["type"] == "extra_forbidden":
            from worldkit._model import unknown_key_message

            message = unknown_key_message(CampaignDesign, tuple(first["loc"]))
        raise InvalidDesign(f"{message}; fix it (see `worldkit schema`, campaign.schema.json)", file=path, field=item) from None

"""The agent-facing task text of InfoOrgBench (Appendix B), rendered from jinja2 templates.

`render_request` fills the paper's shared instruction (B.1) with a family criterion (B.2) and
the public collection details; `render_tool_instruction` gives the ReAct-FC tool instruction
(B.3). The wording is the paper's; only the marked slots vary. Nothing here may mention a
reference path, a source name or any hint about the hidden hierarchy.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import jinja2

from worldkit.infoorg.sources.records import Family


class FamilySlots(NamedTuple):
    """What the shared instruction says differently per family."""

    output_path: str
    """The `[family output path]` slot: the two folder levels above `<ID>.txt`."""
    leaf_level: str
    """The `[family leaf level]` slot: what a second-level folder stands for."""
    records_are: str
    """How the collection section describes the records (no counts of hidden groups)."""
    paginated_reading: bool
    """Recap and Thread add the rule to read long records completely (Figure 6 vs Figure 7)."""


SLOTS: dict[Family, FamilySlots] = {
    "recap": FamilySlots("<meeting>/<section>", "section", "meeting-summary sentences", True),
    "thread": FamilySlots(
        "<parent issue>/<subtask>", "subtask", "issue-tracker subtasks and comments", True
    ),
    "design": FamilySlots("<group>/<proposal>", "proposal", "design-document excerpts", False),
}

_ENV = jinja2.Environment(
    loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
    undefined=jinja2.StrictUndefined,
    autoescape=False,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
)


def render_criterion(family: Family) -> str:
    """The family's organizing criterion (Figures 8-10), without a trailing newline."""
    return _ENV.get_template(f"criterion_{family}.md.j2").render().strip()


def render_request(family: Family, record_count: int, working_root: str = ".") -> str:
    """The full task request for one packet (shared instruction + criterion + collection)."""
    slots = SLOTS[family]
    collection = (
        f"- {record_count} records, {slots.records_are}, one plain-text file each "
        "(`<ID>.txt`, UTF-8)."
    )
    return _ENV.get_template("request.md.j2").render(
        working_root=working_root,
        record_count=record_count,
        output_path=slots.output_path,
        leaf_level=slots.leaf_level,
        paginated_reading=slots.paginated_reading,
        criterion=render_criterion(family),
        collection=collection,
    )


def render_tool_instruction(max_calls_per_response: int = 200) -> str:
    """The ReAct-FC bounded tool instruction (Figure 11)."""
    return _ENV.get_template("tool_instruction.md.j2").render(
        max_calls_per_response=max_calls_per_response
    )


def server_instructions(request: str | None = None) -> str:
    """What the organizer server sends as MCP `initialize` instructions: Figure 11 verbatim,
    then (when serving a packet) the packet's request, separated by a blank line."""
    tool = render_tool_instruction().strip()
    return f"{tool}\n\n{request.strip()}" if request and request.strip() else tool


__all__ = [
    "SLOTS",
    "FamilySlots",
    "render_criterion",
    "render_request",
    "render_tool_instruction",
    "server_instructions",
]

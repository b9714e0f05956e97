"""The bytes of the files an overlay adds to the candidate package: `request.md` and
`tool-config.json`. Shared by `apply` (which writes them) and `problems` (which checks them)."""

from __future__ import annotations

from worldkit.canon import pretty_json
from worldkit.materialize.manifest import Manifest
from worldkit.overlay.models import Overlay
from worldkit.overlay.toolconfig import ToolConfig

__all__ = ["request_bytes", "tool_config_bytes"]


def request_bytes(overlay: Overlay) -> bytes:
    """`candidate/request.md`: the request with exactly one trailing newline."""
    return (overlay.request.rstrip("\n") + "\n").encode("utf-8")


def tool_config_bytes(overlay: Overlay, manifest: Manifest) -> bytes:
    """`candidate/tool-config.json` for the projection described by `manifest`."""
    inputs = manifest.inputs
    config = ToolConfig(
        world=inputs.world, rev=inputs.rev, date=inputs.date, seat=inputs.seat, person=inputs.person,
        surfaces=list(overlay.surfaces), permitted=list(overlay.permitted),
    )  # fmt: skip
    return pretty_json(config.model_dump(mode="json")).encode("utf-8")

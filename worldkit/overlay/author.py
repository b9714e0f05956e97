"""The authoring workflow: scaffold (`new`), re-pin (`pin`), freeze digests (`freeze`).

`overlay check` lives in `problems.py`. Freezing refuses an overlay that has check errors, then
applies it under every condition and writes `manifests/<world>/overlays/<id>.json` with sorted
keys and no times, so freezing twice writes identical bytes.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import yaml

from worldkit._model import Model
from worldkit.canon import pretty_json
from worldkit.errors import InvalidOverlay, OutputExists
from worldkit.materialize import materialize, parse_date
from worldkit.overlay.apply import apply_overlay
from worldkit.overlay.errors import OverlayProblems
from worldkit.overlay.load import load_overlay, overlay_digest, overlay_world, parse_overlay
from worldkit.overlay.models import Overlay
from worldkit.overlay.problems import CheckReport, check_overlay
from worldkit.world.load import load_world

# --- new --------------------------------------------------------------------------------------

_SCAFFOLD = """\
# Task overlay scaffolded by `worldkit overlay new`. Replace every TODO, then run
#   worldkit overlay check {path}
# until it reports no problems. Field reference: `worldkit schema` (overlay.schema.json).
schema_version: 1
id: {id}
title: {title}
world: {world}
rev: {rev}
date: {date}
seat: {seat}

# The assignment shown to the agent (candidate/request.md).
request: |
  TODO: describe the assignment.
  Write your answer to `answer.md` in your workspace.

# Tool surfaces served to the agent: files, records, communication.
surfaces: {surfaces}

# What the seat may change; the servers refuse everything else.
permitted:
  - {{kind: write_file, paths: [answer.md]}}

# Changes disallowed by the assignment or by policy, matched against the run's event log, e.g.
#   - {{id: no-site-mail, kind: send_message, match: {{to: list-site}}, description: …}}
prohibited: []

# The submission: a workspace file and/or a state change.
deliverable:
  path: answer.md
  description: TODO

# Verifier side from here on: never shown to the agent.
rubric:
  - id: C1
    text: The answer file exists and is not empty.
    route: deterministic
    check: {{type: deliverable_exists, path: answer.md}}
  # A file's existence (like an absence) is credited only beside a criterion asking for content.
  - id: C2
    text: "TODO: what the answer must state."
    route: deterministic
    check: {{type: contains, path: answer.md, text: "TODO: the reference answer", case: insensitive}}

# Criterion id -> sufficient evidence sets (all members of at least one set).
evidence:
  C1:
    - - {{surface: {ev_surface}, locator: {ev_locator}}}
  C2:
    - - {{surface: {ev_surface}, locator: {ev_locator}}}

# Curated packets: name -> projection paths (selection only).
curated: {{}}

reviewed_overlaps: []

reference:
  answer: |
    TODO: the reference answer.
  # The oracle's reads must return every criterion's evidence (a listing is not an access).
  actions:
    - {read_action}
    - {{tool: write_file, args: {{path: answer.md, content: "TODO: the reference answer.\\n"}}}}

reference_files: []

truth:
  sources: []
  facts: []
  unsafe_claims: []
  adjudication: []

# Fingerprint of the projection this overlay was written against (`worldkit overlay pin` updates it).
pinned_fingerprint: {fingerprint}
"""

_EVIDENCE_ORDER = ("files", "records", "mail", "chat")


def _scalar(value: str) -> str:
    """A YAML scalar for `value` (quoted only when it must be)."""
    return yaml.safe_dump(value, default_flow_style=True, width=10_000).strip().removesuffix("\n...").strip()


def _read_action(surface: str, locator: str, first_in_channel: dict[str, str]) -> str:
    """The reference action that returns the scaffold's evidence item (`overlay check` requires one)."""
    if surface == "files":
        return f"{{tool: read_file, args: {{path: {_scalar(locator.removeprefix('files/'))}}}}}"
    if surface == "records":
        return f"{{tool: get_record, args: {{id: {_scalar(locator)}}}}}"
    if surface == "mail":
        return f"{{tool: read_message, args: {{id: {_scalar(locator)}}}}}"
    return f"{{tool: read_message, args: {{id: {_scalar(first_in_channel[locator])}}}}}"


def new_overlay(
    world: str,
    rev: str,
    date: str,
    seat: str,
    overlay_id: str,
    out: str | Path | None = None,
    *,
    force: bool = False,
) -> Path:
    """Scaffold a valid overlay pinned to the current fingerprint of (world, rev, date, seat).

    Writes `out` (default `overlays/<world id>/<id>.yaml` under the current folder) and returns it.
    """
    package = load_world(world)
    day = parse_date(date)
    target = Path(out) if out else Path("overlays") / package.id / f"{overlay_id}.yaml"
    if target.exists() and not force:
        raise OutputExists(f"{target} exists; pass --force to replace it")
    with tempfile.TemporaryDirectory(prefix="worldkit-overlay-new-") as scratch:
        result = materialize(package, rev, day, seat, Path(scratch) / "projection")
        bundle = json.loads((result.out / "tools.json").read_text(encoding="utf-8"))
        first_in_channel = {log.stem: str(json.loads(log.read_text(encoding="utf-8").splitlines()[0])["id"])
                            for log in sorted((result.out / "chat").glob("*.jsonl"))}  # fmt: skip
    surfaces = [server["surface"] for server in bundle["servers"]]
    entries = result.manifest.files
    first = next((e for s in _EVIDENCE_ORDER for e in entries if e.surface == s), None)
    if first is None:
        ev_surface, ev_locator = "files", "files/TODO"
    elif first.surface == "files":
        ev_surface, ev_locator = "files", first.path
    elif first.surface == "records":
        ev_surface, ev_locator = "records", first.source
    elif first.surface == "mail":
        ev_surface, ev_locator = "mail", first.source
    else:
        ev_surface, ev_locator = "chat", first.source
    read_action = _read_action(ev_surface, ev_locator, first_in_channel)
    world_ref = str(world)
    if (Path(world_ref) / "world.yaml").is_file():
        # A world given by path is recorded relative to the overlay file, as `overlay_world` reads it.
        world_ref = Path(os.path.relpath(Path(world_ref).resolve(), target.parent.resolve())).as_posix()
    text = _SCAFFOLD.format(
        path=target.as_posix(), id=_scalar(overlay_id), title=_scalar(f"TODO: title of {overlay_id}"),
        world=_scalar(world_ref), rev=_scalar(rev), date=day.isoformat(), seat=_scalar(seat),
        surfaces="[" + ", ".join(surfaces) + "]", ev_surface=ev_surface, ev_locator=_scalar(ev_locator),
        read_action=read_action, fingerprint=result.fingerprint,
    )  # fmt: skip
    parse_overlay(yaml.safe_load(text), target)  # the scaffold must always be a valid overlay
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return target


# --- pin --------------------------------------------------------------------------------------

_PIN_LINE = re.compile(r"^(pinned_fingerprint:[ \t]*)(['\"]?)([0-9a-fA-F]*)\2([ \t]*(#.*)?)$", re.MULTILINE)


@dataclass(frozen=True)
class PinResult:
    path: Path
    previous: str
    fingerprint: str

    @property
    def changed(self) -> bool:
        return self.previous != self.fingerprint


def pin_overlay(path: str | Path) -> PinResult:
    """Rewrite the overlay file's `pinned_fingerprint` line to the current projection fingerprint
    (the rest of the file, comments included, is left byte for byte)."""
    model = load_overlay(path)
    file = Path(model.source)
    world = overlay_world(model)
    with tempfile.TemporaryDirectory(prefix="worldkit-overlay-pin-") as scratch:
        fingerprint = materialize(world, model.rev, model.date, model.seat, Path(scratch) / "p").fingerprint
    text = file.read_text(encoding="utf-8")
    matches = list(_PIN_LINE.finditer(text))
    if len(matches) != 1:
        raise InvalidOverlay(
            "expected exactly one top-level `pinned_fingerprint: <hex>` line to rewrite; edit the file by hand",
            file=file,
            field="pinned_fingerprint",
        )
    found = matches[0]
    quote = found.group(2)
    updated = text[: found.start()] + found.group(1) + quote + fingerprint + quote + found.group(4) + text[found.end() :]
    if updated != text:
        file.write_text(updated, encoding="utf-8")
    return PinResult(file, model.pinned_fingerprint, fingerprint)


# --- freeze -----------------------------------------------------------------------------------


class ConditionDigests(Model):

    fingerprint: str
    """Candidate projection fingerprint under this condition."""
    candidate_sha256: str
    """Candidate package digest."""
    verifier_sha256: str
    """Verifier package digest."""


class OverlayLock(Model):
    """`manifests/<world>/overlays/<id>.json`: what a re-application must reproduce."""


    schema_version: Literal[1] = 1
    """Format version."""
    overlay: str
    """Overlay id."""
    world: str
    """World id."""
    rev: str
    """Revision."""
    date: str
    """Date (ISO)."""
    seat: str
    """Seat id."""
    overlay_sha256: str
    """Digest of the overlay's canonical content and reference files."""
    fingerprint: str
    """The seat's full projection fingerprint (equals the overlay's pin)."""
    conditions: dict[str, ConditionDigests]
    """`full` and `curated:<name>` → digests."""


def lock_path(manifests: Path, world_id: str, overlay_id: str) -> Path:
    return manifests / world_id / "overlays" / f"{overlay_id}.json"


@dataclass(frozen=True)
class FreezeResult:
    path: Path
    lock: OverlayLock


def freeze_overlay(
    overlay: Overlay | str | Path,
    manifests: str | Path = "manifests",
    *,
    check: Callable[[Overlay], CheckReport] = check_overlay,
) -> FreezeResult:
    """Check the overlay (errors refuse), apply it under every condition, write its lock file.

    `check` is the overlay check to refuse on (the CLI passes the one that also labels the
    reference solution's evidence access, which lives above this layer)."""
    model = overlay if isinstance(overlay, Overlay) else load_overlay(overlay)
    report = check(model)
    if not report.ok:
        lines = "\n".join("  " + p.line() for p in report.errors)
        raise OverlayProblems(
            f"overlay {model.id} has {len(report.errors)} problem(s); fix them before freezing:\n{lines}"
        )
    conditions: dict[str, ConditionDigests] = {}
    with tempfile.TemporaryDirectory(prefix="worldkit-overlay-freeze-") as scratch:
        for index, condition in enumerate(model.conditions):
            applied = apply_overlay(model, Path(scratch) / f"c{index}", condition, check=False)  # checked above
            conditions[condition] = ConditionDigests(
                fingerprint=applied.fingerprint,
                candidate_sha256=applied.candidate_sha256,
                verifier_sha256=applied.verifier_sha256,
            )
            summary = applied.summary_model
    lock = OverlayLock(
        overlay=model.id, world=summary.world, rev=summary.rev, date=summary.date, seat=summary.seat,
        overlay_sha256=overlay_digest(model), fingerprint=summary.source_fingerprint, conditions=conditions,
    )  # fmt: skip
    path = lock_path(Path(manifests), summary.world, model.id)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pretty_json(lock.model_dump(mode="json")).encode("utf-8"))
    return FreezeResult(path, lock)


def read_lock(path: Path) -> OverlayLock:
    """Read a frozen overlay lock (for `verify`)."""
    return OverlayLock.model_validate_json(path.read_bytes())

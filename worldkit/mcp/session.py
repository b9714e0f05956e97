"""Stage what a seat's server serves, and open the run's event log: the library behind `worldkit serve`.

`stage_seat` produces the served directory — a fresh projection of (world, rev, date, seat), an
existing projection, or a candidate package from a task overlay — with its tool configuration
and workspace. `open_run` opens the store and a new run's event log. The CLI only parses and calls
these two, then `build_seat_server`.

This module must never serve anything itself and never reuse a run id.
"""

from __future__ import annotations

import datetime as dt
import shutil
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from worldkit.errors import InvalidOverlay, UsageError
from worldkit.materialize import materialize
from worldkit.mcp.seat import default_tool_config
from worldkit.overlay.toolconfig import ToolConfig
from worldkit.store import ANCHOR_FILENAME, EventLog, Store

__all__ = ["StagedSeat", "default_anchor", "new_run_id", "open_run", "run_meta", "stage_seat"]


@dataclass
class StagedSeat:
    """A served directory: the projection, its tool configuration and the workspace (if a task gave one)."""

    projection: Path
    config: ToolConfig
    workspace: Path | None
    root: Path
    """The directory holding everything staged (removed by `close` if it was temporary)."""
    temporary: bool = field(default=False)
    trusted_staged: bool = field(default=False)
    """The served folder is not a frozen one and was served only because of `--trust-staged`."""
    frozen_check: Any = field(default=None)
    """The `frozen-workspace` CheckResult of what is served."""

    def close(self) -> None:
        if self.temporary:
            shutil.rmtree(self.root, ignore_errors=True)


def stage_seat(
    *,
    world: str | None = None,
    rev: str | None = None,
    date: str | None = None,
    seat: str | None = None,
    projection: Path | None = None,
    overlay: str | None = None,
    condition: str | None = None,
    out: Path | None = None,
    trust_staged: bool = False,
) -> StagedSeat:
    """Materialize (or reuse) the directory a seat's server serves.

    - `projection`: serve an existing projection (any of world/rev/date/seat given must match it);
    - `overlay`: apply the task overlay (under `condition`) into `package/` and serve its candidate
      package, with a copy of its workspace in `workspace/` (the package stays the pre-task state);
    - otherwise materialize (world, rev, date, seat).
    Without `out`, a temporary directory is used and removed by `StagedSeat.close`.

    Whatever is served is first checked against its own manifest and against what was frozen
    (`worldkit.frozen.staged`): a folder that is not a frozen one is refused (`CheckFailed`)
    unless `trust_staged`, which is then recorded on the returned `StagedSeat`.
    """
    if projection is not None:
        if overlay is not None:
            raise UsageError("--projection and --overlay exclude each other: an overlay stages its own projection")
        projection = Path(projection).absolute()
        config = default_tool_config(projection)
        _require_match(config, world, rev, date, seat, f"projection {projection}")
        staged = StagedSeat(projection=projection, config=config, workspace=None, root=projection)
        return _verified(staged, projection, "projection", trust_staged, world=world)
    temporary = out is None
    root = Path(tempfile.mkdtemp(prefix="worldkit-serve-")) if out is None else Path(out).absolute()
    try:
        if overlay is not None:
            staged, applied = _stage_overlay(overlay, condition, root)
            _require_match(staged.config, world, rev, date, seat, f"overlay {overlay}")
            staged.temporary = temporary
            from worldkit.overlay.load import overlay_world

            derived = applied.summary_model.model_dump(mode="json")
            return _verified(staged, applied.out, "staged package", trust_staged, derived=derived,
                             world=overlay_world(applied.overlay))
        named = (("--world", world), ("--rev", rev), ("--date", date), ("--seat", seat))
        missing = [name for name, value in named if not value]
        if missing:
            raise UsageError(
                f"missing {', '.join(missing)}: name the world, revision, date and seat to serve (or --projection DIR)"
            )
        assert world and rev and date and seat
        target = root / "projection"
        built = materialize(world, rev, date, seat, target)
        staged = StagedSeat(
            projection=target, config=default_tool_config(target), workspace=None, root=root, temporary=temporary
        )
        return _verified(staged, target, "projection", trust_staged, world=world, derived={"manifest": built.manifest})
    except BaseException:
        if temporary:
            shutil.rmtree(root, ignore_errors=True)
        raise


def _verified(staged: StagedSeat, folder: Path, what: str, trust_staged: bool, **options: Any) -> StagedSeat:
    """Refuse a served folder that fails its own manifest or is not a frozen one (unless trusted)."""
    from worldkit.frozen.staged import require_staged

    if options.get("world") is None:
        options.pop("world", None)
    staged.frozen_check = require_staged(folder, what, trust_staged=trust_staged, **options)
    staged.trusted_staged = bool(staged.frozen_check.counts.get("trusted_staged"))
    return staged


def _stage_overlay(overlay: str, condition: str | None, root: Path) -> tuple[StagedSeat, Any]:
    from worldkit.overlay import apply_overlay

    package = apply_overlay(overlay, root / "package", condition or "full")
    candidate = package.candidate
    config_file = candidate / "tool-config.json"
    if not config_file.is_file():
        raise InvalidOverlay("the candidate package has no tool-config.json; re-apply the overlay", file=candidate)
    config = ToolConfig.model_validate_json(config_file.read_bytes())
    # The server works on a copy: the staged package stays the pre-task state that replay starts from.
    workspace = root / "workspace"
    if (candidate / "workspace").is_dir():
        shutil.copytree(candidate / "workspace", workspace)
    else:
        workspace.mkdir()
    return StagedSeat(projection=candidate / "projection", config=config, workspace=workspace, root=root), package


def _require_match(
    config: ToolConfig, world: str | None, rev: str | None, date: str | None, seat: str | None, what: str
) -> None:
    """Options given beside a projection or overlay must agree with it (a world may be named by path)."""
    given_and_actual = {"world": (world, config.world), "rev": (rev, config.rev), "date": (date, config.date),
                        "seat": (seat, config.seat)}
    for name, (given, actual) in given_and_actual.items():
        if given is not None and given != actual and not (name == "world" and _names_world(given, actual)):
            raise UsageError(
                f"--{name} {given} does not match {what}, which is for {name} {actual}; drop --{name} or fix it"
            )


def _names_world(given: str, world_id: str) -> bool:
    """Whether `given` (a name or a path) names the world `world_id`."""
    from worldkit.errors import WorldkitError
    from worldkit.world.load import load_world

    if Path(given).name == world_id:
        return True
    try:
        return load_world(given).id == world_id
    except WorldkitError:
        return False


def new_run_id(seat: str) -> str:
    """A fresh run id: the seat, the UTC time and a random suffix."""
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return f"{seat}-{stamp}-{uuid.uuid4().hex[:8]}"


def open_run(
    store: Store, run_id: str, seat: str, *, anchor: Path | None = None, staged: StagedSeat | None = None
) -> EventLog:
    """A new run's event log, claimed for this server alone; `anchor` receives the log's head.

    The run id is claimed atomically (the store's unique key): a run id that exists — another
    server using it now, or an earlier run — is refused with `RunIdTaken` (exit 2). The run's
    metadata records what was served (`run_meta`): whether it was a frozen package or one served
    only because of `--trust-staged`.
    """
    return EventLog(store, run_id, seat, claim=True, anchor=anchor, meta=run_meta(staged) if staged else None)


def run_meta(staged: StagedSeat) -> dict[str, Any]:
    """The run metadata of a served folder: `trusted_staged` and the frozen check's verdict."""
    return staged_meta("worldkit.seat", staged.frozen_check, trusted=bool(staged.trusted_staged))


def staged_meta(server: str, check: Any, *, trusted: bool, **extra: Any) -> dict[str, Any]:
    """A run's metadata: which server logged it, whether its staged package was trusted without a
    frozen match (`--trust-staged`), the frozen check's verdict, and `extra` fields."""
    meta: dict[str, Any] = {"server": server, "trusted_staged": trusted, **extra}
    if check is not None:
        counts = getattr(check, "counts", None) or {}
        meta["frozen_check"] = {
            "status": str(getattr(check, "status", "") or ""),
            "reason": str(getattr(check, "reason", "") or "")[:500],
            "reference": str(counts.get("reference", "") or ""),
        }
    return meta


def default_anchor(run_id: str, out: Path | None) -> Path:
    """Where a served run's log anchor goes: `<out>/log-anchor.json`, else `.worldkit/anchors/`."""
    if out is not None:
        return Path(out).absolute() / ANCHOR_FILENAME
    return Path(".worldkit", "anchors", f"{run_id}.json").absolute()

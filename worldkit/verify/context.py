"""What every check reads: the world, its frozen manifests, rebuilds and staged tasks, computed once.

The context never writes outside its scratch folder. Anything a check needs that another check
also needs (a rebuilt projection, a staged overlay) is built on first use and cached here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from worldkit.errors import WorldkitError
from worldkit.frozen.index import FrozenIndex, FrozenProjection, read_index
from worldkit.materialize.manifest import Manifest, read_manifest
from worldkit.verify.build import Built, build_projection
from worldkit.verify.result import ComponentMissing
from worldkit.verify.tasks import stage_tasks
from worldkit.world.load import WorldPackage

Key = tuple[str, str, str]
"""(rev, date, seat)."""

__all__ = ["ComponentMissing", "Key", "VerifyContext"]


@dataclass
class VerifyContext:
    """Inputs and shared caches of one verify run."""

    package: WorldPackage
    """The world under verification."""
    manifests: Path
    """`manifests/<world>/`: the frozen index, projection manifests and overlay freezes."""
    work: Path
    """Scratch folder for rebuilds and staging (removed by the caller)."""
    overlays: Path | None = None
    """Folder of the world's task overlays (None: look in the default place)."""
    repeats: int = 3
    """Rebuilds and per-seat materializations compared for reproducibility."""
    server_factory: Callable[..., Any] | None = None
    """Builds the seat's MCP server over a projection (None: worldkit.mcp.server.build_seat_server)."""
    tamper_staged: Callable[[list[Any]], None] | None = None
    """Called once with every staged task right after staging (seeded violations inject faults here)."""
    staged_from: dict[str, Path] | None = None
    """Applied packages of a byte-identical world and overlays, by task label: copied instead of
    re-applied (the mutation campaign's shortcut; apply is deterministic)."""
    staged_copy: Callable[[Path, Path], Path] | None = None
    """How a package of `staged_from` is copied into the run (None: `copy_tree`). The campaign
    hard-links the files (`worldkit.verify.scratch.link_tree`): byte-, mode- and mtime-identical."""
    store: str | None = None
    """Store URL whose run logs the event-log check verifies (None: that check is skipped)."""
    runs: Path | None = None
    """Folder of run folders whose log anchors (log-anchor.json) the event-log check compares."""
    builder: Callable[[WorldPackage, str, str, str, Path], Built] = build_projection
    """Materializes (package, rev, date, seat) into a scratch folder; injectable for tests."""
    started: dict[str, Any] = field(default_factory=dict, repr=False)
    """Work a check launched ahead of its run (rebuild-repeat's fresh processes), by check id."""
    _builds: dict[Key, Built] = field(default_factory=dict, repr=False)
    _round: list[bool] = field(default_factory=list, repr=False)

    # -- frozen manifests ---------------------------------------------------------------------

    @cached_property
    def index_or_error(self) -> FrozenIndex | str:
        try:
            return read_index(self.manifests)
        except WorldkitError as error:
            return error.message

    @property
    def index(self) -> FrozenIndex | None:
        value = self.index_or_error
        return value if isinstance(value, FrozenIndex) else None

    @cached_property
    def frozen(self) -> dict[Key, Manifest | str]:
        """Every indexed projection: its manifest, or why it could not be read."""
        found: dict[Key, Manifest | str] = {}
        for entry in self.index.projections if self.index else []:
            try:
                found[entry.key] = read_manifest(self.manifests / entry.relpath)
            except WorldkitError as error:
                found[entry.key] = error.message
        return found

    def frozen_entry(self, key: Key) -> FrozenProjection | None:
        return next((p for p in self.index.projections if p.key == key), None) if self.index else None

    @property
    def readable(self) -> dict[Key, Manifest]:
        """Frozen projections whose manifests read cleanly."""
        return {k: m for k, m in self.frozen.items() if isinstance(m, Manifest)}

    @property
    def latest_rev(self) -> str:
        return self.package.revision_names[-1]

    @property
    def dates(self) -> list[str]:
        """Dates with frozen projections, else the world's default date."""
        if self.index and self.index.dates:
            return self.index.dates
        default = self.package.spec.default_date
        return [default.isoformat()] if default else []

    # -- rebuilds -----------------------------------------------------------------------------

    def rebuild(self, key: Key) -> Built:
        """The clean rebuild of (rev, date, seat), built once per run."""
        built = self._builds.get(key)
        if built is None:
            built = self._builds[key] = self.builder(self.package, *key, self.work)
        return built

    def fresh_build(self, rev: str, date: str, seat: str) -> Built:
        """A new materialization every call (reproducibility checks), rendered anew; the caller discards it.

        Inside `repeat_round()` the round's builds share the round's own memo (each source of the
        round is rendered anew, once); elsewhere every file is rendered anew."""
        from worldkit.materialize.memo import fresh_renders

        if self._round:
            return self.builder(self.package, rev, date, seat, self.work)
        with fresh_renders():
            return self.builder(self.package, rev, date, seat, self.work)

    @contextmanager
    def repeat_round(self) -> Iterator[None]:
        """One repeat of a reproducibility check: its fresh builds render every source anew, once,
        sharing nothing with the rest of the run (a memo of the round's own)."""
        from worldkit.materialize.memo import new_memo

        with new_memo():
            self._round.append(True)
            try:
                yield
            finally:
                self._round.pop()

    # -- tasks --------------------------------------------------------------------------------

    @cached_property
    def tasks_or_missing(self) -> list[Any] | ComponentMissing:
        try:
            return stage_tasks(self)
        except ComponentMissing as missing:
            return missing

    @property
    def tasks(self) -> list[Any]:
        value = self.tasks_or_missing
        if isinstance(value, ComponentMissing):
            raise value
        return value

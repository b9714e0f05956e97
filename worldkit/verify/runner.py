"""Run the registered checks over a world and its frozen manifests; the library behind `worldkit verify`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from worldkit.errors import ExitCode
from worldkit.verify.checks import run_checks
from worldkit.verify.schedule import Progress, run_scheduled
from worldkit.verify.context import VerifyContext
from worldkit.frozen.index import default_manifest_dir
from worldkit.check_result import CheckResult
from worldkit.verify.scratch import scratch_dir
from worldkit.world.load import WorldPackage, load_world


@contextmanager
def open_context(
    world: str | Path | WorldPackage,
    *,
    manifests: Path | None = None,
    overlays: Path | None = None,
    repeats: int = 3,
    scratch: Path | None = None,
    server_factory: Callable[..., Any] | None = None,
    tamper_staged: Callable[[list[Any]], None] | None = None,
    builder: Callable[..., Any] | None = None,
    store: str | None = None,
    runs: Path | None = None,
) -> Iterator[VerifyContext]:
    """A verify context over `world` whose scratch folder is removed on exit."""
    package = world if isinstance(world, WorldPackage) else load_world(world)
    with scratch_dir(scratch) as work:
        yield VerifyContext(
            package=package,
            manifests=Path(manifests) if manifests is not None else default_manifest_dir(package),
            work=work,
            overlays=Path(overlays) if overlays is not None else None,
            repeats=repeats,
            server_factory=server_factory,
            tamper_staged=tamper_staged,
            store=store,
            runs=runs,
            **({"builder": builder} if builder is not None else {}),
        )


@dataclass
class VerifyReport:
    """Everything one `worldkit verify` invocation found."""

    world: str | None
    checks: list[CheckResult] = field(default_factory=list)
    seeded: dict[str, Any] | None = None
    mutations: dict[str, Any] | None = None

    @property
    def failed(self) -> list[CheckResult]:
        return [c for c in self.checks if c.status == "fail"]

    @property
    def errored(self) -> list[CheckResult]:
        return [c for c in self.checks if c.status == "error"]

    @property
    def exit_code(self) -> ExitCode:
        """1 when a check failed or an injected fault went undetected; 4 when a check could not run."""
        if self.failed:
            return ExitCode.CHECK_FAILED
        if self.seeded is not None and self.seeded["detected"] != self.seeded["attempted"]:
            return ExitCode.CHECK_FAILED
        if self.mutations is not None and self.mutations["undetected_projection_changing"]:
            return ExitCode.CHECK_FAILED
        if self.errored:
            return ExitCode.INTERNAL
        return ExitCode.OK

    @property
    def status(self) -> str:
        return {ExitCode.OK: "pass", ExitCode.CHECK_FAILED: "fail"}.get(self.exit_code, "error")

    def as_json(self) -> dict[str, Any]:
        from worldkit.verify.report import validation_record

        body: dict[str, Any] = {"status": self.status, "checks": [c.as_json() for c in self.checks]}
        if self.world is not None:
            body["world"] = self.world
        if any(c.id not in ("staged-workspace", "frozen-workspace") for c in self.checks):
            body["validation"] = validation_record(self)
        if self.seeded is not None:
            body["seeded"] = self.seeded
        if self.mutations is not None:
            body["mutations"] = self.mutations
        return body


def verify_world(
    world: str | Path | WorldPackage,
    *,
    manifests: Path | None = None,
    overlays: Path | None = None,
    repeats: int = 3,
    only: Iterable[str] | None = None,
    exclude_tags: Iterable[str] = (),
    scratch: Path | None = None,
    server_factory: Callable[..., Any] | None = None,
    store: str | None = None,
    runs: Path | None = None,
    jobs: int | None = None,
    progress: Progress | None = None,
) -> VerifyReport:
    """Run every check (or `only` those) on a world against its frozen manifests.

    Shared work (rebuilds, staged tasks) is done once, and independent checks run in `jobs`
    forked processes (None: one per core; 1: in this process, in report order — the results
    are the same either way). `progress(label, done, total)` is told what is happening.
    """
    with open_context(
        world, manifests=manifests, overlays=overlays, repeats=repeats, scratch=scratch, server_factory=server_factory,
        store=store, runs=runs,
    ) as ctx:
        results = run_scheduled(ctx, only=only, exclude_tags=exclude_tags, jobs=jobs, progress=progress)
        return VerifyReport(world=ctx.package.id, checks=results)

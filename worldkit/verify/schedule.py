"""Schedule verify's checks: shared work once, independent checks in parallel processes.

The checks read one `VerifyContext`; what several of them need (the clean rebuild of every frozen
projection, its scanned tree, the staged tasks) is built once, here, in this process. Checks then
run in forked worker processes, which inherit that work, in three waves: the manifest-only checks
and date-conformance (which makes its own builds) start at once, while the rebuilds happen; the
checks that read only the rebuilds start when those are ready, while the task overlays are staged
from them; the rest start when the staged tasks are ready. Each wave hands its heaviest checks
out first (`_WEIGHT`), so that the two cores finish together; the first wave's workers and
rebuild-repeat's fresh process that reads the office cache run at a lower priority, since
nothing waits for them. rebuild-repeat launches its fresh
process that reads no cache before anything else, and those that read the office cache once the
shared rebuilds have filled it; it is collected here at the end (its last rebuild is this
process's shared one). Results come back in report order and are the same as a sequential run,
which is what `jobs=1` (or a process with other threads running, where forking is unsafe) does."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool

from worldkit._process import default_stop_signals, die_with_parent, freeze_for_forks, thaw_all
from worldkit.check_result import CheckResult
from worldkit.errors import WorldkitError
from worldkit.verify.checks import REGISTRY, Check, check_ids, run_one
from worldkit.verify.context import ComponentMissing, VerifyContext

Progress = Callable[[str, int, int], None]
"""progress(label, checks done, checks in all): what verify is doing now."""

_USES_TASKS = {"access-audit"}
"""Checks below cost 2 that read the staged tasks too."""

_CONTEXT: list[VerifyContext] = []
"""The context a forked worker runs its checks over (set just before forking)."""


def default_jobs() -> int:
    """Worker processes: $WORLDKIT_VERIFY_JOBS, else one per core (at most 4)."""
    wanted = os.environ.get("WORLDKIT_VERIFY_JOBS")
    if wanted:
        return max(1, int(wanted))
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return min(4, cores)


def _can_fork() -> bool:
    import multiprocessing

    # Forking a process with other threads running (an MCP client, an xdist worker's I/O thread)
    # can deadlock the child; such callers get the sequential run.
    return "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1


def selected_checks(only: Iterable[str] | None, exclude_tags: Iterable[str]) -> list[str]:
    wanted = set(only) if only is not None else None
    excluded = set(exclude_tags)
    return [c for c in check_ids() if (wanted is None or c in wanted) and not (REGISTRY[c].tags & excluded)]


_OWN_BUILDS = {"date-conformance"}
"""Checks above cost 0 that read only builds they make themselves (not the shared rebuilds)."""


_WEIGHT = {
    "date-conformance": 6, "seat-repeat": 5, "rubric-discrimination": 5, "tool-surface": 4, "separation": 3,
    "access-audit": 2, "package-integrity": 1, "rubric-sanity": 1, "staged-workspaces": 1,
}  # fmt: skip
"""Relative CPU time of the heavier checks (measured on pharmaco_demo); the rest count 0."""


def weight(check_id: str) -> int:
    """A check's relative CPU time (`_WEIGHT`; 0 for the light ones)."""
    return _WEIGHT.get(check_id, 0)


def heaviest_first(ids: list[str]) -> list[str]:
    return sorted(ids, key=lambda c: -weight(c))


def _uses_tasks(check: type[Check]) -> bool:
    return check.cost >= 2 or check.id in _USES_TASKS


def independent(check: type[Check]) -> bool:
    """Needs neither the shared rebuilds nor the staged tasks: may start before they exist."""
    return check.cost == 0 or check.id in _OWN_BUILDS


def _in_main(check: type[Check]) -> bool:
    """Launches its work (fresh processes) before the rest starts and collects it here, in this process."""
    return bool(getattr(check, "starts_early", False))


def _start(ctx: VerifyContext, ids: list[str], *, first_only: bool = False) -> None:
    """Launch the work of the checks of `ids` that start early (`first_only`: only what reads no
    cache the shared rebuilds fill; see `RebuildRepeat.start`)."""
    for check_id in ids:
        cls = REGISTRY[check_id]
        if _in_main(cls):
            try:
                cls().start(ctx, first_only=first_only)  # type: ignore[attr-defined]
            except Exception:  # noqa: BLE001 - the check's run() starts again and reports the failure
                ctx.started.pop(check_id, None)


def warm(ctx: VerifyContext, ids: list[str], progress: Progress | None = None, done: int = 0, total: int = 0) -> None:
    """Build, once, the shared work the checks `ids` read: rebuilds and their trees, staged tasks."""
    warm_rebuilds(ctx, ids, progress, done, total)
    warm_tasks(ctx, ids, progress, done, total)


def warm_rebuilds(ctx: VerifyContext, ids: list[str], progress: Progress | None = None, done: int = 0,
                  total: int = 0) -> None:
    """Rebuild, once, every frozen projection (and scan its tree) if a check of `ids` reads them."""
    checks = [REGISTRY[c] for c in ids]
    if any(c.cost >= 1 and not independent(c) for c in checks) and ctx.index is not None:
        keys = [k for k in sorted(ctx.readable) if k[0] in ctx.package.revision_names]
        for n, key in enumerate(keys, start=1):
            if progress:
                progress(f"rebuild {'/'.join(key)} ({n}/{len(keys)})", done, total)
            try:
                ctx.rebuild(key).tree()
            except WorldkitError:
                pass  # the checks that need it report it


def warm_tasks(ctx: VerifyContext, ids: list[str], progress: Progress | None = None, done: int = 0,
               total: int = 0) -> None:
    """Stage, once, every task overlay (from the rebuilds) if a check of `ids` reads the staged tasks."""
    if any(_uses_tasks(REGISTRY[c]) for c in ids):
        if progress:
            progress("stage the task overlays", done, total)
        try:
            ctx.tasks_or_missing  # noqa: B018 - cached on the context
        except ComponentMissing:
            pass


def _run_forked(check_id: str) -> CheckResult:
    return run_one(REGISTRY[check_id](), _CONTEXT[0])


def _start_worker() -> None:
    """A check worker's first step: it dies with its parent and when its pool terminates it."""
    die_with_parent()
    default_stop_signals()


def _in_background() -> None:
    """A worker of the first wave: its checks need nothing shared, nothing waits for them."""
    from worldkit.verify.checks.frozen import BACKGROUND_NICE

    _start_worker()
    os.nice(BACKGROUND_NICE)


def _run_here(ctx: VerifyContext, ids: list[str], found: dict[str, CheckResult], progress: Progress | None,
              total: int) -> None:
    """Run, in this process, the checks of `ids` not run yet (they collect work launched by `_start`)."""
    for check_id in ids:
        if check_id not in found:
            found[check_id] = run_one(REGISTRY[check_id](), ctx)
            if progress:
                progress(check_id, len(found), total)


def run_scheduled(
    ctx: VerifyContext,
    *,
    only: Iterable[str] | None = None,
    exclude_tags: Iterable[str] = (),
    jobs: int | None = None,
    progress: Progress | None = None,
) -> list[CheckResult]:
    """Every selected check's result, in report order."""
    ids = selected_checks(only, exclude_tags)
    total = len(ids)
    jobs = default_jobs() if jobs is None else max(1, jobs)
    ctx.index_or_error  # noqa: B018 - read the frozen state once, before any fork
    if ctx.index is not None:
        ctx.frozen  # noqa: B018
    sequential = jobs == 1 or len(ids) < 2 or not _can_fork()
    _start(ctx, ids, first_only=not sequential)
    if sequential:
        results = []
        for n, check_id in enumerate(ids):
            if progress:
                progress(check_id, n, total)
            results.append(run_one(REGISTRY[check_id](), ctx))
        if progress:
            progress("done", total, total)
        return results
    import multiprocessing

    fork = multiprocessing.get_context("fork")
    found: dict[str, CheckResult] = {}
    futures: dict[Future[CheckResult], str] = {}

    def collect(future: Future[CheckResult]) -> None:
        check_id = futures.pop(future)
        try:
            found[check_id] = future.result()
        except BrokenProcessPool as error:
            cls = REGISTRY[check_id]
            found[check_id] = CheckResult(id=check_id, purpose=cls.purpose, status="error",
                                          reason=f"the worker running this check died ({error}); run with jobs=1")
        if progress:
            progress(check_id, len(found), total)

    def drain(label: str, _done: int, _total: int) -> None:
        """Collect finished checks (in this thread), then say what the warm-up is doing."""
        for future in [f for f in futures if f.done()]:
            collect(future)
        if progress:
            progress(label, len(found), total)

    early = [c for c in ids if independent(REGISTRY[c])]
    here = [c for c in ids if c not in early and _in_main(REGISTRY[c])]
    rest = [c for c in ids if c not in early and c not in here]
    middle = [c for c in rest if not _uses_tasks(REGISTRY[c])]
    late = [c for c in rest if c not in middle]
    _CONTEXT[:] = [ctx]
    pools: list[ProcessPoolExecutor] = []

    def wave(checks: list[str], initializer: Callable[[], None] = _start_worker) -> None:
        """Fork workers that inherit everything built so far, and hand them `checks`, heaviest first."""
        if not checks:
            return
        # What the workers inherit is read, not freed: out of the collector's sight it is not
        # walked (and so not copied page by page into every worker) by each worker's collections.
        freeze_for_forks()
        pool = ProcessPoolExecutor(max(1, min(jobs, len(checks))), mp_context=fork, initializer=initializer)
        pools.append(pool)
        for check_id in heaviest_first(checks):
            futures[pool.submit(_run_forked, check_id)] = check_id

    try:
        wave(early, _in_background)
        warm_rebuilds(ctx, rest + here, drain, len(found), total)
        _start(ctx, ids)  # the fresh rebuilds that read the office cache the shared rebuilds just filled
        wave(middle)
        warm_tasks(ctx, rest + here, drain, len(found), total)
        wave(late)
        _run_here(ctx, here, found, progress, total)
        while futures:
            finished, _ = wait(list(futures), timeout=0.5, return_when=FIRST_COMPLETED)
            for future in finished:
                collect(future)
            if not finished and progress:
                progress(f"waiting for {', '.join(sorted(futures.values()))}", len(found), total)
    finally:
        for pool in reversed(pools):
            pool.shutdown(wait=True, cancel_futures=True)
        _CONTEXT.clear()
        thaw_all()
    return [found[c] for c in ids]

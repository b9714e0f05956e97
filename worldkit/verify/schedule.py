"""Schedule verify's checks: shared work once, independent checks in parallel processes.

The checks read one `VerifyContext`; what several of them need (the clean rebuild of every frozen
projection, its scanned tree, the staged tasks) is built once, here, in this process. Checks then
run in forked worker processes, which inherit that work: the reproducibility checks (which need
nothing shared) and the manifest-only checks start at once, while the rebuilds and staging happen;
the rest start when those are ready. Results come back in report order and are the same as a
sequential run, which is what `jobs=1` (or a process with other threads running, where forking is
unsafe) does.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool

from worldkit.check_result import CheckResult
from worldkit.errors import WorldkitError
from worldkit.verify.checks import REGISTRY, REPEAT, Check, check_ids, run_one
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


def _independent(check: type[Check]) -> bool:
    """Needs neither the shared rebuilds nor the staged tasks: may start before they exist."""
    return check.cost == 0 or REPEAT in check.tags


def warm(ctx: VerifyContext, ids: list[str], progress: Progress | None = None, done: int = 0, total: int = 0) -> None:
    """Build, once, the shared work the checks `ids` read: rebuilds and their trees, staged tasks."""
    checks = [REGISTRY[c] for c in ids]
    if any(c.cost >= 1 and not _independent(c) for c in checks) and ctx.index is not None:
        keys = [k for k in sorted(ctx.readable) if k[0] in ctx.package.revision_names]
        for n, key in enumerate(keys, start=1):
            if progress:
                progress(f"rebuild {'/'.join(key)} ({n}/{len(keys)})", done, total)
            try:
                ctx.rebuild(key).tree()
            except WorldkitError:
                pass  # the checks that need it report it
    if any(c.cost >= 2 or c.id in _USES_TASKS for c in checks):
        if progress:
            progress("stage the task overlays", done, total)
        try:
            ctx.tasks_or_missing  # noqa: B018 - cached on the context
        except ComponentMissing:
            pass


def _run_forked(check_id: str) -> CheckResult:
    return run_one(REGISTRY[check_id](), _CONTEXT[0])


def _die_with_parent() -> None:
    from worldkit.materialize.write import _die_with_parent as die

    die()


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
    if jobs == 1 or len(ids) < 2 or not _can_fork():
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

    early = [c for c in ids if _independent(REGISTRY[c])]
    late = [c for c in ids if c not in early]
    _CONTEXT[:] = [ctx]
    try:
        with ProcessPoolExecutor(max(1, min(jobs, len(early))), mp_context=fork, initializer=_die_with_parent) as first:
            for check_id in early:
                futures[first.submit(_run_forked, check_id)] = check_id
            warm(ctx, late, drain, len(found), total)
            if late:
                with ProcessPoolExecutor(min(jobs, len(late)), mp_context=fork, initializer=_die_with_parent) as second:
                    for check_id in late:
                        futures[second.submit(_run_forked, check_id)] = check_id
                    while futures:
                        collect(next(iter(as_completed(list(futures)))))
            while futures:
                collect(next(iter(as_completed(list(futures)))))
    finally:
        _CONTEXT.clear()
    return [found[c] for c in ids]

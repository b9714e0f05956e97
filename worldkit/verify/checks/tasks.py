"""Checks over staged task overlays: identity, staging, package integrity, separation, evidence."""

from __future__ import annotations

import json
from collections import defaultdict

from worldkit.canon import sha256_bytes
from worldkit.check_result import CheckResult, Item
from worldkit.errors import WorldkitError
from worldkit.frozen.staged import verify_frozen
from worldkit.frozen.workspace import verify_workspace
from worldkit.materialize.manifest import MANIFEST_NAME, Manifest, diff_tree, manifest_bytes, scan_tree
from worldkit.materialize.scan import read_regular, scan
from worldkit.verify.checks import BaseCheck, register
from worldkit.verify.context import VerifyContext
from worldkit.verify.tasks import StagedTask


def _task_item(kind: str, task: StagedTask, **fields: str | None) -> Item:
    return Item(kind=kind, rev=task.rev or None, date=task.date or None, seat=task.seat or None,
                where=task.label, **fields)


def _staging_failures(tasks: list[StagedTask]) -> list[Item]:
    """Overlays that could not be applied (reported once, by staged-workspaces; other checks skip them)."""
    return [_task_item("not-staged", t, detail=t.error) for t in tasks if t.out is None]


@register
class TaskPairsIdentical(BaseCheck):
    id = "task-pairs-identical"
    cost = 2
    purpose = "Tasks on the same (rev, date, seat) start from byte-identical projections (same fingerprint)."
    fix = "An overlay changed its projection: overlays may only add a request, workspace and verifier material; re-apply from the frozen world."

    def run(self, ctx: VerifyContext) -> CheckResult:
        groups: dict[tuple[str, str, str], list[StagedTask]] = defaultdict(list)
        for task in ctx.tasks:
            if task.out is not None and not task.curated:
                groups[task.key].append(task)
        pairs = {k: v for k, v in groups.items() if len(v) > 1}
        if not pairs:
            return self.skip("no two task overlays share a (rev, date, seat)", tasks=len(groups))
        items: list[Item] = []
        identical = 0
        for key, tasks in sorted(pairs.items()):
            first = tasks[0]
            first_tree = scan_tree(first.projection_root)
            same = True
            for other in tasks[1:]:
                if other.summary.get("fingerprint") != first.summary.get("fingerprint"):
                    same = False
                    items.append(_task_item("fingerprint-differs", other, expected=first.summary.get("fingerprint"),
                                            actual=other.summary.get("fingerprint"), detail=f"vs {first.label}"))
                tree = scan_tree(other.projection_root)
                for path in sorted(set(tree) | set(first_tree)):
                    if tree.get(path) != first_tree.get(path):
                        same = False
                        items.append(_task_item("bytes-differ", other, path=path, expected=first_tree.get(path),
                                                actual=tree.get(path), detail=f"vs {first.label}"))
            identical += same
        return self.outcome(items, pairs_tested=len(pairs), pairs_identical=identical,
                            pairs=[sorted(t.overlay.id for t in v) for _, v in sorted(pairs.items())])


@register
class StagedWorkspaces(BaseCheck):
    id = "staged-workspaces"
    cost = 2
    purpose = "Every staged task's candidate projection equals the direct, frozen seat projection (curated: a byte-identical subset)."
    fix = "Re-stage the task from the frozen world; if the world changed on purpose, re-freeze and re-pin the overlay (`worldkit overlay pin`)."

    def run(self, ctx: VerifyContext) -> CheckResult:
        tasks = ctx.tasks
        items = _staging_failures(tasks)
        tested = identical = 0
        for task in tasks:
            if task.out is None:
                continue
            tested += 1
            before = len(items)
            manifest = task.projection_manifest
            if manifest is None:
                items.append(_task_item("unreadable", task, path="candidate/projection/manifest.json"))
                continue
            try:
                direct = ctx.rebuild(task.key)
            except WorldkitError as error:
                items.append(_task_item("unbuildable", task, detail=error.message))
                continue
            frozen = ctx.readable.get(task.key)
            source = task.summary.get("source_fingerprint")
            pins = [("direct materialization", direct.manifest.fingerprint), ("overlay pin", task.overlay.pinned_fingerprint)]
            if frozen is not None:
                pins.append(("frozen manifest", frozen.fingerprint))
            for what, value in pins:
                if source != value:
                    items.append(_task_item("fingerprint-differs", task, expected=value, actual=source,
                                            detail=f"the staged projection's source is not the {what}"))
            reference = {e.path: e for e in direct.manifest.files}
            if task.curated:
                for entry in manifest.files:
                    if reference.get(entry.path) != entry:
                        items.append(_task_item("not-a-subset", task, path=entry.path, expected=getattr(reference.get(entry.path), "sha256", None),
                                                actual=entry.sha256))
            elif manifest.fingerprint != direct.manifest.fingerprint:
                items.append(_task_item("fingerprint-differs", task, expected=direct.manifest.fingerprint,
                                        actual=manifest.fingerprint, detail="candidate projection vs direct materialization"))
            diff = diff_tree(task.projection_root, manifest.files if task.curated else direct.manifest.files)
            prefix = "candidate/projection/"
            items += [_task_item("missing", task, path=prefix + p) for p in diff.missing]
            items += [_task_item("changed", task, path=prefix + p, expected=e, actual=a) for p, e, a in diff.changed]
            items += [_task_item("unexpected", task, path=prefix + p) for p in diff.unexpected]
            items += _manifest_bytes(task, manifest, direct.manifest)
            identical += len(items) == before
        return self.outcome(items, staged_tasks_tested=tested, staged_tasks_identical=identical)


def _manifest_bytes(task: StagedTask, staged: Manifest, direct: Manifest) -> list[Item]:
    """The staged projection manifest is, byte for byte, the direct one (or its curated subset).

    Its fingerprint leaves out the rendering-environment record, so compare whole bytes: the
    inputs, environment and tool bundle of the direct materialization with the staged entries.
    """
    expected = staged.model_copy(update={
        "inputs": direct.inputs, "environment": direct.environment, "tool_bundle_sha256": direct.tool_bundle_sha256,
    })
    # `staged` was read (`read_manifest`), so its fingerprint is its entries' and inputs': with the
    # direct inputs and tool bundle the same, it is the fingerprint expected (the environment is not in it).
    same = staged.inputs == direct.inputs and staged.tool_bundle_sha256 == direct.tool_bundle_sha256
    expected = expected.model_copy(update={"fingerprint": staged.fingerprint if same else expected.expected_fingerprint()})
    path = task.projection_root / MANIFEST_NAME
    want = manifest_bytes(expected)
    have = read_regular(path) or b""
    if have == want:
        return []
    return [_task_item("changed", task, path=f"candidate/projection/{MANIFEST_NAME}", expected=sha256_bytes(want),
                       actual=sha256_bytes(have), detail="differs from the direct materialization's manifest")]


@register
class PackageIntegrity(BaseCheck):
    id = "package-integrity"
    cost = 2
    purpose = "Each staged candidate and verifier package holds exactly what its manifest lists, pinned to the overlay's inputs."
    fix = "A staged package was altered after apply (or apply is broken): re-apply the overlay and find what touched the package."

    def run(self, ctx: VerifyContext) -> CheckResult:
        tasks = ctx.tasks
        items: list[Item] = []
        checked = 0
        for task in tasks:
            if task.out is None:
                continue
            checked += 1
            for side in ("candidate", "verifier"):
                outcome = verify_workspace(task.out / side)
                for item in outcome.items:
                    items.append(item.model_copy(update={"path": f"{side}/{item.path}", "where": task.label,
                                                         "rev": task.rev, "date": task.date, "seat": task.seat}))
            # The package on disk against what was frozen (a consistently re-digested package agrees with itself).
            frozen = verify_frozen(task.out, manifests=ctx.manifests, world=ctx.package, derived=task.summary)
            items += [i.model_copy(update={"where": task.label}) for i in frozen.items]
            items += _pins(task, ctx)
        return self.outcome(items, packages=checked * 2)


@register
class OverlayLocks(BaseCheck):
    id = "overlay-locks"
    cost = 2
    purpose = "Every overlay is frozen, and re-applying it under each condition reproduces its frozen digests."
    fix = "Freeze the overlay (`worldkit overlay freeze OVERLAY`) after `overlay check` passes; if it was frozen, find what changed since."

    def run(self, ctx: VerifyContext) -> CheckResult:
        from worldkit.overlay.author import lock_path, read_lock

        tasks = ctx.tasks
        items: list[Item] = []
        folder = ctx.manifests.parent
        compared = 0
        for task in tasks:
            if task.out is None:
                continue
            path = lock_path(folder, ctx.package.id, task.overlay.id)
            where = path.relative_to(ctx.manifests).as_posix() if path.is_relative_to(ctx.manifests) else str(path)
            try:
                lock = read_lock(path)
            except FileNotFoundError:
                if not task.curated:
                    items.append(_task_item("unfrozen", task, path=where, detail="no frozen lock for this overlay"))
                continue
            except ValueError as error:
                items.append(_task_item("unreadable", task, path=where, detail=str(error).splitlines()[0]))
                continue
            compared += 1
            frozen = lock.conditions.get(task.condition)
            if frozen is None:
                items.append(_task_item("unfrozen", task, path=where, detail=f"condition {task.condition} is not in the lock"))
                continue
            actual = task.summary
            pairs = [("overlay_sha256", lock.overlay_sha256), ("source_fingerprint", lock.fingerprint),
                     ("fingerprint", frozen.fingerprint), ("candidate_sha256", frozen.candidate_sha256),
                     ("verifier_sha256", frozen.verifier_sha256)]
            for name, expected in pairs:
                if actual.get(name) != expected:
                    items.append(_task_item("digest-mismatch", task, path=f"{where}:{name}", expected=expected,
                                            actual=actual.get(name)))
        return self.outcome(items, conditions_compared=compared)


def _pins(task: StagedTask, ctx: VerifyContext) -> list[Item]:
    """Candidate manifest, tool config and package summary name the overlay's inputs."""
    items: list[Item] = []
    want = {"world": ctx.package.id, "rev": task.rev, "date": task.date, "seat": task.seat}
    sources = {"candidate/manifest.json": task.candidate / MANIFEST_NAME, "candidate/tool-config.json": task.candidate / "tool-config.json",
               "package.json": task.out / "package.json" if task.out else None}
    for label, path in sources.items():
        try:
            body = json.loads(read_regular(path) or b"") if path else {}
        except (OSError, ValueError):
            items.append(_task_item("unreadable", task, path=label))
            continue
        for name, value in want.items():
            if body.get(name) != value:
                kind = "revision-mismatch" if name == "rev" else "pin-mismatch"
                items.append(_task_item(kind, task, path=f"{label}:{name}", expected=value, actual=str(body.get(name))))
    manifest = task.projection_manifest
    frozen_rev = ctx.index.revision(task.rev) if ctx.index else None
    if manifest is not None:
        inputs = manifest.inputs
        for name, expected, actual in (
            ("rev", task.rev, inputs.rev),
            ("revision_digest", frozen_rev.digest if frozen_rev else None, inputs.revision_digest),
            ("date", task.date, inputs.date),
            ("seat", task.seat, inputs.seat),
        ):
            if expected != actual:
                items.append(_task_item("revision-mismatch" if name.startswith("rev") else "pin-mismatch", task,
                                        path=f"candidate/projection/manifest.json:inputs.{name}", expected=expected,
                                        actual=actual))
    summary = task.summary
    if summary:
        for side in ("candidate", "verifier"):
            try:
                body = json.loads(read_regular(task.out / side / MANIFEST_NAME) or b"")  # type: ignore[operator]
            except (OSError, ValueError):
                continue
            if body.get(f"{side}_sha256") != summary.get(f"{side}_sha256"):
                items.append(_task_item("digest-mismatch", task, path=f"{side}/manifest.json",
                                        expected=summary.get(f"{side}_sha256"), actual=body.get(f"{side}_sha256")))
    return items


@register
class Separation(BaseCheck):
    id = "separation"
    cost = 2
    purpose = "No verifier byte (file, or paragraph of verifier text) is on the candidate side, except reviewed overlaps."
    fix = "Remove the verifier material from the candidate side; if the overlap is intended, review it and list its sha256 in reviewed_overlaps."

    def run(self, ctx: VerifyContext) -> CheckResult:
        from worldkit.overlay.leaks import VerifierItem, find_leaks, split_reviewed, verifier_items
        from worldkit.overlay.load import reference_bytes

        tasks = ctx.tasks
        texts: dict[tuple[str, str], bytes] = {}  # candidate files' texts: the tasks of a seat share most
        items: list[Item] = []
        reviewed_total = reviewed_used = checked = 0
        for task in tasks:
            if task.out is None:
                continue
            checked += 1
            verifier = verifier_items(task.overlay, reference_bytes(task.overlay))
            # Regular files only, read without blocking: links, FIFOs and the like are package-integrity's.
            for rel in sorted(scan(task.verifier).files):
                data = read_regular(task.verifier / rel)
                if rel != MANIFEST_NAME and data is not None:
                    verifier.append(VerifierItem(f"verifier/{rel}", data))
            candidate = [(rel, data) for rel in sorted(scan(task.candidate).files)
                         if rel != MANIFEST_NAME and (data := read_regular(task.candidate / rel)) is not None]
            reviewed = [o.sha256 for o in task.overlay.reviewed_overlaps]
            reviewed_total += len(reviewed)
            every = find_leaks(verifier, candidate, texts=texts)
            leaks = split_reviewed(every, reviewed)
            reviewed_used += len({leak.unit_sha256 for leak in every} & set(reviewed) | {leak.item_sha256 for leak in every} & set(reviewed))
            for leak in leaks:
                items.append(_task_item(f"leak-{leak.rule}", task, path=f"candidate/{leak.candidate_path}",
                                        expected=leak.item_sha256, actual=leak.unit_sha256,
                                        detail=f"{leak.item}: {leak.excerpt!r}"))
        return self.outcome(items, packages=checked, reviewed_overlaps=reviewed_total, reviewed_overlaps_matched=reviewed_used,
                            unreviewed_overlaps=len([i for i in items if i.kind.startswith("leak")]))


@register
class EvidenceSufficiency(BaseCheck):
    id = "evidence-sufficiency"
    cost = 2
    purpose = "Every criterion has a sufficient evidence set fully inside the candidate view; curated packets' gaps are flagged."
    fix = "Restore the evidence source, or revise the evidence map so each criterion has a set the seat can see, then re-check the overlay."

    def run(self, ctx: VerifyContext) -> CheckResult:
        from worldkit.overlay.apply import ALWAYS_KEPT
        from worldkit.overlay.view import ProjectionView

        tasks = [t for t in ctx.tasks if not t.curated]
        items = [_task_item("not-loaded", t, detail=t.error) for t in tasks if not hasattr(t.overlay, "rubric")]
        criteria = solvable = 0
        flagged: list[dict[str, str]] = []
        for task in tasks:
            overlay = task.overlay
            if not hasattr(overlay, "rubric"):
                continue
            try:
                built = ctx.rebuild(task.key)
            except WorldkitError as error:
                items.append(_task_item("unbuildable", task, detail=error.message))
                continue
            view = ProjectionView(built.root, built.manifest)
            located: dict[str, list[set[str] | None]] = {}
            for criterion in overlay.rubric:
                criteria += 1
                sets = overlay.evidence.get(criterion.id, [])
                resolved: list[set[str] | None] = []
                problems: list[str] = []
                for members in sets:
                    paths: set[str] = set()
                    ok = True
                    for member in members:
                        found, trouble = view.resolve(member)
                        problems += [t[-1] if isinstance(t, tuple) else str(t) for t in trouble]
                        if found is None or trouble:
                            ok = False
                        else:
                            paths.add(found.path)
                    resolved.append(paths if ok else None)
                located[criterion.id] = resolved
                if any(r is not None for r in resolved):
                    solvable += 1
                    continue
                detail = "; ".join(sorted(set(problems))) or "no evidence set is mapped to this criterion"
                items.append(_task_item("no-sufficient-evidence", task, path=f"rubric[{criterion.id}]", detail=detail))
            for name in sorted(overlay.curated):
                packet = {item.path for item in overlay.packet(name)} | set(ALWAYS_KEPT)
                for criterion_id, resolved in sorted(located.items()):
                    if not any(r is not None and r <= packet for r in resolved):
                        flagged.append({"overlay": overlay.id, "packet": name, "criterion": criterion_id})
        return self.outcome(items, criteria=criteria, criteria_solvable=solvable,
                            packets=sum(len(getattr(t.overlay, "curated", {})) for t in tasks),
                            packet_gaps_flagged=flagged)

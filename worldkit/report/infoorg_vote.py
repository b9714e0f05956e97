"""Table 4's Vote: a tree rebuilt from the co-placements a majority of repeated runs agree on.

The paper (Table 4): "Vote rebuilds a tree from pairwise co-placement agreed by two of three
runs; [it does not] use the reference". Here, for the records of a task and the trees its N
runs left on disk (a wrapper folder shared by all of a run's records removed first, as the
scorer does): two records are co-placed at the parent level in a run when they share its top
folder, and at the leaf level when they share its folder. A pair is kept when more than half of
the runs co-place it (two of three). The Vote tree's parent groups are the connected groups of
kept parent-level pairs, its leaf groups those of kept leaf-level pairs (a pair co-placed at the
leaf level is co-placed at the parent level in the same runs, so leaf groups nest in parent
groups); a parent group holding one leaf group is one folder, otherwise each leaf group is a
subfolder. Folder names are generated (`group-1`, `group-1-2`): names change nothing in scoring.

Only the score needs the reference. It is never read from a run folder: it comes from the packet
as the campaign froze it — `plan.json` (digest-checked) pins each packet's `overlay.json` by
SHA-256, and the overlay pins `verifier/reference.json` by SHA-256 — found at the path the
campaign's design named or in packet folders the caller gives. A packet whose digests do not
match is not used, and the report says so.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from worldkit.canon import sha256_bytes, sha256_file

__all__ = ["frozen_references", "vote_tree"]

Tree = Mapping[str, Sequence[str]]


def _unwrapped(tree: Tree) -> dict[str, tuple[str, ...]]:
    paths = {record: tuple(path) for record, path in tree.items()}
    while paths and all(len(p) > 1 for p in paths.values()) and len({p[0] for p in paths.values()}) == 1:
        paths = {record: path[1:] for record, path in paths.items()}
    return paths


class _Groups:
    """Union–find over records; groups come out sorted by their smallest record."""

    def __init__(self, records: Sequence[str]) -> None:
        self.parent = {r: r for r in records}

    def find(self, record: str) -> str:
        while self.parent[record] != record:
            self.parent[record] = self.parent[self.parent[record]]
            record = self.parent[record]
        return record

    def join(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)

    def groups(self) -> list[list[str]]:
        found: dict[str, list[str]] = {}
        for record in sorted(self.parent):
            found.setdefault(self.find(record), []).append(record)
        return sorted(found.values())


def vote_tree(trees: Sequence[Tree], records: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """record id → folder path of the majority co-placement tree (see the module docstring)."""
    records = sorted(set(records))
    runs = [_unwrapped(t) for t in trees]
    needed = len(runs) // 2 + 1
    parents, leaves = _Groups(records), _Groups(records)
    for i, a in enumerate(records):
        for b in records[i + 1 :]:
            shared = [(run[a], run[b]) for run in runs if a in run and b in run]
            if sum(pa[:1] == pb[:1] for pa, pb in shared) >= needed:
                parents.join(a, b)
            if sum(pa == pb for pa, pb in shared) >= needed:
                leaves.join(a, b)
    leaf_of = {r: leaves.find(r) for r in records}
    tree: dict[str, tuple[str, ...]] = {}
    for p, members in enumerate(parents.groups(), start=1):
        inner = sorted({leaf_of[r] for r in members})
        for record in members:
            name = f"group-{p}"
            tree[record] = (name,) if len(inner) == 1 else (name, f"{name}-{inner.index(leaf_of[record]) + 1}")
    return tree


def _packet_reference(packet: Path, overlay_sha256: str) -> dict[str, tuple[str, ...]] | None:
    """The packet's reference paths if its overlay.json and reference.json are the frozen ones."""
    from worldkit.infoorg.reference import REFERENCE_FILE, load_reference

    overlay, reference = packet / "overlay.json", packet / REFERENCE_FILE
    if not overlay.is_file() or not reference.is_file() or sha256_file(overlay) != overlay_sha256:
        return None
    from worldkit.infoorg.overlays import load_overlay

    if sha256_file(reference) != load_overlay(packet).structure_check().reference_sha256:
        return None
    return load_reference(packet).paths()


def _campaign_folders(run_dirs: Iterable[Path]) -> list[Path]:
    from worldkit.campaign.plan import PLAN_FILE

    found = set()
    for run_dir in run_dirs:
        for folder in Path(run_dir).parents:
            if (folder / PLAN_FILE).is_file() and (folder / "campaign.json").is_file():
                found.add(folder)
                break
    return sorted(found)


def frozen_references(run_dirs: Iterable[Path], packets: Sequence[Path] = ()) -> tuple[dict[str, dict[str, tuple[str, ...]]], list[str]]:
    """task id → reference paths for the packet tasks of the campaigns holding `run_dirs`, and
    notes naming the tasks whose frozen packet could not be found (see the module docstring).

    Each campaign's `plan.json` must match `plan.sha256`; a packet is looked for at the path its
    design named (absolute, or relative to the current folder) and in `packets` (packet folders,
    or folders of them)."""
    from worldkit.campaign.plan import DIGEST_FILE, PLAN_FILE, CampaignPlan

    candidates: list[Path] = []
    for given in packets:
        given = Path(given)
        candidates += [given] if (given / "overlay.json").is_file() else sorted(p.parent for p in given.glob("*/overlay.json"))
    references: dict[str, dict[str, tuple[str, ...]]] = {}
    notes: list[str] = []
    for folder in _campaign_folders(run_dirs):
        data = (folder / PLAN_FILE).read_bytes()
        digest = (folder / DIGEST_FILE).read_text(encoding="utf-8").split()[0] if (folder / DIGEST_FILE).is_file() else ""
        if sha256_bytes(data) != digest:
            notes.append(f"{folder / PLAN_FILE} does not match {DIGEST_FILE}: its packets' references are not used")
            continue
        plan = CampaignPlan.model_validate(json.loads(data))
        for task in plan.tasks:
            if task.kind != "packet" or task.id in references:
                continue
            for place in [Path(task.ref), *candidates]:
                if place.is_dir() and (found := _packet_reference(place, task.sha256)) is not None:
                    references[task.id] = found
                    break
            else:
                notes.append(f"{task.id}: no packet at {task.ref!r} (or among the packets given) matches the campaign's "
                             f"frozen overlay.json {task.sha256[:12]}…")  # fmt: skip
    return references, notes

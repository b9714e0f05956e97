"""Seeded violations: verify proves itself by catching known faults, each at the check meant for it.

The WorkWorlds paper's four (a changed generated file, an unauthorized private file, a renamed
verifier file, a deleted evidence source) and its six isolation adversaries (a verifier file on
the candidate side, a future-dated file on an early date, a role-inaccessible file, a revision
mismatch, a tampered projection digest, a tool surface that diverges from the projection); two
attacks on a run's event log (a REPLACE'd event; a log cut short with its head moved back, caught
by the run folder's anchor) and a third of issue 39 (the run folder's anchor deleted before the log
was cut); five staged-package attacks of issue 11 (a package re-digested after a file was added, a
directory symlink to the verifier, a FIFO, a setuid file, an empty directory) and two of issue 39
(a manifest naming a key twice, a world-writable directory).

Each case is injected into its own scratch copy of the world, manifests and overlays; the real
ones are never touched. A case counts as detected only if its expected check passes on an
untouched copy and fails on the injected one.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from worldkit.access import Policy
from worldkit.check_result import CheckResult
from worldkit.errors import WorldkitError
from worldkit.frozen.index import default_manifest_dir, read_index
from worldkit.materialize.manifest import MANIFEST_NAME, Manifest, read_manifest
from worldkit.verify.checks import REPEAT, run_checks
from worldkit.verify.context import VerifyContext
from worldkit.verify.inject import (
    Injection,
    NotApplicable,
    add_entry,
    copy_into,
    detach,
    edit_changeset,
    entry_for,
    item_bytes,
    rename,
    rewrite_frozen,
)
from worldkit.verify.paths import document_path, message_path, record_path
from worldkit.verify.scratch import ScratchCopy, fresh_dir, scratch_dir
from worldkit.verify.tasks import overlay_files, overlay_folder
from worldkit.world.load import WorldPackage, load_world
from worldkit.world.models import SystemKind

Key = tuple[str, str, str]


@dataclass
class Pristine:
    """The untouched scratch copy, loaded: where cases choose their targets."""

    copy: ScratchCopy
    package: WorldPackage
    frozen: dict[Key, Manifest]
    _overlays: list[Any] | None = field(default=None, repr=False, compare=False)

    @property
    def keys(self) -> list[Key]:
        return sorted(self.frozen)

    def overlays(self) -> list[Any]:
        """The untouched copy's overlays, loaded once (cases only read them; they never change:
        a case edits its own copy, never the untouched one)."""
        if self._overlays is None:
            from worldkit.overlay.load import load_overlay

            files = overlay_files(self.copy.overlays) if self.copy.overlays else []
            self._overlays = [load_overlay(p) for p in files]
        return list(self._overlays)


def load_pristine(copy: ScratchCopy) -> Pristine:
    package = load_world(copy.world)
    index = read_index(copy.manifests)
    frozen = {p.key: read_manifest(copy.manifests / p.relpath) for p in index.projections}
    return Pristine(copy, package, frozen)


def _pick(rng: random.Random | None, options: list[Any]) -> Any:
    if not options:
        raise NotApplicable("the world has nothing this fault could be injected into")
    return rng.choice(options) if rng is not None else options[0]


def _latest_keys(p: Pristine) -> list[Key]:
    latest = p.package.revision_names[-1]
    return [k for k in p.keys if k[0] == latest] or p.keys


# -- the paper's ten cases ---------------------------------------------------------------------


def changed_generated_file(p: Pristine, copy: ScratchCopy, rng: random.Random | None) -> Injection:
    """A template (or literal document) changed after freezing: the rebuilt file differs."""
    state_by_key = {k: p.package.revision(k[0]) for k in p.keys}
    used: list[tuple[str, str]] = []
    for key in p.keys:
        state = state_by_key[key]
        for entry in p.frozen[key].files:
            doc = state.documents.get(entry.source) if entry.surface == "files" else None
            if doc is not None:
                used.append((doc.template or "", doc.id))
    templated = sorted({t for t, _ in used if t})
    if templated:
        name = _pick(rng, templated)
        path = copy.world / "templates" / name
        path.write_text(path.read_text(encoding="utf-8") + "\nAmended after freezing.\n", encoding="utf-8")
        return Injection(f"appended a line to template {name}", touches={"world"})
    literal = sorted({d for t, d in used if not t})
    if not literal:
        raise NotApplicable("no document is visible in any frozen projection")
    doc_id = _pick(rng, literal)
    base = p.package.revision_names[0]
    text = p.package.revision(base).documents[doc_id].text or ""
    edit_changeset(copy.world, base, update={"documents": [{"id": doc_id, "set": {"text": text + "Amended.\n"}}]})
    return Injection(f"changed the text of document {doc_id}", touches={"world"})


def unauthorized_private_file(p: Pristine, copy: ScratchCopy, rng: random.Random | None) -> Injection:
    """Another person's private desk file (or mail) appears in a seat's frozen projection."""
    options = []
    for key in p.keys:
        rev, date, seat = key
        state = p.package.revision(rev)
        person = state.seats[seat].person
        day = dt.date.fromisoformat(date)
        have = {e.path for e in p.frozen[key].files}
        for doc in state.documents.values():
            system = state.systems.get(doc.system)
            if (system and system.kind == SystemKind.personal and doc.owner not in (None, person)
                    and doc.visible_from <= day and not doc.verifier_only and document_path(state, doc) not in have):
                options.append((key, "document", doc.id))
        policy = Policy(state)
        for msg in state.messages.values():
            if msg.kind == "mail" and msg.date <= day and not policy.message(person, msg) and message_path(msg) not in have:
                options.append((key, "message", msg.id))
    if not options:
        raise NotApplicable("no private item of another person exists")
    docs = [o for o in options if o[1] == "document"]
    key, kind, item_id = _pick(rng, docs or options)  # a desk file if there is one, else private mail
    state = p.package.revision(key[0])
    day = dt.date.fromisoformat(key[1])
    if kind == "document":
        doc = state.documents[item_id]
        entry = entry_for(document_path(state, doc), item_bytes(state, doc, day), "files", doc.id)
        owner = doc.owner
    else:
        msg = state.messages[item_id]
        entry = entry_for(message_path(msg), item_bytes(state, msg, day), "mail", msg.id)
        owner = "its addressees"
    add_entry(copy, key, entry)
    return Injection(f"added {entry.path} (private to {owner}) to the frozen projection of {'/'.join(key)}",
                     touches={"manifests"})


def _full_task(task: Any) -> bool:
    return task.out is not None and task.condition == "full"


def _full_of(overlay_id: str) -> Callable[[list[Any]], list[Any]]:
    """The tasks a hook that changes `overlay_id`'s full package may change (`Injection.tamper_targets`)."""
    return lambda tasks: [t for t in tasks if _full_task(t) and t.overlay.id == overlay_id]


def renamed_verifier_file(p: Pristine, copy: ScratchCopy, rng: random.Random | None) -> Injection:
    """A file of a staged verifier package renamed: the verifier inventory no longer matches."""
    overlays = _require_overlays(p)
    target = _pick(rng, sorted(o.id for o in overlays))
    choice = rng.random() if rng is not None else 0.0
    injection = Injection(f"renamed a verifier file of {target}[full]", touches={"staged-verifier"})

    def tamper(tasks: list[Any]) -> None:
        for task in tasks:
            if not (_full_task(task) and task.overlay.id == target):
                continue
            files = sorted(x for x in task.verifier.rglob("*") if x.is_file() and x.name != MANIFEST_NAME)
            victim = files[int(choice * len(files))]
            renamed = rename(victim, victim.stem + "-renamed" + victim.suffix)
            injection.notes.append(f"{victim.relative_to(task.out)} → {renamed.name}")

    injection.tamper_staged = tamper
    injection.tamper_targets = _full_of(target)
    return injection


def _require_overlays(p: Pristine) -> list[Any]:
    try:
        overlays = p.overlays()
    except ImportError:
        raise NotApplicable("task overlays are not installed") from None
    if not overlays:
        raise NotApplicable("the world has no task overlays")
    return overlays


def deleted_evidence_source(p: Pristine, copy: ScratchCopy, rng: random.Random | None) -> Injection:
    """The world source of a criterion's evidence is deleted: no sufficient set is left for it."""
    overlays = _require_overlays(p)
    options = []
    for overlay in overlays:
        for criterion_id, sets in sorted(overlay.evidence.items()):
            if sets:
                options.append((overlay, criterion_id, sets))
    if not options:
        raise NotApplicable("no overlay maps evidence to a criterion")
    overlay, criterion_id, sets = _pick(rng, options)
    state = p.package.revision(str(overlay.rev))
    # Remove, from every set, a member (one shared by all sets if there is one).
    members = [{(m.surface, m.locator) for m in s} for s in sets]
    shared = set.intersection(*members)
    chosen = [sorted(shared)[0]] if shared else [sorted(m)[0] for m in members]
    removals: dict[str, list[str]] = {}
    updates: dict[str, list[dict[str, Any]]] = {}
    for surface, locator in chosen:
        collection, ids = _entities_of(state, surface, locator)
        for entity in ids:
            removals.setdefault(collection, []).append(entity)
            for name, changes in detach(state, collection, entity).items():
                updates.setdefault(name, []).extend(changes)
    for name in updates:
        dropped = set(removals.get(name, []))
        updates[name] = [u for u in updates[name] if u["id"] not in dropped]
    edit_changeset(copy.world, str(overlay.rev), update=updates, remove=removals)
    what = ", ".join(f"{c}:{', '.join(ids)}" for c, ids in removals.items())
    return Injection(f"deleted {what}, evidence of {overlay.id} {criterion_id}", touches={"world"})


def _entities_of(state: Any, surface: str, locator: str) -> tuple[str, list[str]]:
    if surface == "files":
        ids = [d.id for d in state.documents.values() if document_path(state, d) == locator]
        return "documents", ids
    if surface == "records":
        return "records", [locator] if locator in state.records else []
    if surface == "mail":
        return "messages", [locator] if locator in state.messages else []
    channel, _, message = locator.partition("#")
    if message:
        return "messages", [message]
    return "messages", sorted(m.id for m in state.messages.values() if m.kind == "chat" and m.channel == channel)


def verifier_file_on_candidate_side(p: Pristine, copy: ScratchCopy, rng: random.Random | None) -> Injection:
    """A verifier file copied into the candidate's workspace."""
    overlays = _require_overlays(p)
    target = _pick(rng, sorted(o.id for o in overlays))
    choice = rng.random() if rng is not None else 0.0

    injection = Injection(f"copied a verifier file of {target}[full] into candidate/workspace/",
                          touches={"staged-candidate"})

    def tamper(tasks: list[Any]) -> None:
        for task in tasks:
            if not (_full_task(task) and task.overlay.id == target):
                continue
            files = sorted(x for x in task.verifier.rglob("*") if x.is_file() and x.name != MANIFEST_NAME)
            source = files[int(choice * len(files))]
            copy_into(source, task.candidate / "workspace" / f"notes{source.suffix}")
            injection.notes.append(f"{source.relative_to(task.out)} → candidate/workspace/notes{source.suffix}")

    injection.tamper_staged = tamper
    injection.tamper_targets = _full_of(target)
    return injection


def future_file_on_early_date(p: Pristine, copy: ScratchCopy, rng: random.Random | None) -> Injection:
    """An item dated after the projection date appears in the frozen projection of that date."""
    options = []
    for key in p.keys:
        rev, date, seat = key
        state = p.package.revision(rev)
        day = dt.date.fromisoformat(date)
        have = {e.path for e in p.frozen[key].files}
        options += [(key, "document", d.id) for d in state.documents.values()
                    if d.visible_from > day and not d.verifier_only and document_path(state, d) not in have]
        options += [(key, "record", r.id) for r in state.records.values()
                    if min(e.date for e in r.events) > day and not r.verifier_only and record_path(state, r) not in have]
        options += [(key, "message", m.id) for m in state.messages.values()
                    if m.kind == "mail" and m.date > day and message_path(m) not in have]
    if not options:
        raise NotApplicable("nothing in the world is dated after a frozen projection date")
    key, kind, item_id = _pick(rng, options)
    state = p.package.revision(key[0])
    day = dt.date.fromisoformat(key[1])
    if kind == "document":
        item = state.documents[item_id]
        entry = entry_for(document_path(state, item), item_bytes(state, item, day), "files", item_id)
    elif kind == "record":
        rec = state.records[item_id]
        entry = entry_for(record_path(state, rec), item_bytes(state, rec, day), "records", item_id)
    else:
        msg = state.messages[item_id]
        entry = entry_for(message_path(msg), item_bytes(state, msg, day), "mail", item_id)
    add_entry(copy, key, entry)
    return Injection(f"added future {kind} {item_id} ({entry.path}) to {'/'.join(key)}", touches={"manifests"})


def role_inaccessible_file(p: Pristine, copy: ScratchCopy, rng: random.Random | None) -> Injection:
    """A document the seat's roles cannot reach (not private, not future) in its frozen projection."""
    options = []
    for key in p.keys:
        rev, date, seat = key
        state = p.package.revision(rev)
        policy = Policy(state)
        person = state.seats[seat].person
        day = dt.date.fromisoformat(date)
        for doc in state.documents.values():
            system = state.systems.get(doc.system)
            if (doc.visible_from <= day and (doc.visible_until is None or day < doc.visible_until)
                    and not doc.verifier_only and not (system and system.kind == SystemKind.personal)
                    and policy.document(person, doc) is None):
                rank = 0 if doc.classification.value in ("confidential", "restricted") else 1
                options.append((rank, key, doc.id))
    if not options:
        raise NotApplicable("every seat can read every non-private document")
    best = min(o[0] for o in options)
    _, key, doc_id = _pick(rng, sorted(o for o in options if o[0] == best))
    state = p.package.revision(key[0])
    doc = state.documents[doc_id]
    entry = entry_for(document_path(state, doc), item_bytes(state, doc, dt.date.fromisoformat(key[1])), "files", doc_id)
    add_entry(copy, key, entry)
    return Injection(f"added {entry.path} ({doc.classification.value}) to {'/'.join(key)}", touches={"manifests"})


def revision_mismatch(p: Pristine, copy: ScratchCopy, rng: random.Random | None) -> Injection:
    """A frozen projection filed under one revision was built from another."""
    key = _pick(rng, _latest_keys(p))
    rev = key[0]
    parent = p.package.revision_spec(rev).parent
    other = parent or next((r for r in p.package.revision_names if r != rev), None)

    def change(manifest: Manifest) -> Manifest:
        if other is None:
            inputs = manifest.inputs.model_copy(update={"revision_digest": "0" * 64})
        else:
            inputs = manifest.inputs.model_copy(update={"rev": other, "revision_digest": p.package.revision(other).digest})
        return manifest.model_copy(update={"inputs": inputs})

    rewrite_frozen(copy, key, change)
    return Injection(f"re-pinned {'/'.join(key)} to revision {other or '(unknown digest)'}", touches={"manifests"})


def tampered_projection_digest(p: Pristine, copy: ScratchCopy, rng: random.Random | None) -> Injection:
    """A frozen projection's fingerprint edited without its entries."""
    key = _pick(rng, p.keys)

    def change(manifest: Manifest) -> Manifest:
        flipped = manifest.fingerprint[:-1] + ("0" if manifest.fingerprint[-1] != "0" else "1")
        return manifest.model_copy(update={"fingerprint": flipped})

    rewrite_frozen(copy, key, change, consistent=False)
    return Injection(f"edited the fingerprint of {'/'.join(key)}", touches={"manifests"})


def tool_surface_divergence(p: Pristine, copy: ScratchCopy, rng: random.Random | None) -> Injection:
    """The seat's server is started over a projection that lacks one file (a partial staging)."""
    from worldkit.verify.checks.tools import default_server_factory

    build = default_server_factory()
    choice = rng.random() if rng is not None else 0.0
    dropped: list[str] = []

    def factory(projection: Path, config: Any) -> Any:
        from worldkit.verify.scratch import copy_tree

        partial = copy_tree(projection, fresh_dir(projection.parent.parent, "partial-") / "projection")
        manifest = read_manifest(partial)
        files = [e for e in manifest.files if e.path.startswith("files/")]
        if files:
            victim = files[int(choice * len(files))]
            (partial / victim.path).unlink()
            kept = [e for e in manifest.files if e.path != victim.path]
            manifest = manifest.model_copy(update={"files": kept})
            manifest = manifest.model_copy(update={"fingerprint": manifest.expected_fingerprint()})
            from worldkit.materialize.manifest import write_manifest

            write_manifest(partial, manifest)
            dropped.append(victim.path)
        return build(partial, config)

    return Injection("served each seat from a staging that lacks one file", server_factory=factory, touches={"server"})


# -- the attacks of issue 11: a staged package altered after staging ------------------------------


def _staged_attack(
    p: Pristine, rng: random.Random | None, what: str, attack: Callable[[Any], str]
) -> Injection:
    """Apply `attack` to the staged full package of one overlay (chosen like the other staged cases)."""
    overlays = _require_overlays(p)
    target = _pick(rng, sorted(o.id for o in overlays))
    injection = Injection(f"{what} in {target}[full]", touches={"staged-candidate"})

    def tamper(tasks: list[Any]) -> None:
        for task in tasks:
            if _full_task(task) and task.overlay.id == target:
                injection.notes.append(attack(task))

    injection.tamper_staged = tamper
    injection.tamper_targets = _full_of(target)
    return injection


def rehashed_package(p: Pristine, copy: ScratchCopy, rng: random.Random | None) -> Injection:
    """A file added to the staged candidate, every manifest re-digested consistently (issue 11)."""
    from worldkit.verify.inject import rehash_package

    def attack(task: Any) -> str:
        rehash_package(task.out, "projection/files/smuggled.md", b"# Smuggled\n\nNot part of the frozen projection.\n")
        return "candidate/projection/files/smuggled.md added, manifests re-digested"

    return _staged_attack(p, rng, "added a file and re-digested the manifests", attack)


def directory_symlink(p: Pristine, copy: ScratchCopy, rng: random.Random | None) -> Injection:
    """A directory symlink in the candidate's workspace pointing at the verifier package."""

    def attack(task: Any) -> str:
        (task.candidate / "workspace" / "answers").symlink_to(task.verifier, target_is_directory=True)
        return "candidate/workspace/answers → verifier/"

    return _staged_attack(p, rng, "linked the verifier package into candidate/workspace/", attack)


def fifo_in_workspace(p: Pristine, copy: ScratchCopy, rng: random.Random | None) -> Injection:
    """A FIFO in the candidate's workspace (opening it for reading would block verify forever)."""

    def attack(task: Any) -> str:
        os.mkfifo(task.candidate / "workspace" / "notes.md")
        return "candidate/workspace/notes.md is a FIFO"

    return _staged_attack(p, rng, "put a FIFO in candidate/workspace/", attack)


def setuid_file(p: Pristine, copy: ScratchCopy, rng: random.Random | None) -> Injection:
    """A staged file made setuid and world-writable (`chmod 4777`), its bytes unchanged."""

    def attack(task: Any) -> str:
        (task.candidate / "request.md").chmod(0o4777)
        return "candidate/request.md mode 4777"

    return _staged_attack(p, rng, "chmod 4777 candidate/request.md", attack)


def empty_directory(p: Pristine, copy: ScratchCopy, rng: random.Random | None) -> Injection:
    """An empty directory added to the staged candidate projection (no file changed)."""

    def attack(task: Any) -> str:
        (task.candidate / "projection" / "files" / "Archive").mkdir()
        return "candidate/projection/files/Archive/ (empty)"

    return _staged_attack(p, rng, "added an empty directory to candidate/projection/files/", attack)


def duplicate_key_manifest(p: Pristine, copy: ScratchCopy, rng: random.Random | None) -> Injection:
    """A key named twice in the staged candidate manifest, with its own value again: a reader keeping
    either copy sees the same object and digest, so only the byte-for-byte re-check catches it."""
    import json

    def attack(task: Any) -> str:
        path = task.candidate / MANIFEST_NAME
        text = path.read_text(encoding="utf-8").rstrip()
        value = json.loads(text)["overlay"]
        path.write_text(text[:-1].rstrip() + f',\n  "overlay": {json.dumps(value)}\n}}\n', encoding="utf-8")
        return "candidate/manifest.json names `overlay` twice"

    return _staged_attack(p, rng, "named a key twice in candidate/manifest.json", attack)


def world_writable_directory(p: Pristine, copy: ScratchCopy, rng: random.Random | None) -> Injection:
    """The staged candidate's workspace made writable by anyone (`chmod 0777`), nothing else changed."""

    def attack(task: Any) -> str:
        (task.candidate / "workspace").chmod(0o777)
        return "candidate/workspace/ mode 0777"

    return _staged_attack(p, rng, "chmod 0777 candidate/workspace/", attack)


def _logged_run(p: Pristine, copy: ScratchCopy) -> tuple[str, Path, str]:
    """A store with one closed, anchored run of one of the world's seats, checked intact first.

    Returns (store URL, runs folder, run id). The untouched log must pass the event-log check,
    so what the case does to it afterwards is what the check is seen to catch.
    """
    from worldkit.store import ANCHOR_FILENAME, EventLog, Store

    seats = sorted({seat for rev in p.package.revision_names for seat in p.package.revision(rev).seats})
    if not seats:
        raise NotApplicable("the world has no seats, so no run can be logged")
    folder = fresh_dir(copy.root, "log-")
    url, run_id = f"sqlite:///{folder / 'store.db'}", "seeded-run"
    with Store.open(url) as store, EventLog(store, run_id, seats[0], claim=True,
                                            anchor=folder / "runs" / run_id / ANCHOR_FILENAME, key=None) as log:
        for n in range(5):
            log.append("read_file", {"path": f"Shared/file-{n}.md"}, "ok", f"{n:064x}")
    check = _event_log_check(p, copy, url, folder / "runs")
    if check.status != "pass":
        raise NotApplicable(f"the untouched log does not pass event-logs ({check.status}: {check.reason})")
    return url, folder / "runs", run_id


def _event_log_check(p: Pristine, copy: ScratchCopy, url: str, runs: Path) -> Any:
    from worldkit.verify.checks.logs import EventLogs

    ctx = VerifyContext(package=p.package, manifests=copy.manifests, work=copy.root, overlays=copy.overlays,
                        repeats=1, store=url, runs=runs)  # fmt: skip
    return EventLogs().run(ctx)


def replaced_log_event(p: Pristine, copy: ScratchCopy, rng: random.Random | None) -> Injection:
    """A logged call overwritten with `REPLACE INTO log_events` by someone who can write the store
    file (the insert guard dropped first: the guard alone refuses the REPLACE)."""
    import sqlite3

    url, runs, run_id = _logged_run(p, copy)
    with sqlite3.connect(url.removeprefix("sqlite:///")) as db:
        db.execute("DROP TRIGGER log_events_insert")
        # Event 3's row exactly as stored (any layout: on SQLite its integer key too), arguments swapped.
        db.execute("CREATE TEMP TABLE forged AS SELECT * FROM log_events WHERE run_id = ? AND seq = 3", (run_id,))
        db.execute("UPDATE forged SET arguments = '{\"path\":\"Shared/other.md\"}'")
        db.execute("REPLACE INTO log_events SELECT * FROM forged")
    return Injection(f"REPLACE'd event 3 of logged run {run_id}", store=url, runs=runs, touches={"log"})


def truncated_log_moved_head(p: Pristine, copy: ScratchCopy, rng: random.Random | None) -> Injection:
    """A log cut short with its sealed head moved back onto the new last event: consistent inside
    the store; only the anchor in the run folder shows it."""
    import sqlite3

    url, runs, run_id = _logged_run(p, copy)
    with sqlite3.connect(url.removeprefix("sqlite:///")) as db:
        for trigger in ("log_events_no_delete", "log_runs_head"):
            db.execute(f"DROP TRIGGER {trigger}")
        (four,) = db.execute("SELECT hash FROM log_events WHERE run_id = ? AND seq = 4", (run_id,)).fetchone()
        db.execute("DELETE FROM log_events WHERE run_id = ? AND seq = 5", (run_id,))
        db.execute("UPDATE log_runs SET head_seq = 4, head_hash = ? WHERE run_id = ?", (four, run_id))
    return Injection(f"deleted the last event of logged run {run_id} and moved its head back", store=url,
                     runs=runs, touches={"log"})  # fmt: skip


def deleted_log_anchor(p: Pristine, copy: ScratchCopy, rng: random.Random | None) -> Injection:
    """A served run folder (run.json and its anchor) whose `log-anchor.json` was deleted, and the log
    cut short with its head moved back: with no copy of the anchor left and the run not declared
    unanchored, the event-log check must not pass it."""
    import sqlite3

    from worldkit.run.folder import RunFolder, write_run_folder

    url, runs, run_id = _logged_run(p, copy)
    seat = next(iter(sorted({s for rev in p.package.revision_names for s in p.package.revision(rev).seats})))
    write_run_folder(runs / run_id, RunFolder(run_id=run_id, overlay="seeded", overlay_sha256="0" * 64, seat=seat))
    if _event_log_check(p, copy, url, runs).status != "pass":
        raise NotApplicable("the untouched run folder does not pass event-logs")
    (runs / run_id / "log-anchor.json").unlink()
    with sqlite3.connect(url.removeprefix("sqlite:///")) as db:
        for trigger in ("log_events_no_delete", "log_runs_head"):
            db.execute(f"DROP TRIGGER {trigger}")
        (four,) = db.execute("SELECT hash FROM log_events WHERE run_id = ? AND seq = 4", (run_id,)).fetchone()
        db.execute("DELETE FROM log_events WHERE run_id = ? AND seq = 5", (run_id,))
        db.execute("UPDATE log_runs SET head_seq = 4, head_hash = ? WHERE run_id = ?", (four, run_id))
    return Injection(f"deleted log-anchor.json of run folder {run_id}, then its last event and moved the head back",
                     store=url, runs=runs, touches={"log"})  # fmt: skip


@dataclass(frozen=True)
class Case:
    name: str
    expected_check: str
    inject: Callable[[Pristine, ScratchCopy, random.Random | None], Injection]


CASES: tuple[Case, ...] = (
    Case("changed-generated-file", "projection-rebuild", changed_generated_file),
    Case("unauthorized-private-file", "access-audit", unauthorized_private_file),
    Case("renamed-verifier-file", "package-integrity", renamed_verifier_file),
    Case("deleted-evidence-source", "evidence-sufficiency", deleted_evidence_source),
    Case("verifier-file-on-candidate-side", "separation", verifier_file_on_candidate_side),
    Case("future-file-on-early-date", "access-audit", future_file_on_early_date),
    Case("role-inaccessible-file", "access-audit", role_inaccessible_file),
    Case("revision-mismatch", "revision-pins", revision_mismatch),
    Case("tampered-projection-digest", "manifest-integrity", tampered_projection_digest),
    Case("tool-surface-divergence", "tool-surface", tool_surface_divergence),
    Case("rehashed-package", "package-integrity", rehashed_package),
    Case("directory-symlink", "package-integrity", directory_symlink),
    Case("fifo-in-workspace", "package-integrity", fifo_in_workspace),
    Case("setuid-file", "package-integrity", setuid_file),
    Case("empty-directory", "package-integrity", empty_directory),
    Case("duplicate-key-manifest", "package-integrity", duplicate_key_manifest),
    Case("world-writable-directory", "package-integrity", world_writable_directory),
    Case("replaced-log-event", "event-logs", replaced_log_event),
    Case("truncated-log-moved-head", "event-logs", truncated_log_moved_head),
    Case("deleted-log-anchor", "event-logs", deleted_log_anchor),
)


# -- running -----------------------------------------------------------------------------------


def tree_sha256(root: Path | None) -> str:
    """One digest over every file under `root` (paths and bytes); "" for no folder."""
    if root is None:
        return ""
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


@dataclass
class Baseline:
    """A verify run over the untouched copy, and what later runs over byte-identical inputs reuse.

    Rebuilds depend on the world alone and staged packages on the world and overlays (both are
    pure functions of their inputs), so a faulted copy whose world (and overlays) still hash the
    same reuses them instead of rebuilding; everything the fault did touch is checked afresh.
    """

    copy: ScratchCopy
    failed: list[str]
    errored: list[str]
    builds: dict[Key, Any]
    staged: dict[str, Path]
    world_sha256: str
    overlays_sha256: str
    manifests_sha256: str = ""

    @classmethod
    def run(cls, copy: ScratchCopy, work: Path) -> Baseline:
        ctx = copy_context(copy, work)
        return cls.of(copy, ctx, run_checks(ctx, exclude_tags={REPEAT}))

    @classmethod
    def of(cls, copy: ScratchCopy, ctx: VerifyContext, results: list[CheckResult]) -> Baseline:
        """The baseline of `results`, the checks run over `ctx` (a context of `copy`)."""
        staged = ctx.tasks_or_missing
        return cls(
            copy=copy,
            failed=[r.id for r in results if r.status == "fail"],
            errored=[f"{r.id}: {r.reason}" for r in results if r.status == "error"],
            builds=dict(ctx._builds),
            staged={t.label: t.out for t in staged if t.out is not None} if isinstance(staged, list) else {},
            world_sha256=tree_sha256(copy.world),
            overlays_sha256=tree_sha256(copy.overlays),
            manifests_sha256=tree_sha256(copy.manifests),
        )

    @property
    def not_passing(self) -> set[str]:
        return set(self.failed) | {e.split(":")[0] for e in self.errored}

    def unchanged(self, copy: ScratchCopy, injection: Injection) -> bool:
        """True if the injection changed nothing: no hook, and world, manifests and overlays hash as before."""
        if injection.server_factory or injection.tamper_staged or injection.store or injection.runs:
            return False
        return (tree_sha256(copy.world), tree_sha256(copy.manifests), tree_sha256(copy.overlays)) == (
            self.world_sha256, self.manifests_sha256, self.overlays_sha256)

    def reusable(self, copy: ScratchCopy) -> tuple[dict[Key, Any] | None, dict[str, Path] | None]:
        """(rebuilds, staged packages) valid for `copy`, or None where its inputs differ."""
        same_world = tree_sha256(copy.world) == self.world_sha256
        same_tasks = same_world and tree_sha256(copy.overlays) == self.overlays_sha256
        return (self.builds if same_world else None, self.staged if same_tasks else None)


def failing_checks(
    copy: ScratchCopy,
    work: Path,
    injection: Injection | None = None,
    *,
    only: list[str] | None = None,
    stop_on_fail: bool = False,
    baseline: Baseline | None = None,
    skipped: dict[str, str] | None = None,
) -> tuple[list[str], list[str]]:
    """(failed, errored) check ids of a verify run over a scratch copy (reproducibility checks excluded).

    `only` restricts the run (the campaign leaves out checks that already fail on the untouched
    copy); `baseline` lends its rebuilds and staged packages where the copy's inputs are unchanged;
    `skipped`, if given, receives check id → reason of every check that did not apply.
    """
    ctx = copy_context(copy, work, injection)
    if baseline is not None:
        builds, staged = baseline.reusable(copy)
        ctx._builds.update(builds or {})
        ctx.staged_from = staged
    results = run_checks(ctx, only=only, exclude_tags={REPEAT}, stop_on_fail=stop_on_fail, cheapest_first=stop_on_fail)
    if skipped is not None:
        skipped.update({r.id: r.reason or "" for r in results if r.status == "skip"})
    return [r.id for r in results if r.status == "fail"], [f"{r.id}: {r.reason}" for r in results if r.status == "error"]


def copy_context(copy: ScratchCopy, work: Path, injection: Injection | None = None) -> VerifyContext:
    """A verify context over a scratch copy, with the injection's hooks."""
    return VerifyContext(
        package=load_world(copy.world), manifests=copy.manifests, work=work, overlays=copy.overlays, repeats=1,
        server_factory=injection.server_factory if injection else None,
        tamper_staged=injection.tamper_staged if injection else None,
        store=injection.store if injection else None,
        runs=injection.runs if injection else None,
    )


@dataclass
class SeededReport:
    cases: list[dict[str, Any]] = field(default_factory=list)
    baseline_failures: list[str] = field(default_factory=list)

    @property
    def attempted(self) -> int:
        return sum(1 for c in self.cases if c.get("applicable", True))

    @property
    def detected(self) -> int:
        return sum(1 for c in self.cases if c["detected"])

    @property
    def not_applicable(self) -> int:
        return sum(1 for c in self.cases if not c.get("applicable", True))

    def as_json(self) -> dict[str, Any]:
        return {"attempted": self.attempted, "detected": self.detected, "not_applicable": self.not_applicable,
                "cases": self.cases, "baseline_failures": self.baseline_failures}


def prepare_copy(world: str | Path | WorldPackage, root: Path, manifests: Path | None, overlays: Path | None) -> ScratchCopy:
    package = world if isinstance(world, WorldPackage) else load_world(world)
    return ScratchCopy.make(
        root, package.root, package.id, Path(manifests) if manifests else default_manifest_dir(package),
        overlay_folder(package.id, overlays, package.root),
    )


def run_seeded(
    world: str | Path | WorldPackage,
    *,
    manifests: Path | None = None,
    overlays: Path | None = None,
    cases: tuple[Case, ...] = CASES,
    scratch: Path | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> SeededReport:
    """Inject each case into its own scratch copy and record which checks catch it.

    `progress(label, done, cases)` is told after the baseline and after each case."""
    report = SeededReport()
    with scratch_dir(scratch, prefix="worldkit-seeded-") as root:
        base = prepare_copy(world, root / "base", manifests, overlays)
        pristine = load_pristine(base)
        baseline = Baseline.run(base, fresh_dir(root, "baseline-"))
        report.baseline_failures = baseline.failed + baseline.errored
        failed = baseline.failed
        if progress:
            progress("baseline verified", 0, len(cases))
        for number, case in enumerate(cases, start=1):
            if progress and number > 1:
                progress(f"case {number - 1}: {report.cases[-1]['name']}", number - 1, len(cases))
            copy = base.clone(fresh_dir(root, f"case-{case.name}-"))
            row: dict[str, Any] = {"name": case.name, "expected_check": case.expected_check}
            try:
                injection = case.inject(pristine, copy, None)
            except NotApplicable as why:
                report.cases.append({**row, "applicable": False, "reason": str(why), "detected_by": [], "detected": False})
                continue
            skipped: dict[str, str] = {}
            try:
                failed_now, errors = failing_checks(copy, fresh_dir(root, f"run-{case.name}-"), injection,
                                                    baseline=baseline, skipped=skipped)
            except WorldkitError as error:  # the injected world no longer loads: blocked, but not by the check
                failed_now, errors = [], [f"load: {error.message}"]
            if case.expected_check in skipped:  # the check meant for it does not apply to this world
                why = f"{case.expected_check} does not apply to this world: {skipped[case.expected_check]}"
                report.cases.append({**row, "applicable": False, "reason": why, "injection": injection.description,
                                     "detected_by": failed_now, "detected": False})
                continue
            row.update(
                injection=injection.description,
                detected_by=failed_now,
                detected=case.expected_check in failed_now and case.expected_check not in failed,
            )
            if errors:
                row["errors"] = errors
            report.cases.append(row)
        if progress:
            progress("done", len(cases), len(cases))
    return report

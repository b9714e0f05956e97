"""The mutable side of a run: what the seat's permitted tool calls change, and its digest.

A run starts from the pre-task state — a projection (fixed; named by its fingerprint) and a
workspace (the candidate package's `workspace/`, possibly empty) — and changes only through
`SeatState.apply(change)`: a workspace file written, a record commented on, its status changed or a
deliverable attached, a mail sent. The server applies the same change payload it logs, so
replaying the log's state changes onto the pre-task state reproduces `digest()` exactly.

The digest covers the projection fingerprint, every workspace file's SHA-256, and hash chains over
each record's changes and over the sent messages, in canonical JSON; nothing in it depends on time,
process or order of iteration, and it costs O(files + records touched) however long the run.

This module must never consult a clock, a policy or the event log: permission is decided before a
change gets here, and dates come from the projection.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import os
import stat
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, Protocol

from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from worldkit._model import Model
from worldkit.canon import sha256_json
from worldkit.errors import InvalidWorld, StoreError
from worldkit.materialize.manifest import read_manifest
from worldkit.materialize.scan import digest_regular
from worldkit.mcp.confine import check_path, open_confined, stage_confined, sweep_temp_files

__all__ = [
    "DiskWorkspace",
    "MemoryWorkspace",
    "PendingChange",
    "SeatState",
    "SendMessageChange",
    "StateChange",
    "UpdateRecordChange",
    "Workspace",
    "WriteFileChange",
    "parse_change",
    "pre_task_state",
]

STATE_VERSION = 1
_GENESIS = "0" * 64
_STRING = json.encoder.encode_basestring  # a str as canonical_json writes it (ensure_ascii=False)


def _link(prev: str, item: Mapping[str, Any]) -> str:
    return sha256_json({"item": item, "prev": prev})


class _Change(Model):

    v: Literal[1] = 1
    """Version of the change payload."""
    before: str | None = None
    """State digest before the change (filled in by the server; checked by replay)."""
    after: str | None = None
    """State digest after the change (filled in by the server; checked by replay)."""


class WriteFileChange(_Change):
    kind: Literal["write_file"] = "write_file"
    """A workspace file was created or replaced."""
    path: str
    """Path relative to the workspace."""
    content: str
    """The file's full new text (UTF-8)."""
    sha256: str
    """SHA-256 of the UTF-8 bytes of `content`."""


class UpdateRecordChange(_Change):
    kind: Literal["update_record"] = "update_record"
    """A record was commented on, had its status changed, or got an attachment."""
    record: str
    """Record id."""
    action: Literal["comment", "status", "attach"]
    """What was done."""
    text: str
    """Comment text, new status, or the attached workspace path."""
    sha256: str | None = None
    """For `attach`: SHA-256 of the attached workspace file."""
    by: str
    """The person acting (the seat's person)."""
    date: str
    """The run's date (the projection date)."""


class SendMessageChange(_Change):
    kind: Literal["send_message"] = "send_message"
    """A mail was sent."""
    id: str
    """Id given to the sent mail (`SENT-0001`, …, in order)."""
    sender: str
    """The person sending (the seat's person)."""
    to: list[str]
    """Recipients."""
    subject: str
    """Subject."""
    body: str
    """Body text."""
    reply_to: str | None
    """Message replied to."""
    date: str
    """The run's date (the projection date)."""


StateChange = Annotated[WriteFileChange | UpdateRecordChange | SendMessageChange, Field(discriminator="kind")]
_CHANGE = TypeAdapter(StateChange)


def parse_change(payload: Mapping[str, Any]) -> WriteFileChange | UpdateRecordChange | SendMessageChange:
    """A logged state-change payload as a typed change; `StoreError` if it is not one."""
    try:
        return _CHANGE.validate_python(dict(payload))
    except ValidationError as error:
        raise StoreError(f"state change {dict(payload).get('kind')!r} is malformed: {error.errors()[0]['msg']}") from None


class Workspace(Protocol):
    """Where workspace files live (a folder on disk during a run, memory during replay)."""

    def read(self, path: str) -> bytes: ...

    def write(self, path: str, data: bytes) -> None: ...

    def stage(self, path: str, data: bytes) -> tuple[Callable[[], None], Callable[[], None]]:
        """Prepare a write without making it visible: (commit, abort)."""
        ...

    def digests(self) -> dict[str, str]:
        """path → SHA-256 of every file now in the workspace."""
        ...


class MemoryWorkspace:
    """A workspace held in memory (replay)."""

    def __init__(self, files: Mapping[str, bytes] | None = None, *, links: frozenset[str] = frozenset()) -> None:
        self._files = dict(files or {})
        self._links = links

    def read(self, path: str) -> bytes:
        return self._files[path]

    def write(self, path: str, data: bytes) -> None:
        if path in self._links:
            raise StoreError(f"cannot write {path!r}: it is a symlink in the workspace")
        self._files[path] = data

    def stage(self, path: str, data: bytes) -> tuple[Callable[[], None], Callable[[], None]]:
        if path in self._links:
            raise StoreError(f"cannot write {path!r}: it is a symlink in the workspace")
        return (lambda: self.write(path, data)), (lambda: None)

    def digests(self) -> dict[str, str]:
        found = {p: hashlib.sha256(d).hexdigest() for p, d in self._files.items()}
        return found | {p: "symlink" for p in self._links}


class DiskWorkspace:
    """A workspace folder on disk; writes are atomic and never follow symlinks."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).absolute()
        self.root.mkdir(parents=True, exist_ok=True)
        sweep_temp_files(self.root)  # temp files of writes killed mid-way (crash leftovers)
        self._digests = scan_workspace(self.root)

    def read(self, path: str) -> bytes:
        return open_confined(self.root, path)

    def write(self, path: str, data: bytes) -> None:
        commit, _ = self.stage(path, data)
        commit()

    def stage(self, path: str, data: bytes) -> tuple[Callable[[], None], Callable[[], None]]:
        """The new bytes durable in a temp file beside `path`; (rename into place, drop them)."""
        staged = stage_confined(self.root, path, data)
        digest = hashlib.sha256(data).hexdigest()

        def commit() -> None:
            staged.commit()
            self._digests[path] = digest

        return commit, staged.abort

    def digests(self) -> dict[str, str]:
        return dict(self._digests)


def scan_workspace(root: Path) -> dict[str, str]:
    """path → SHA-256 of the files under `root` (a symlink is recorded as `symlink`, never followed)."""
    found: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        base = Path(dirpath)
        for name in sorted(filenames + [d for d in dirnames if (base / d).is_symlink()]):
            full = base / name
            rel = full.relative_to(root).as_posix()
            mode = os.lstat(full).st_mode
            if stat.S_ISLNK(mode):
                found[rel] = "symlink"
            elif stat.S_ISREG(mode):
                # Read in chunks, never following or blocking: a 1 GiB file costs a MiB of memory.
                digested = digest_regular(full)
                found[rel] = digested[0] if digested is not None else "unreadable"
    return found


class _Members:
    """A str → str mapping as the members of its canonical JSON object (`"key":"value"`), in the
    key order `canonical_json` sorts them in, so the object's text costs a join, not an encoding."""

    def __init__(self, mapping: Mapping[str, str]) -> None:
        self._keys = sorted(mapping)
        self._parts = [_STRING(k) + ":" + _STRING(mapping[k]) for k in self._keys]

    def _place(self, key: str) -> tuple[int, bool]:
        at = bisect.bisect_left(self._keys, key)
        return at, at < len(self._keys) and self._keys[at] == key

    def set(self, key: str, value: str) -> None:
        at, present = self._place(key)
        part = _STRING(key) + ":" + _STRING(value)
        if present:
            self._parts[at] = part
        else:
            self._keys.insert(at, key)
            self._parts.insert(at, part)

    def joined(self, replaced: tuple[str, str] | None = None) -> str:
        """The members joined by commas, with `replaced` = (key, value) set (not kept)."""
        if replaced is None:
            return ",".join(self._parts)
        key, value = replaced
        at, present = self._place(key)
        part = _STRING(key) + ":" + _STRING(value)
        parts = self._parts[:at] + [part] + self._parts[at + 1 if present else at :]
        return ",".join(parts)


class PendingChange:
    """A checked change not applied yet: the state digest it gives, and how to apply or drop it."""

    def __init__(
        self,
        after: str,
        commit: Callable[[], None],
        abort: Callable[[], None] = lambda: None,
        *,
        entry: dict[str, Any] | None = None,
    ) -> None:
        self.after = after
        """The state digest once the change is committed."""
        self.entry = entry
        """For a record update: the entry it appends to the record's changes."""
        self._commit, self._abort = commit, abort

    def commit(self) -> None:
        """Apply the change (make a staged write visible)."""
        self._commit()

    def abort(self) -> None:
        """Drop the change (and a staged write's temp file)."""
        self._abort()


class SeatState:
    """What a run has changed so far, on top of a fixed projection."""

    def __init__(self, base: str, workspace: Workspace | None = None) -> None:
        self.base = base
        self.workspace = workspace
        self._workspace_digests = workspace.digests() if workspace is not None else {}
        self.records: dict[str, list[dict[str, Any]]] = {}
        self.outbox: list[dict[str, Any]] = []
        # Hash chains over each record's changes and over the outbox, so a digest costs
        # O(workspace files + records touched), not O(everything changed so far).
        self._record_heads: dict[str, str] = {}
        self._outbox_head = _GENESIS
        # The digest's two mappings as their canonical JSON members, kept in key order, so a
        # staged change's digest re-encodes one entry, not the whole state (see `_digest_with`).
        self._workspace_members = _Members(self._workspace_digests)
        self._record_members = _Members({})
        self._digest: str | None = None
        """`digest()` of the state as it is now (None: not computed since the last change)."""
        self._lock = threading.RLock()

    @property
    def lock(self) -> threading.RLock:
        """Held by the server across check, apply and digest, so changes never interleave."""
        return self._lock

    def workspace_files(self) -> dict[str, str]:
        """path → SHA-256 of the workspace files."""
        return dict(self._workspace_digests)

    def next_message_id(self) -> str:
        return f"SENT-{len(self.outbox) + 1:04d}"

    def apply(self, change: Mapping[str, Any] | WriteFileChange | UpdateRecordChange | SendMessageChange) -> None:
        """Apply one change; the same payload gives the same state wherever it is applied."""
        with self._lock:
            self.stage(change).commit()

    def stage(
        self, change: Mapping[str, Any] | WriteFileChange | UpdateRecordChange | SendMessageChange
    ) -> PendingChange:
        """Check and prepare one change without applying it: the state digest it will give
        (`after`), then `commit` (apply it) or `abort` (drop it).

        A workspace write is staged durably in a temp file and becomes visible only on `commit`,
        so a server can log the change (write-ahead) between the two. The caller holds `lock`
        from `stage` to `commit`/`abort`."""
        parsed = change if isinstance(change, BaseModel) else parse_change(change)
        with self._lock:
            if isinstance(parsed, WriteFileChange):
                return self._stage_write(parsed)
            if isinstance(parsed, UpdateRecordChange):
                return self._stage_update(parsed)
            return self._stage_send(parsed)

    def _stage_write(self, change: WriteFileChange) -> PendingChange:
        if self.workspace is None:
            raise StoreError(f"cannot apply a write of {change.path!r}: this state has no workspace")
        check_path(change.path)
        data = change.content.encode("utf-8")
        if hashlib.sha256(data).hexdigest() != change.sha256:
            raise StoreError(f"write of {change.path!r}: content does not match its sha256")
        commit_file, abort = self.workspace.stage(change.path, data)
        after = self._digest_with(workspace=(change.path, change.sha256))

        def commit() -> None:
            commit_file()
            self._workspace_digests[change.path] = change.sha256
            self._workspace_members.set(change.path, change.sha256)
            self._digest = after  # what `_digest_with` gives for the state now (computed above)

        return PendingChange(after, commit, abort)

    def _stage_update(self, change: UpdateRecordChange) -> PendingChange:
        entry: dict[str, Any] = {"action": change.action, "by": change.by, "date": change.date, "text": change.text}
        if change.action == "attach":
            entry["sha256"] = change.sha256
        head = _link(self._record_heads.get(change.record, _GENESIS), entry)
        after = self._digest_with(record=(change.record, head))

        def commit() -> None:
            self.records.setdefault(change.record, []).append(entry)
            self._record_heads[change.record] = head
            self._record_members.set(change.record, head)
            self._digest = after

        return PendingChange(after, commit, entry=dict(entry))

    def _stage_send(self, change: SendMessageChange) -> PendingChange:
        expected = self.next_message_id()
        if change.id != expected:
            raise StoreError(f"sent message id {change.id!r} is out of order (expected {expected!r})")
        message = change.model_dump(mode="json", exclude={"v", "kind", "before", "after"})
        head = _link(self._outbox_head, message)
        after = self._digest_with(outbox=(len(self.outbox) + 1, head))

        def commit() -> None:
            self.outbox.append(message)
            self._outbox_head = head
            self._digest = after

        return PendingChange(after, commit)

    def record_changes(self, record_id: str) -> list[dict[str, Any]]:
        """The changes made to a record in this run, in order."""
        with self._lock:
            return [dict(c) for c in self.records.get(record_id, [])]

    def snapshot(self) -> dict[str, Any]:
        """The whole mutable state as JSON-ready data (for inspection and tests)."""
        with self._lock:
            return {
                "base": self.base,
                "outbox": [dict(m) for m in self.outbox],
                "records": {k: [dict(c) for c in v] for k, v in sorted(self.records.items())},
                "v": STATE_VERSION,
                "workspace": dict(sorted(self._workspace_digests.items())),
            }

    def digest(self) -> str:
        """SHA-256 over the base, the workspace files' digests and the chain heads of the changes."""
        with self._lock:
            if self._digest is None:
                self._digest = self._digest_with()
            return self._digest

    def _digest_with(
        self,
        *,
        workspace: tuple[str, str] | None = None,
        record: tuple[str, str] | None = None,
        outbox: tuple[int, str] | None = None,
    ) -> str:
        """The digest of this state with one part replaced (a staged change's `after`): a workspace
        file's (path, sha256), a record's (id, chain head) or the outbox's (count, head).

        Equal to `sha256_json` of `{"base", "outbox": {"count", "head"}, "records": {id: head},
        "v", "workspace": {path: sha256}}` (`reference_digest`), written from members kept encoded."""
        count, head = outbox if outbox is not None else (len(self.outbox), self._outbox_head)
        text = "".join(
            (
                '{"base":',
                _STRING(self.base),
                ',"outbox":{"count":',
                str(int(count)),
                ',"head":',
                _STRING(head),
                '},"records":{',
                self._record_members.joined(record),
                '},"v":',
                str(STATE_VERSION),
                ',"workspace":{',
                self._workspace_members.joined(workspace),
                "}}\n",
            )
        )
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def reference_digest(self) -> str:
        """`digest()` computed from its definition (canonical JSON of the whole state), for checks."""
        with self._lock:
            return sha256_json(
                {
                    "base": self.base,
                    "outbox": {"count": len(self.outbox), "head": self._outbox_head},
                    "records": dict(self._record_heads),
                    "v": STATE_VERSION,
                    "workspace": dict(self._workspace_digests),
                }
            )

    def final_records(self, baseline: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
        """Record id → record JSON with this run's changes applied (the grading shape).

        `baseline` is the pre-task record JSON by id. A status change sets `status` and appends a
        `{kind: "status", status}` history entry; a comment appends `{kind: "comment", note}`; an
        attachment `{kind: "attach", note: path, sha256}`. Changes are applied in the order made.
        """
        out: dict[str, dict[str, Any]] = {}
        with self._lock:
            for record_id, changes in sorted(self.records.items()):
                record = dict(baseline.get(record_id, {"id": record_id}))
                history = list(record.get("history", []))
                for change in changes:
                    entry: dict[str, Any] = {"by": change["by"], "date": change["date"], "kind": change["action"]}
                    if change["action"] == "status":
                        entry["status"] = record["status"] = change["text"]
                    else:
                        entry["note"] = change["text"]
                        if change["action"] == "attach":
                            entry["sha256"] = change["sha256"]
                    history.append(entry)
                record["history"] = history
                out[record_id] = record
        return out

    def sent_messages(self) -> list[dict[str, Any]]:
        """Mail sent in this run, in order: `{id, to, subject, body, reply_to, date}`."""
        with self._lock:
            return [{k: v for k, v in m.items() if k != "sender"} for m in self.outbox]


def pre_task_state(pre_task_dir: Path) -> SeatState:
    """The pre-task state held in memory, from a projection or a candidate package directory.

    A candidate package is recognised by its `projection/` folder; its `workspace/` (if any) is
    read into memory, so replaying never touches the directory.
    """
    root = Path(pre_task_dir)
    projection = root / "projection" if (root / "projection" / "manifest.json").is_file() else root
    if not (projection / "manifest.json").is_file():
        raise InvalidWorld(
            "neither a projection (manifest.json) nor a candidate package (projection/manifest.json); "
            "pass the directory `worldkit materialize` or the overlay step wrote",
            file=root,
        )
    manifest = read_manifest(projection)
    files: dict[str, bytes] = {}
    links: set[str] = set()
    workspace_dir = root / "workspace" if projection != root else None
    if workspace_dir is not None and workspace_dir.is_dir():
        for rel, digest in scan_workspace(workspace_dir).items():
            if digest == "symlink":
                links.add(rel)
            else:
                files[rel] = (workspace_dir / rel).read_bytes()
    return SeatState(manifest.fingerprint, MemoryWorkspace(files, links=frozenset(links)))

"""State changes, declared (`ChangeSpec`) and observed (`observed_changes`).

A declared change names a state-changing tool and globs over its arguments; it matches a call in
the run's event log. When a run has no event log, the changes are derived from its final state
(workspace files, record history, sent mail) so the same declarations still decide.
"""

from __future__ import annotations

import fnmatch
import json
import os
import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from worldkit._model import Model
from worldkit.overlay.context import GradingContext
from worldkit.tools.specs import TOOLS_BY_NAME
from worldkit.world.models import Id

ChangeKind = Literal["write_file", "update_record", "send_message"]
"""A state-changing tool (the same names as `PermittedChange.kind`)."""

Pattern = str | list[str]
"""A glob (fnmatch) or a list of globs, any of which may match."""


class ChangeSpec(Model):
    """A state change described declaratively. A call matches when its `tool` is `kind` and, for
    every key of `match`, the tool argument of that name matches the glob(s); a list-valued
    argument (`to`) matches when any element does; other values are compared as strings."""


    kind: ChangeKind
    """The state-changing tool: `write_file`, `update_record` or `send_message`."""
    match: dict[str, Pattern] = Field(default_factory=dict)
    """Tool argument → glob(s). Arguments: write_file `path`, `content`; update_record `id`,
    `action` (comment/status/attach), `text` (comment text, new status, attached path);
    send_message `to`, `subject`, `body`, `reply_to`. Empty: every call of `kind` matches."""
    case_sensitive: bool = True
    """Whether the globs compare case-sensitively."""
    description: str = ""
    """The change in words (shown to graders and in check results)."""

    @model_validator(mode="after")
    def _match_keys_are_arguments(self) -> ChangeSpec:
        known = set(TOOLS_BY_NAME[self.kind].args.model_fields)
        unknown = sorted(set(self.match) - known)
        if unknown:
            raise ValueError(
                f"`match` names {', '.join(unknown)}, not arguments of {self.kind}; use {', '.join(sorted(known))}"
            )
        return self

    def matches(self, tool: str, arguments: dict[str, Any]) -> bool:
        """Whether a call of `tool` with `arguments` is this change."""
        if tool != self.kind:
            return False
        return all(_matches(arguments.get(key), pattern, self.case_sensitive) for key, pattern in self.match.items())

    def label(self) -> str:
        return self.description or f"{self.kind} {json.dumps(self.match, sort_keys=True)}"


class ProhibitedChange(ChangeSpec):
    """A change the assignment or organizational policy disallows (even where a tool allows it)."""

    id: Id | None = None
    """Optional id, so that a `no_prohibited_change` check can select rules by id."""


def _matches(value: Any, pattern: Pattern, case_sensitive: bool) -> bool:
    patterns = [pattern] if isinstance(pattern, str) else pattern
    values = value if isinstance(value, list) else [value]
    for item in values:
        text = "" if item is None else str(item)
        for glob in patterns:
            if case_sensitive and fnmatch.fnmatchcase(text, glob):
                return True
            if not case_sensitive and fnmatch.fnmatchcase(text.casefold(), glob.casefold()):
                return True
    return False


@dataclass(frozen=True)
class Change:
    """One observed state change: the tool call that made it (or would have made it)."""

    tool: str
    arguments: dict[str, Any]
    outcome: str
    origin: str
    """`event <seq>` when read from the log, else `final state`."""


def observed_changes(ctx: GradingContext, *, attempts: bool = False) -> list[Change]:
    """The state-changing calls of the run: from the event log (outcome `ok`; denied and failed
    calls too if `attempts`), or, without a log, derived from the final state."""
    if ctx.events is not None:
        found = []
        for index, event in enumerate(ctx.events, 1):
            tool = event.get("tool", "")
            spec = TOOLS_BY_NAME.get(tool)
            if spec is None or spec.read_only:
                continue
            outcome = event.get("outcome", "ok")
            if outcome == "ok" or attempts:
                origin = f"event {event.get('seq', index)}"
                found.append(Change(tool, dict(event.get("arguments") or {}), outcome, origin))
        return found
    return _changes_from_state(ctx)


def baseline_records(projection: Path) -> dict[str, dict[str, Any]]:
    """Record id → record JSON as in the pre-task projection: a fresh copy on every call (callers
    mutate it in place)."""
    return pickle.loads(_record_blob(projection / "records"))


class BaselineRecords(dict[str, dict[str, Any]]):
    """`baseline_records`, copied only where written: a new dict of the records as last parsed,
    each record that process's shared parse until `writable(id)` gives this dict a copy of its own.
    Grading reads records; a replay writes a few (a status, a comment) of hundreds."""

    def __init__(self, projection: Path) -> None:
        blob = _record_blob(projection / "records")
        shared = _PARSED.get(blob)
        if shared is None:
            if len(_PARSED) >= 64:
                _PARSED.clear()
            shared = _PARSED[blob] = pickle.loads(blob)
        super().__init__(shared)
        self._shared = shared

    def writable(self, record_id: str) -> dict[str, Any]:
        """The record `record_id`, this dict's own copy (made on first write)."""
        record = self[record_id]
        if record is self._shared.get(record_id):
            record = self[record_id] = pickle.loads(pickle.dumps(record, protocol=pickle.HIGHEST_PROTOCOL))
        return record


_PARSED: dict[bytes, dict[str, dict[str, Any]]] = {}
"""A records blob of `_BLOBS` → its one shared parse (read, never written: see `BaselineRecords`)."""


_BLOBS: dict[str, tuple[tuple[Any, ...], bytes]] = {}
"""Records folder → (its files' stat signature, the parsed records pickled): grading replays one
projection many times (every counterfactual, every criterion), and reads and parses it once; each
call unpickles its own copy (faster than parsing the JSON again)."""


def _record_files(folder: Path) -> list[str]:
    """`folder/*/*.json` as `Path.glob` finds them, in path order (as strings)."""
    found: list[tuple[str, str]] = []
    with os.scandir(folder) as outer:
        for sub in outer:
            if not sub.is_dir():
                continue
            try:
                with os.scandir(sub.path) as inner:
                    found += [(sub.name, entry.name) for entry in inner if fnmatch.fnmatchcase(entry.name, "*.json")]
            except (NotADirectoryError, PermissionError, FileNotFoundError):
                continue
    return [os.path.join(folder, sub, name) for sub, name in sorted(found)]


def _record_blob(folder: Path) -> bytes:
    """The pickled records of `folder/*/*.json` (id, else stem → record), read and parsed again
    whenever any file's path, size, inode, or modification or change time differs from the last read."""
    if not folder.is_dir():
        return _EMPTY
    paths = _record_files(folder)
    stats = [os.stat(path) for path in paths]
    signature = tuple((p, s.st_size, s.st_ino, s.st_mtime_ns, s.st_ctime_ns) for p, s in zip(paths, stats, strict=True))
    key = str(folder.resolve())
    cached = _BLOBS.get(key)
    if cached is not None and cached[0] == signature:
        return cached[1]
    found: dict[str, dict[str, Any]] = {}
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            record = json.loads(handle.read())
        found[record.get("id", Path(path).stem)] = record
    blob = pickle.dumps(found, protocol=pickle.HIGHEST_PROTOCOL)
    if len(_BLOBS) >= 64:
        _BLOBS.clear()
    _BLOBS[key] = (signature, blob)
    return blob


_EMPTY = pickle.dumps({})


def _changes_from_state(ctx: GradingContext) -> list[Change]:
    def change(tool: str, **arguments: Any) -> Change:
        return Change(tool, arguments, "ok", "final state")

    found: list[Change] = []
    if ctx.workspace.is_dir():
        for path in sorted(p for p in ctx.workspace.rglob("*") if p.is_file()):
            content = path.read_bytes().decode("utf-8", errors="replace")
            found.append(change("write_file", path=path.relative_to(ctx.workspace).as_posix(), content=content))
    before = BaselineRecords(ctx.projection)  # read only
    for record_id in sorted(ctx.records):
        after, old = ctx.records[record_id], before.get(record_id, {})
        for entry in after.get("history", [])[len(old.get("history", [])) :]:
            if entry.get("kind") in ("comment", "attach"):
                text = entry.get("note", entry.get("text", ""))
                found.append(change("update_record", id=record_id, action=entry["kind"], text=text))
        if after.get("status") != old.get("status"):
            found.append(change("update_record", id=record_id, action="status", text=after.get("status")))
    found += [change("send_message", **message) for message in ctx.sent]
    return found

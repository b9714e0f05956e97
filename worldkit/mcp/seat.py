"""What one seat can do with the company's systems: the library behind the seat's MCP tools.

`SeatView` opens one materialized projection (checked against its manifest), binds the seat named
there, and implements the ten tools of `worldkit.tools.specs` over it: files (the projection's
`files/` plus an optional writable workspace shown as `workspace/…`), records (the record views and
the relations among them) and communication (mail, chat and what the seat sends). Reads come only
from the projection, so future-dated, other-seat and verifier-only material is unreachable: it is
not there. Mutations are decided by the `ToolConfig`, staged on a `SeatState`, handed with their
result to the `write_ahead` hook (the server logs them there, durably) and only then applied, so
after a kill the disk never holds a change the log lacks. A refusal raises `CallRefused` (or
`PathRefused`) and changes nothing.

This module must never take a seat, person or identity from a caller, never read outside the
projection and the workspace, and never apply a change it has not checked against the config.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from worldkit.errors import InvalidWorld, PathRefused, UsageError
from worldkit.render.office import extract_text
from worldkit.materialize.manifest import read_manifest
from worldkit.mcp.confine import check_id, check_path, open_confined
from worldkit.mcp.results import (
    FileEntry,
    FileList,
    FileText,
    MessageList,
    MessageSummary,
    MessageView,
    RecordList,
    RecordSummary,
    RecordView,
    SearchMatch,
    SearchResult,
    SendResult,
    UpdateResult,
    WriteResult,
)
from worldkit.mcp.search import SearchIndex
from worldkit.mcp.state import (
    DiskWorkspace,
    PendingChange,
    SeatState,
    SendMessageChange,
    UpdateRecordChange,
    WriteFileChange,
)
from worldkit.overlay.toolconfig import SendMessages, ToolConfig, UpdateRecords, WriteFiles

__all__ = [
    "WORKSPACE_PREFIX",
    "CallRefused",
    "FileEntry",
    "FileList",
    "FileText",
    "MessageList",
    "MessageSummary",
    "MessageView",
    "RecordList",
    "RecordSummary",
    "RecordView",
    "SearchMatch",
    "SearchResult",
    "SeatView",
    "SendResult",
    "UpdateResult",
    "WriteResult",
    "default_tool_config",
]

WORKSPACE_PREFIX = "workspace/"
MAX_WRITE_BYTES = 5_000_000
MAX_TEXT_CHARS = 100_000
MAX_RECIPIENTS = 100
"""Distinct recipients one message may name (duplicates are dropped first; more than four times as
many names are refused unread)."""


class CallRefused(UsageError):
    """A tool call the seat or the task does not permit; the message says what and why. Nothing changed."""


def default_tool_config(projection: Path) -> ToolConfig:
    """A read-only configuration for a bare projection: the seat it was made for, nothing permitted."""
    manifest = read_manifest(projection)
    inputs = manifest.inputs
    bundle = json.loads((projection / "tools.json").read_text(encoding="utf-8"))
    return ToolConfig(
        world=inputs.world,
        rev=inputs.rev,
        date=inputs.date,
        seat=inputs.seat,
        person=inputs.person,
        surfaces=[server["surface"] for server in bundle["servers"]],
        permitted=[],
    )


def _page(items: list[Any], offset: int, limit: int) -> tuple[list[Any], int | None]:
    """One page of `items` and the offset of the next page (None after the last)."""
    return items[offset : offset + limit], offset + limit if offset + limit < len(items) else None


def _strip_workspace(path: str) -> str:
    return path[len(WORKSPACE_PREFIX) :] if path.startswith(WORKSPACE_PREFIX) else path


class SeatView:
    """The ten tools' logic for one seat over one projection (and optional workspace)."""

    def __init__(
        self,
        projection: Path,
        config: ToolConfig,
        *,
        workspace: Path | None = None,
        state: SeatState | None = None,
        write_ahead: Callable[[BaseModel, Any], None] | None = None,
    ) -> None:
        self.root = Path(projection).absolute()
        # Called with (result, change) once a mutation is staged, before it is applied: the server
        # logs the call there, durably, so nothing becomes visible that the log lacks.
        self.write_ahead = write_ahead
        self.manifest = read_manifest(self.root)
        inputs = self.manifest.inputs
        if (config.seat, config.world, config.rev, config.date) != (inputs.seat, inputs.world, inputs.rev, inputs.date):
            raise UsageError(
                f"tool config is for seat {config.seat} ({config.world} {config.rev} {config.date}) but the "
                f"projection at {self.root} is for seat {inputs.seat} ({inputs.world} {inputs.rev} {inputs.date}); "
                "a server acts as exactly the seat its projection was made for"
            )
        self.config = config
        self._entries = self.manifest.by_path()
        self.seat = inputs.seat
        self.person = inputs.person
        self.date = inputs.date
        self.bundle = json.loads(self._projection_bytes("tools.json"))
        if state is None:
            state = SeatState(self.manifest.fingerprint, DiskWorkspace(workspace) if workspace is not None else None)
        elif state.base != self.manifest.fingerprint:
            raise UsageError(
                f"state is based on projection {state.base[:16]}…, not on {self.manifest.fingerprint[:16]}… "
                f"at {self.root}; start from the projection the run was staged with"
            )
        self.state = state
        self._load()

    # -- loading ---------------------------------------------------------------------------

    def _projection_bytes(self, rel: str) -> bytes:
        """Bytes of a projection file, checked against the manifest (a changed file is an error)."""
        entry = self._entries.get(rel)
        if entry is None:
            raise InvalidWorld(f"{rel} is not in the projection's manifest; re-materialize it", file=self.root)
        data = open_confined(self.root, rel)
        if hashlib.sha256(data).hexdigest() != entry.sha256:
            raise InvalidWorld(
                f"{rel} differs from the manifest (changed after materialization); re-materialize the projection",
                file=self.root,
            )
        return data

    def _load(self) -> None:
        self.files: dict[str, tuple[int, str]] = {}
        self.texts: dict[str, str] = {}
        texts = self.texts
        self.records: dict[str, dict[str, Any]] = {}
        self.mail: dict[str, dict[str, Any]] = {}
        self.chat: dict[str, dict[str, Any]] = {}
        relations: dict[str, list[str]] = {}
        for entry in self.manifest.files:
            path = entry.path
            if path.startswith("files/"):
                rel = path[len("files/") :]
                check_path(rel)
                self.files[rel] = (entry.size, entry.sha256)
                data = self._projection_bytes(path)
                office = extract_text(rel, data)  # an office file reads as its extracted text
                texts[rel] = office if office is not None else data.decode("utf-8", errors="replace")
            elif path == "records/_relations.json":
                relations = json.loads(self._projection_bytes(path))
            elif path.startswith("records/"):
                record = json.loads(self._projection_bytes(path))
                self.records[record["id"]] = record
            elif path.startswith("mail/"):
                message = json.loads(self._projection_bytes(path))
                self.mail[message["id"]] = message
            elif path.startswith("chat/"):
                channel = path[len("chat/") : -len(".jsonl")]
                for line in self._projection_bytes(path).decode("utf-8").splitlines():
                    message = json.loads(line)
                    self.chat[message["id"]] = {**message, "channel": channel}
        self.links: dict[str, list[str]] = {rid: [] for rid in self.records}
        self.relations: dict[str, set[str]] = {rid: set() for rid in self.records}
        for source, targets in relations.items():
            for target in targets:
                if source in self.records and target in self.records:
                    self.links[source].append(target)
                    self.relations[source].add(target)
                    self.relations[target].add(source)
        workspace_files = self._workspace_texts()
        if self.state.workspace is not None and any(p.startswith(WORKSPACE_PREFIX) for p in self.files):
            raise UsageError(
                f"the projection has a drive mounted as 'workspace', which would hide the task workspace; "
                f"serve it without a workspace ({self.root})"
            )
        self.index = SearchIndex({**texts, **workspace_files})
        self._projection_entries = sorted(
            (FileEntry(path=p, size=size, sha256=sha) for p, (size, sha) in self.files.items()), key=lambda e: e.path
        )

    def _workspace_texts(self) -> dict[str, str]:
        workspace = self.state.workspace
        if workspace is None:
            return {}
        return {
            WORKSPACE_PREFIX + rel: workspace.read(rel).decode("utf-8", errors="replace")
            for rel, digest in self.state.workspace_files().items()
            if digest != "symlink"
        }

    # -- files -----------------------------------------------------------------------------

    def _all_files(self) -> list[FileEntry]:
        workspace = self.state.workspace
        if workspace is None:
            return self._projection_entries
        entries = list(self._projection_entries)
        for rel, digest in self.state.workspace_files().items():
            if digest != "symlink":
                entries.append(FileEntry(path=WORKSPACE_PREFIX + rel, size=len(workspace.read(rel)), sha256=digest))
        entries.sort(key=lambda e: e.path)
        return entries

    def list_files(self, offset: int = 0, limit: int = 100) -> FileList:
        entries = self._all_files()
        page, next_offset = _page(entries, offset, limit)
        return FileList(entries=page, next_offset=next_offset, total=len(entries))

    def _file_bytes(self, path: str) -> bytes:
        check_path(path)
        if path.startswith(WORKSPACE_PREFIX) and self.state.workspace is not None:
            rel = path[len(WORKSPACE_PREFIX) :]
            if rel in self.state.workspace_files():
                return self.state.workspace.read(rel)
        elif path in self.files:
            return open_confined(self.root / "files", path)
        raise CallRefused(
            f"no file {path!r} among the files seat {self.seat} can see on {self.date} (it does not exist "
            "or is not visible to this seat on this date); list_files shows the files you can see"
        )

    def read_file(self, path: str, offset: int = 0, length: int = 20000) -> FileText:
        if path in self.texts:  # projection files were read and checked against the manifest at load
            text, digest = self.texts[path], self.files[path][1]
        else:
            data = self._file_bytes(path)
            text, digest = data.decode("utf-8", errors="replace"), hashlib.sha256(data).hexdigest()
        if offset > len(text):
            raise CallRefused(f"offset {offset} is past the end of {path!r} ({len(text)} characters); start below it")
        end = min(len(text), offset + length)
        return FileText(
            path=path,
            offset=offset,
            text=text[offset:end],
            next_offset=end if end < len(text) else None,
            total_chars=len(text),
            sha256=digest,
        )

    def search_files(self, query: str, mode: str = "literal", limit: int = 20) -> SearchResult:
        if not query.strip():
            raise CallRefused("an empty query matches nothing; give some text to look for")
        hits, more = self.index.literal(query, limit) if mode == "literal" else self.index.ranked(query, limit)
        return SearchResult(
            query=query,
            mode=mode,
            matches=[SearchMatch(path=h.path, line=h.line, snippet=h.snippet, score=h.score) for h in hits],
            truncated=more,
        )

    def write_file(self, path: str, content: str) -> tuple[WriteResult, WriteFileChange]:
        rel = _strip_workspace(path)
        check_path(rel, what="workspace path", hint="give a relative path inside your workspace, e.g. report.md")
        if self.state.workspace is None:
            raise CallRefused(
                f"writing {path!r} is not allowed: seat {self.seat} is served a projection without a task "
                "workspace, so nothing can be written"
            )
        if not self.config.may_write(rel):
            allowed = sorted({g for p in self.config.permitted if isinstance(p, WriteFiles) for g in p.paths})
            why = (
                f"the task permits writing only {', '.join(allowed)} in the workspace"
                if allowed
                else "the task permits no file writes"
            )
            raise CallRefused(f"writing {path!r} is not allowed: {why}")
        _require_text(f"writing {path!r}", content)
        data = content.encode("utf-8")
        if len(data) > MAX_WRITE_BYTES:
            raise CallRefused(
                f"writing {path!r} is not allowed: {len(data)} bytes is more than the {MAX_WRITE_BYTES} allowed"
            )
        change = WriteFileChange(path=rel, content=content, sha256=hashlib.sha256(data).hexdigest())
        result = WriteResult(path=WORKSPACE_PREFIX + rel, size=len(data), sha256=change.sha256)
        _, change = self._apply(change, lambda pending: result)
        self.index.put(WORKSPACE_PREFIX + rel, content)
        return result, change

    def _apply(self, change: Any, result_of: Callable[[PendingChange], Any]) -> tuple[Any, Any]:
        """Apply a checked change, write-ahead: stage it, build its result, hand both to
        `write_ahead` (the log), and only then apply it. Returns the result and the change with
        the state digests before and after. If anything fails before the change is applied, it
        is dropped (a staged write's temp file removed) and nothing changed."""
        with self.state.lock:
            before = self.state.digest()
            pending = self.state.stage(change)
            try:
                change = change.model_copy(update={"before": before, "after": pending.after})
                result = result_of(pending)
                if self.write_ahead is not None:
                    self.write_ahead(result, change)
            except BaseException:
                pending.abort()
                raise
            pending.commit()
            return result, change

    # -- records ---------------------------------------------------------------------------

    def _record(self, record_id: str) -> dict[str, Any]:
        check_id(record_id, what="record id", hint="use an id as query_records lists it")
        record = self.records.get(record_id)
        if record is None:
            raise CallRefused(
                f"no record {record_id!r} among the records seat {self.seat} can see on {self.date}; "
                "query_records lists them"
            )
        return record

    def _status(self, record: dict[str, Any]) -> str | None:
        changes = [c for c in self.state.record_changes(record["id"]) if c["action"] == "status"]
        return changes[-1]["text"] if changes else record.get("status")

    def _changes(self, record_id: str) -> list[dict[str, Any]]:
        return self.state.record_changes(record_id)

    def query_records(
        self,
        system: str | None = None,
        type: str | None = None,  # noqa: A002 - the spec's argument name
        status: str | None = None,
        field: str | None = None,
        value: str | None = None,
        text: str | None = None,
        offset: int = 0,
        limit: int = 50,
    ) -> RecordList:
        if value is not None and field is None:
            raise CallRefused("`value` needs `field`: name the field it must equal")
        needle = text.lower() if text else None
        found: list[RecordSummary] = []
        for rid in sorted(self.records):
            record = self.records[rid]
            current = self._status(record)
            if system is not None and record["system"] != system:
                continue
            if type is not None and record["type"] != type:
                continue
            if status is not None and current != status:
                continue
            fields = record.get("fields") or {}
            if field is not None and (field not in fields or (value is not None and _as_text(fields[field]) != value)):
                continue
            searchable = record["title"] + "\n" + json.dumps(fields, ensure_ascii=False)
            if needle is not None and needle not in searchable.lower():
                continue
            found.append(
                RecordSummary(
                    id=rid, system=record["system"], type=record["type"], title=record["title"], status=current,
                    updated=record["updated"],
                )
            )
        page, next_offset = _page(found, offset, limit)
        return RecordList(records=page, next_offset=next_offset, total=len(found))

    def get_record(self, id: str) -> RecordView:  # noqa: A002 - the spec's argument name
        record = self._record(id)
        return RecordView(
            id=id,
            status=self._status(record),
            record={**record, "links": sorted(self.links[id])},
            relations=sorted(self.relations[id]),
            changes=self._changes(id),
        )

    def update_record(self, id: str, action: str, text: str = "") -> tuple[UpdateResult, UpdateRecordChange]:  # noqa: A002
        record = self._record(id)
        what = {"comment": "commenting on", "status": "changing the status of", "attach": "attaching to"}[action]
        if not text.strip():
            need = {"comment": "the comment text", "status": "the new status", "attach": "the workspace path to attach"}
            raise CallRefused(f"{what} {id} needs `text`: {need[action]}")
        if len(text) > MAX_TEXT_CHARS:
            raise CallRefused(f"{what} {id} is not allowed: text longer than {MAX_TEXT_CHARS} characters")
        _require_text(f"{what} {id}", text)
        if not self.config.may_update(id, action, text if action == "status" else None):
            raise CallRefused(f"{what} {id} is not allowed: {self._update_permission(id, action)}")
        sha = None
        if action == "attach":
            rel = _strip_workspace(text)
            check_path(rel, what="attachment path", hint="give a workspace file as list_files shows it")
            digest = self.state.workspace_files().get(rel)
            if digest is None or digest == "symlink":
                raise CallRefused(f"attaching to {id} is not allowed: there is no workspace file {text!r} (write it first)")
            text, sha = rel, digest
        status = text if action == "status" else self._status(record)
        return self._apply(
            UpdateRecordChange(record=id, action=action, text=text, sha256=sha, by=self.person, date=self.date),
            lambda pending: UpdateResult(
                id=id, action=action, status=status, changes=[*self._changes(id), dict(pending.entry or {})]
            ),
        )

    def _update_permission(self, record_id: str, action: str) -> str:
        grants = [p for p in self.config.permitted if isinstance(p, UpdateRecords) and p.action == action]
        if not grants:
            return f"the task permits no '{action}' updates on any record"
        if action == "status":
            statuses = sorted({s for g in grants for s in g.statuses})
            records = sorted({r for g in grants for r in g.records})
            return f"the task permits setting status only to {', '.join(statuses) or 'nothing'} on {', '.join(records)}"
        return f"the task permits '{action}' only on {', '.join(sorted({r for g in grants for r in g.records}))}"

    # -- communication ---------------------------------------------------------------------

    def _messages(self) -> list[MessageView]:
        views = [
            MessageView(
                id=m["id"], kind="mail", date=m["date"], time=m.get("time"), sender=m["from"], subject=m.get("subject"),
                channel=None, thread=m.get("thread"), sent_by_you=False, to=list(m.get("to") or []),
                cc=list(m.get("cc") or []), reply_to=None, body=m.get("body", ""),
            )
            for m in self.mail.values()
        ]
        views += [
            MessageView(
                id=m["id"], kind="chat", date=m["date"], time=m.get("time"), sender=m["from"], subject=None,
                channel=m["channel"], thread=m.get("thread"), sent_by_you=False, to=[], cc=[], reply_to=None,
                body=m.get("body", ""),
            )
            for m in self.chat.values()
        ]
        views += [
            MessageView(
                id=m["id"], kind="mail", date=m["date"], time=None, sender=m["sender"], subject=m["subject"],
                channel=None, thread=m["reply_to"], sent_by_you=True, to=list(m["to"]), cc=[],
                reply_to=m["reply_to"], body=m["body"],
            )
            for m in self.state.outbox
        ]
        views.sort(key=lambda v: (v.date, v.time or "99:99", v.id))
        return views

    def list_messages(
        self, kind: str | None = None, text: str | None = None, offset: int = 0, limit: int = 50
    ) -> MessageList:
        needle = text.lower() if text else None
        found = [
            MessageSummary(**v.model_dump(include=set(MessageSummary.model_fields)))
            for v in self._messages()
            if (kind is None or v.kind == kind)
            and (needle is None or needle in f"{v.subject or ''}\n{v.body}".lower())
        ]
        page, next_offset = _page(found, offset, limit)
        return MessageList(messages=page, next_offset=next_offset, total=len(found))

    def read_message(self, id: str) -> MessageView:  # noqa: A002 - the spec's argument name
        check_id(id, what="message id", hint="use an id as list_messages lists it")
        for view in self._messages():
            if view.id == id:
                return view
        raise CallRefused(
            f"no message {id!r} among the messages seat {self.seat} can see on {self.date}; list_messages lists them"
        )

    def send_message(
        self, to: list[str], subject: str, body: str, reply_to: str | None = None
    ) -> tuple[SendResult, SendMessageChange]:
        if len(to) > MAX_RECIPIENTS * 4:  # refused before each is even looked at
            raise CallRefused(f"sending is not allowed: {len(to)} recipients; address at most {MAX_RECIPIENTS}")
        to = list(dict.fromkeys(to))  # a recipient named twice gets one copy
        if len(to) > MAX_RECIPIENTS:
            raise CallRefused(f"sending is not allowed: {len(to)} distinct recipients; address at most {MAX_RECIPIENTS} "
                              "(a mailing list reaches many)")  # fmt: skip
        for recipient in to:
            check_id(recipient, what="recipient", hint="address a person id or mailing list")
        refused = [r for r in to if not self.config.may_send(r)]
        if refused:
            grants = sorted({t for p in self.config.permitted if isinstance(p, SendMessages) for t in p.to})
            why = f"the task permits mail only to {', '.join(grants)}" if grants else "the task permits sending no mail"
            raise CallRefused(f"sending to {', '.join(refused)} is not allowed: {why}")
        if reply_to is not None:
            self.read_message(reply_to)
        if len(body) > MAX_TEXT_CHARS or len(subject) > 1000:
            raise CallRefused(
                f"sending is not allowed: the body may have at most {MAX_TEXT_CHARS} characters, the subject 1000"
            )
        _require_text("sending", subject, body)
        with self.state.lock:
            change = SendMessageChange(
                id=self.state.next_message_id(), sender=self.person, to=list(to), subject=subject, body=body,
                reply_to=reply_to, date=self.date,
            )
            return self._apply(change, lambda pending: SendResult(id=change.id, to=change.to, subject=subject))


def _require_text(what: str, *texts: str) -> None:
    """Refuse strings that are not valid Unicode text (unpaired surrogates): they cannot be stored."""
    for text in texts:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise CallRefused(
                f"{what} is not allowed: the text has an unpaired surrogate, so it is not valid text"
            ) from None


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


# `PathRefused` is re-exported so adapters can catch both refusals from one place.
REFUSALS = (CallRefused, PathRefused)

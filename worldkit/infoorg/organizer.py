"""The five record operations of InfoOrgBench (paper Table 9) over one workspace on disk.

`Organizer` is the library behind the organizer MCP server (`worldkit.mcp.organizer`); the
server only adapts it. Records are files `<folders…>/<ID>.txt`; the organizer lists, reads and
searches them, moves them between folders and reports inventory state. It never changes a
record's bytes, never deletes anything, and never reveals anything about quality.

Moves are serialized and crash-safe. Every operation holds an exclusive `flock` on
`.organizer/lock` (so threads and processes sharing a workspace take turns). A move first writes
its plan to `.organizer/journal.json` (fsynced), then renames one file at a time — each rename is
atomic, so at any instant every record exists exactly once — and deletes the journal when done.
If the process dies mid-way, the next operation (or the next start) finds the journal and rolls
the move forward, so a `move_files` call ends all-or-nothing.

With a `MoveLog` (the MCP server's event log), a move is logged before its journal is dropped:
`committed` stores the move's event (durably) after the renames and before the journal goes, and
recovery of a journal hands the move it completes to `recovered`, which logs it unless the event
was already stored. A journal names the run whose call made it; only that run's log may settle
it (`worldkit log recover RUN`): an organizer logging another run, or none, refuses to start
(`InterruptedMove`) rather than put the killed run's move into a log it does not belong to. So
after a kill at any instant, replaying each run's log gives the tree on disk.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from worldkit.canon import canonical_json, sha256_bytes
from worldkit.errors import ExitCode, WorldkitError
from worldkit.infoorg.organizer_models import (  # the answers, re-exported here
    Assignment,
    FileList,
    FileText,
    Inventory,
    MovedRecord,
    MoveResult,
    RecordEntry,
    SearchMatch,
    SearchResult,
)
from worldkit.infoorg.tree import folder_name_problem
from worldkit.infoorg.validity import (
    ORGANIZER_STATE_DIR,
    RECORD_SUFFIX,
    WorkspaceCheck,
    check_workspace,
)

__all__ = [
    "LIST_PAGE_MAX",
    "Assignment",
    "READ_LENGTH_MAX",
    "SEARCH_MATCHES_MAX",
    "FileList",
    "FileText",
    "InterruptedMove",
    "Inventory",
    "MoveResult",
    "Organizer",
    "OrganizerRefused",
    "RecordEntry",
    "SearchMatch",
    "SearchResult",
]

LIST_PAGE_MAX = 200
READ_LENGTH_MAX = 100_000
SEARCH_MATCHES_MAX = 40
SNIPPET_RADIUS = 80
MOVE_IDS_MAX = 100_000
_NAME_BYTES_MAX = 255
DESTINATION_DEPTH_MAX = 32
"""Most folder components a destination may have (checked before anything is journaled)."""
DESTINATION_BYTES_MAX = 1024
"""Most bytes of the destination's `/`-joined path, record file name included (well under PATH_MAX)."""
_INBOX = "inbox"
_RECORD_ID = re.compile(r"[A-Z][0-9]+")


class OrganizerRefused(WorldkitError):
    """An organizer operation was refused; nothing changed. The message says why and what to do."""

    exit_code = ExitCode.USAGE


class InterruptedMove(OrganizerRefused):
    """The workspace holds the journal of a move that a killed server of another run did not
    finish; that run's log must settle it (`worldkit log recover RUN`) before anything else runs."""

    def __init__(self, workspace: Path, run_id: str) -> None:
        super().__init__(
            f"workspace {workspace} holds a move that run {run_id} did not finish (its server was "
            f"killed mid-move; journal {workspace / ORGANIZER_STATE_DIR / 'journal.json'}); settle it "
            f"into that run's log first: `worldkit log recover {run_id} --workspace {workspace} "
            "--store STORE` with the store that run logged to"
        )
        self.run_id = run_id


def journal_owner(plan: Mapping[str, Any]) -> tuple[str, str] | None:
    """(run id, session) of the logged run whose call wrote a journaled plan, or None."""
    log = plan.get("log")
    if not isinstance(log, dict) or not isinstance(log.get("run_id"), str) or not log["run_id"]:
        return None
    session = log.get("session")
    return log["run_id"], session if isinstance(session, str) else ""


def pending_plan(workspace: Path) -> dict[str, Any] | None:
    """The plan of the interrupted move journaled in `workspace`, or None (no journal, or one
    that cannot be read: the organizer sets that aside when it starts)."""
    journal = Path(workspace) / ORGANIZER_STATE_DIR / "journal.json"
    try:
        plan = json.loads(journal.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return plan if isinstance(plan, dict) else None


_PATH_MAX_DEFAULT = 4096
"""Linux's PATH_MAX, used where the filesystem does not say."""


def _shown(destination: Sequence[str], limit: int = 120) -> str:
    """The destination as a message shows it: cut after `limit` characters, with its size."""
    text = repr(list(destination))
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(destination)} names, {len(text)} characters)"


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_durably(path: Path, data: bytes) -> None:
    """Write `data` to `path` atomically (temp file, fsync, rename, fsync the folder)."""
    temp = path.with_name(path.name + ".tmp")
    with open(temp, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temp, path)
    _fsync_dir(path.parent)


def destination_problem(destination: Sequence[str]) -> str | None:
    """Why `destination` cannot be created as a folder path, or None.

    Besides each name's rules, the depth and the whole path's length are capped, so a destination
    that the filesystem (or a recursive mkdir) could not create is refused before it is journaled.
    """
    if not isinstance(destination, (list, tuple)):
        return f"destination {destination!r} is not a list of folder names"
    if len(destination) > DESTINATION_DEPTH_MAX:
        return f"it has {len(destination)} folder levels; at most {DESTINATION_DEPTH_MAX} are allowed"
    if all(isinstance(name, str) for name in destination):
        total = len("/".join(destination).encode("utf-8", errors="surrogatepass")) + len("/X0000000000.txt")
        if total > DESTINATION_BYTES_MAX:
            return (f"its path is {total} bytes long; at most {DESTINATION_BYTES_MAX} bytes "
                "(DESTINATION_BYTES_MAX) are allowed; use fewer or shorter folder names")
    for index, name in enumerate(destination):
        problem = folder_name_problem(name)
        if problem is None and "\x00" in name:
            problem = f"folder name {name!r} contains a NUL character"
        if problem is None and len(name.encode("utf-8")) > _NAME_BYTES_MAX:
            problem = f"folder name {name[:40]!r}… is longer than {_NAME_BYTES_MAX} bytes"
        if problem is None and index == 0 and name == ORGANIZER_STATE_DIR:
            problem = f"folder name {name!r} is reserved for the organizer's own state"
        if problem:
            return problem
    return None


def _moves_problem(moves: object) -> str | None:
    """Why a journaled move list is not one `move_files` writes (confined relative record paths)."""
    if not isinstance(moves, list):
        return "the journal's moves are not a list"
    for move in moves:
        if not isinstance(move, dict) or not all(isinstance(move.get(k), str) for k in ("id", "from", "to")):
            return f"malformed journal move {move!r}"
        for rel in (move["from"], move["to"]):
            parts = rel.split("/")
            if rel.startswith("/") or any(p in ("", ".", "..") for p in parts) or parts[0] == ORGANIZER_STATE_DIR:
                return f"journal move path {rel!r} leaves the scored tree"
            if not parts[-1] == f"{move['id']}{RECORD_SUFFIX}":
                return f"journal move path {rel!r} is not the file of record {move['id']}"
    return None


class MoveLog(Protocol):
    """Where the organizer logs the moves it completes (see the module docstring)."""

    def tag(self) -> dict[str, str]:
        """Written into each journal: names the log the move is to be logged in."""
        ...

    def committed(self, result: MoveResult, plan: Mapping[str, Any]) -> None:
        """Store the event of a move just made (durable on return), before its journal goes."""
        ...

    def may_settle(self, plan: Mapping[str, Any]) -> bool:
        """Whether this log may complete the journaled `plan`: it is this log's run's, or no
        run's, or its run already holds the move's event (nothing is left to log)."""
        ...

    def recovered(self, result: MoveResult, plan: Mapping[str, Any]) -> None:
        """Log a move that journal recovery completed, unless its event is already stored."""
        ...


def _plan_result(plan: Mapping[str, Any]) -> MoveResult:
    destination = list(plan["destination"])
    return MoveResult(
        destination=destination,
        moved=[
            MovedRecord(id=m["id"], from_path=m["from"].split("/")[:-1], to_path=destination)
            for m in plan["moves"]
        ],
        already_there=list(plan.get("already_there", [])),
    )


class Organizer:
    """The record operations over one workspace (see the module docstring for the guarantees).

    `inventory` maps record id → SHA-256 of its original bytes. When omitted, the inventory saved
    in `.organizer/inventory.json` is used; on the very first start it is taken from the records
    present (each must appear once) and saved, so later checks compare against the original.
    """

    def __init__(
        self,
        workspace: Path,
        *,
        inventory: Mapping[str, str] | None = None,
        move_log: MoveLog | None = None,
    ) -> None:
        self.move_log = move_log
        self.workspace = Path(workspace).resolve()
        if not self.workspace.is_dir():
            raise OrganizerRefused(
                f"workspace {workspace} is not a directory; pass the folder that holds inbox/"
            )
        self.state = self.workspace / ORGANIZER_STATE_DIR
        self.state.mkdir(exist_ok=True)
        self._lock_file = self.state / "lock"
        self._journal = self.state / "journal.json"
        self._root = str(self.workspace)
        self._texts: dict[str, tuple[str, int, int, str]] = {}
        with self._locked():
            self.inventory = dict(sorted(self._load_inventory(inventory).items()))

    # ---- locking, journal, recovery -------------------------------------------------------

    @contextmanager
    def _locked(self) -> Iterator[None]:
        with open(self._lock_file, "a+b") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                if self._journal.exists():
                    self._recover()
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    def _recover(self) -> None:
        """Roll an interrupted move forward: finish every rename its journal lists.

        Refused (`InterruptedMove`, nothing touched) when the journal is another run's that this
        organizer's log may not settle.
        """
        try:
            plan = json.loads(self._journal.read_text(encoding="utf-8"))
            problem = destination_problem(plan["destination"]) or _moves_problem(plan["moves"])
            if problem:
                raise ValueError(problem)
        except (ValueError, KeyError, TypeError, OSError, RecursionError) as error:
            self._reject_plan(error)
            return
        owner = journal_owner(plan)
        if owner is not None and (self.move_log is None or not self.move_log.may_settle(plan)):
            raise InterruptedMove(self.workspace, owner[0])
        try:
            self._apply(plan["moves"], plan["destination"])
        except (ValueError, OSError, RecursionError) as error:
            self._reject_plan(error)
            return
        if self.move_log is not None:
            self.move_log.recovered(_plan_result(plan), plan)
        self._journal.unlink()
        _fsync_dir(self.state)

    def _reject_plan(self, error: BaseException) -> None:
        """A journaled plan that cannot be applied: undo the renames it did, set the journal aside.

        Each rename is atomic, so every record still exists exactly once; undoing brings them back
        to where they were before the move, and the workspace stays usable (the next call and the
        next start no longer trip over the plan). The journal is kept as `journal.rejected.json`.
        """
        try:
            plan = json.loads(self._journal.read_text(encoding="utf-8"))
            moves = plan.get("moves") if isinstance(plan, dict) else None
        except (ValueError, OSError):
            moves = None
        if isinstance(moves, list) and _moves_problem(moves) is None:
            for move in moves:
                source, dest = self.workspace / move["from"], self.workspace / move["to"]
                try:
                    if dest.is_file() and not dest.is_symlink() and not source.exists():
                        os.rename(dest, source)
                except OSError:
                    continue
        os.replace(self._journal, self.state / "journal.rejected.json")
        _fsync_dir(self.state)

    def _apply(self, moves: Sequence[Mapping[str, str]], destination: Sequence[str]) -> None:
        target = self.workspace.joinpath(*destination)
        target.mkdir(parents=True, exist_ok=True)
        touched = {target}
        for move in moves:
            source = self.workspace / move["from"]
            dest = self.workspace / move["to"]
            # A rename either happened or not; never replace an existing file.
            if source.exists() and not dest.exists():
                os.rename(source, dest)
                touched.add(source.parent)
        for folder in touched:
            _fsync_dir(folder)
        parent = target
        while parent != self.workspace:
            parent = parent.parent
            _fsync_dir(parent)

    def _load_inventory(self, given: Mapping[str, str] | None) -> dict[str, str]:
        saved = self.state / "inventory.json"
        if given is not None:
            inventory = dict(given)
        elif saved.is_file():
            return dict(json.loads(saved.read_text(encoding="utf-8"))["records"])
        else:
            inventory = self._capture_inventory()
        _write_durably(
            saved, canonical_json({"schema_version": 1, "records": inventory}).encode("utf-8")
        )
        return inventory

    def _capture_inventory(self) -> dict[str, str]:
        found: dict[str, list[Path]] = {}
        for current, dirnames, filenames in os.walk(self.workspace):
            if Path(current) == self.workspace and ORGANIZER_STATE_DIR in dirnames:
                dirnames.remove(ORGANIZER_STATE_DIR)
            for name in filenames:
                stem = name[: -len(RECORD_SUFFIX)]
                if name.endswith(RECORD_SUFFIX) and _RECORD_ID.fullmatch(stem):
                    found.setdefault(stem, []).append(Path(current) / name)
        doubles = sorted(record for record, where in found.items() if len(where) > 1)
        if doubles:
            raise OrganizerRefused(
                f"cannot take the starting inventory: record {doubles[0]} appears "
                f"{len(found[doubles[0]])} times; start from an unmodified packet workspace"
            )
        if not found:
            raise OrganizerRefused(
                f"workspace {self.workspace} holds no <ID>.txt record; pass a packet workspace"
            )
        return {record: sha256_bytes(where[0].read_bytes()) for record, where in found.items()}

    # ---- reading -----------------------------------------------------------------------------

    def _scan(self, *, hash_bytes: bool = False) -> WorkspaceCheck:
        return check_workspace(self.workspace, self.inventory, hash_bytes=hash_bytes)

    def _where(self, scan: WorkspaceCheck, record: str) -> str:
        if record not in self.inventory:
            raise OrganizerRefused(
                f"unknown record id {record!r}; list_files shows the ids in this workspace"
            )
        where = scan.locations.get(record, [])
        if len(where) != 1:
            state = "is missing" if not where else f"appears {len(where)} times"
            raise OrganizerRefused(
                f"record {record} {state}; run check_inventory and restore exactly one copy"
            )
        return where[0]

    def _text(self, record: str, rel: str) -> str:
        """The record's text, cached while its location, size and mtime stay the same."""
        path = os.path.join(self._root, rel)
        stat = os.stat(path)
        cached = self._texts.get(record)
        if cached and cached[:3] == (rel, stat.st_size, stat.st_mtime_ns):
            return cached[3]
        with open(path, "rb") as handle:
            text = handle.read().decode("utf-8", errors="replace")
        self._texts[record] = (rel, stat.st_size, stat.st_mtime_ns, text)
        return text

    def list_files(self, offset: int = 0, limit: int = LIST_PAGE_MAX) -> FileList:
        """Records ordered by id, `limit` (≤ 200) at a time from `offset`."""
        if offset < 0:
            raise OrganizerRefused("offset must be 0 or more; start at 0")
        if not 1 <= limit <= LIST_PAGE_MAX:
            raise OrganizerRefused(f"limit must be between 1 and {LIST_PAGE_MAX}")
        with self._locked():
            scan = self._scan()
        rows = sorted((r, rel) for r, where in scan.locations.items() for rel in where)
        page = rows[offset : offset + limit]
        end = offset + len(page)
        return FileList(
            entries=[
                RecordEntry(id=r, path=rel.split("/")[:-1], format="text") for r, rel in page
            ],
            offset=offset,
            total=len(rows),
            next_offset=end if end < len(rows) else None,
        )

    def read_file(self, record: str, offset: int = 0, length: int = READ_LENGTH_MAX) -> FileText:
        """`length` (≤ 100,000) characters of a record's exact text from `offset`."""
        if offset < 0:
            raise OrganizerRefused("offset must be 0 or more; start at 0")
        if not 1 <= length <= READ_LENGTH_MAX:
            raise OrganizerRefused(f"length must be between 1 and {READ_LENGTH_MAX:,} characters")
        with self._locked():
            rel = self._where(self._scan(), record)
            text = self._text(record, rel)
        piece = text[offset : offset + length]
        end = offset + len(piece)
        return FileText(
            id=record,
            path=rel.split("/")[:-1],
            text=piece,
            offset=offset,
            total_chars=len(text),
            next_offset=end if end < len(text) else None,
        )

    def search_files(self, query: str, limit: int = SEARCH_MATCHES_MAX) -> SearchResult:
        """Literal, case-insensitive matches of `query` in record bodies, at most 40."""
        if not query.strip():
            raise OrganizerRefused("the query is empty; search for a word or phrase")
        if not 1 <= limit <= SEARCH_MATCHES_MAX:
            raise OrganizerRefused(f"limit must be between 1 and {SEARCH_MATCHES_MAX}")
        pattern = re.compile(re.escape(query), re.IGNORECASE)
        matches: list[SearchMatch] = []
        truncated = False
        with self._locked():
            scan = self._scan()
            for record in sorted(scan.locations):
                for rel in scan.locations[record]:
                    text = self._text(record, rel)
                    for found in pattern.finditer(text):
                        if len(matches) == limit:
                            truncated = True
                            break
                        start = max(0, found.start() - SNIPPET_RADIUS)
                        matches.append(
                            SearchMatch(
                                id=record,
                                path=rel.split("/")[:-1],
                                offset=found.start(),
                                snippet=text[start : found.end() + SNIPPET_RADIUS],
                            )
                        )
                    if truncated:
                        break
                if truncated:
                    break
        return SearchResult(query=query, matches=matches, truncated=truncated)

    def check_inventory(self) -> Inventory:
        """Missing, duplicated, changed, unexpected and unplaced records; nothing about quality."""
        with self._locked():
            scan = self._scan(hash_bytes=True)
        unplaced = sorted(r for r, path in scan.paths.items() if path in ((), (_INBOX,)))
        present = [r for r in scan.paths if r not in scan.changed]
        unexpected = scan.unexpected + [
            f"{path}/ ({why})" for path, why in sorted(scan.bad_folders.items())
        ]
        return Inventory(
            expected=len(self.inventory),
            present=len(present),
            placed=len([r for r in present if r not in unplaced]),
            missing=scan.missing,
            duplicated=scan.duplicated,
            changed=scan.changed,
            unexpected=unexpected,
            unplaced=unplaced,
            intact=not (scan.missing or scan.duplicated or scan.changed or unexpected),
            assignments=[
                Assignment(id=record, path=[*path, f"{record}{RECORD_SUFFIX}"])
                for record, path in sorted(scan.paths.items())
            ],
        )

    # ---- moving ------------------------------------------------------------------------------

    def move_files(self, ids: Sequence[str], destination: Sequence[str]) -> MoveResult:
        """Move records into the folder `destination` (components; [] = root), creating it.

        All-or-nothing: refused as a whole when any id or name is bad; once started, a crash
        is rolled forward on the next operation.
        """
        destination = list(destination)
        records = list(dict.fromkeys(ids))
        if not records:
            raise OrganizerRefused("no record ids given; pass the ids to move")
        if len(records) > MOVE_IDS_MAX:
            raise OrganizerRefused(f"at most {MOVE_IDS_MAX:,} records per move; split the move")
        problem = destination_problem(destination) or self._path_max_problem(destination)
        if problem:
            raise OrganizerRefused(f"cannot create destination {_shown(destination)}: {problem}")
        with self._locked():
            scan = self._scan()
            sources = {record: self._where(scan, record) for record in records}
            self._check_destination(destination)
            moves, already = [], []
            for record in records:
                target = "/".join((*destination, f"{record}{RECORD_SUFFIX}"))
                if sources[record] == target:
                    already.append(record)
                else:
                    moves.append({"id": record, "from": sources[record], "to": target})
            plan: dict[str, Any] = {
                "schema_version": 1, "destination": destination, "moves": moves,
                "already_there": already,
            }  # fmt: skip
            result = _plan_result(plan)
            if moves:
                if self.move_log is not None:
                    plan.update(plan_id=uuid.uuid4().hex, log=self.move_log.tag())
                _write_durably(self._journal, canonical_json(plan).encode("utf-8"))
                self._apply(moves, destination)
                if self.move_log is not None:
                    # Logged before the journal goes: a kill in between is recovered, not lost.
                    self.move_log.committed(result, plan)
                self._journal.unlink()
                _fsync_dir(self.state)
        return result

    def _path_max_problem(self, destination: Sequence[str]) -> str | None:
        """Why the destination's full path would pass the filesystem's PATH_MAX, or None."""
        try:
            limit = os.pathconf(self.workspace, "PC_PATH_MAX")
        except (OSError, ValueError):
            limit = _PATH_MAX_DEFAULT
        full = len(os.path.join(self._root, *destination, "X0000000000.txt").encode("utf-8", errors="surrogatepass"))
        if full >= limit:
            return (f"its full path on disk would be {full} bytes; the filesystem allows at most "
                    f"PATH_MAX = {limit} bytes; use fewer or shorter folder names")
        return None

    def _check_destination(self, destination: Sequence[str]) -> None:
        folder = self.workspace
        for name in destination:
            folder = folder / name
            if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
                rel = folder.relative_to(self.workspace)
                raise OrganizerRefused(
                    f"cannot use {rel} as a folder: a file with that name exists; "
                    "choose another folder name"
                )

    def replay(self, change: Mapping[str, object]) -> None:
        """Re-apply the `state_change` that a logged `move_files` call recorded (log replay)."""
        moves = change.get("moves")
        if change.get("kind") != "infoorg.move_files" or not isinstance(moves, list):
            raise OrganizerRefused(
                "not an organizer move record; replay only `infoorg.move_files` state changes"
            )
        for move in moves:
            self.move_files([move["id"]], move["to"])

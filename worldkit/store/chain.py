"""Checking a run's hash chain, and handing a verified run's state changes to a replay.

A chain is good when events 1..last are all present, each is unedited (its hash matches its
fields), each links to the one before (event 1 to the run's genesis hash), acts as the run's seat
(and, in a run claimed by one server, its session), and it holds the head the run sealed in the
store. Given an anchor (`worldkit.store.anchor`, kept outside the database), the chain must also
hold the anchored event with the anchored hash and, for a final anchor, end exactly there; with
a key, the anchor must carry that key's signature. That is what catches a log cut short with its
head moved back, or recomputed after an edit: nothing inside the database can.
This module must never write to the store, and never hand out events of a chain it has not checked.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from worldkit.canon import canonical_json
from worldkit.errors import LogTampered
from worldkit.store.anchor import AnchorKey, LogAnchor, log_key, signature_problem
from worldkit.store.db import Store
from worldkit.store.times import format_time, parse_time
from worldkit.store.eventlog import (
    LOG_VERSION,
    OUTCOMES,
    Event,
    genesis_hash,
    row_event,
    row_hash,
    stored_rows,
)
from worldkit.store.runs import Head, get_run

_SESSION = re.compile(r"[0-9a-f]{32}")

ProblemKind = Literal[
    "gap", "reordered", "hash_mismatch", "prev_mismatch", "malformed", "seat_mismatch",
    "session_mismatch", "truncated", "head_mismatch", "anchor_mismatch", "anchor_signature",
]  # fmt: skip


class ChainProblem(BaseModel):
    """The first thing wrong with a run's chain."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    seq: int
    """Sequence number of the first bad (or first missing) event."""
    kind: ProblemKind
    """What is wrong: a gap, a reordering, edited content, a broken link, a cut-off tail…"""
    message: str
    """One sentence naming the event and what is wrong with it."""


class ChainReport(BaseModel):
    """The result of checking a run's chain from genesis to its head."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str
    """The run that was checked."""
    seat: str
    """The run's seat."""
    events: int
    """Number of events stored for the run (the chain checked is 1..events)."""
    head_hash: str
    """Hash of the run's last stored event (or its genesis hash)."""
    anchor: str | None = None
    """The anchor the chain was checked against, described (None: no anchor given)."""
    ok: bool
    """True if every event is present, in order, unedited and linked to its predecessor."""
    problem: ChainProblem | None = None
    """The first bad event, if any."""

    @property
    def message(self) -> str:
        if self.problem is None:
            return f"run {self.run_id}: {self.events} events, chain intact (head {self.head_hash})"
        return (
            f"run {self.run_id}: {self.problem.message}; the log cannot be trusted from event "
            f"{self.problem.seq} on: re-run the task to get a trustworthy log"
        )


def verify_chain(
    store: Store,
    run_id: str,
    *,
    expected_head: str | None = None,
    anchor: LogAnchor | None = None,
    key: AnchorKey | bytes | None | Literal["env"] = "env",
) -> ChainReport:
    """Check the run's chain from genesis to its last event; the report names the first problem.

    `expected_head` is a head hash recorded elsewhere: the chain must end exactly there.
    `anchor` is the run's anchor (see the module docstring); `key` the anchor key (default:
    `WORLDKIT_LOG_KEY`; None: no key).
    """
    report, _ = _scan(store, run_id, expected_head, anchor, key, collect=False)
    return report


def require_intact(
    store: Store,
    run_id: str,
    *,
    expected_head: str | None = None,
    anchor: LogAnchor | None = None,
    key: AnchorKey | bytes | None | Literal["env"] = "env",
) -> ChainReport:
    """`verify_chain`, raising `LogTampered` (naming the first bad event) on a broken chain."""
    report = verify_chain(store, run_id, expected_head=expected_head, anchor=anchor, key=key)
    if not report.ok:
        raise LogTampered(report.message)
    return report


def state_changes(
    store: Store,
    run_id: str,
    *,
    expected_head: str | None = None,
    anchor: LogAnchor | None = None,
    key: AnchorKey | bytes | None | Literal["env"] = "env",
) -> Iterator[Event]:
    """The run's state-changing events in order, for replay, after verifying the whole chain.

    Raises `LogTampered` before yielding anything if the chain is broken.
    """
    report, changes = _scan(store, run_id, expected_head, anchor, key, collect=True)
    if not report.ok:
        raise LogTampered(report.message)
    return iter(changes)


def verified_events(
    store: Store,
    run_id: str,
    *,
    anchor: LogAnchor | None = None,
    key: AnchorKey | bytes | None | Literal["env"] = "env",
) -> tuple[ChainReport, list[Event]]:
    """Every event of the run after verifying the chain (against `anchor`); raises on a break."""
    report, events = _scan(store, run_id, None, anchor, key, collect=True, every=True)
    if not report.ok:
        raise LogTampered(report.message)
    return report, events


def verify_exported(
    events: list[Mapping[str, Any]],
    anchor: LogAnchor,
    *,
    key: AnchorKey | bytes | None | Literal["env"] = "env",
) -> ChainReport:
    """Check an exported copy of a run's events (e.g. an execution record's trajectory) as a
    chain on its own, against the run's anchor: no store needed.

    Every event must re-hash to its hash and link to the one before from the run's genesis;
    the copy must hold the anchored event and, for a final anchor, end there.
    """
    head = Head(run_id=anchor.run_id, seat=anchor.seat, seq=len(events), hash="", session="")
    expected_seq, prev = 1, genesis_hash(anchor.run_id)
    seen: dict[int, str] = {0: prev}
    problem: ChainProblem | None = None
    for index, exported in enumerate(events, start=1):
        try:
            row = _exported_row(exported)
        except (KeyError, TypeError, ValueError) as error:
            problem = ChainProblem(
                seq=index, kind="malformed", message=f"event {index} of the copy: {error}"
            )
            break
        problem = _check(head, row, expected_seq, prev)
        if problem is not None:
            break
        seen[row["seq"]] = row["hash"]
        expected_seq, prev = expected_seq + 1, row["hash"]
    if problem is None:
        problem = _check_anchor(
            head, expected_seq - 1, anchor, seen, log_key() if key == "env" else key
        )
    return ChainReport(
        run_id=anchor.run_id,
        seat=anchor.seat,
        events=len(events),
        head_hash=prev,
        ok=problem is None,
        problem=problem,
        anchor=anchor.describe(),
    )


def _exported_row(exported: Mapping[str, Any]) -> dict[str, Any]:
    event = Event.model_validate(exported)
    def text(value: Any) -> str | None:
        return None if value is None else canonical_json(value)[:-1]
    return {
        "version": event.version, "run_id": event.run_id, "seq": event.seq,
        "time": format_time(event.time), "seat": event.seat, "session": event.session,
        "tool": event.tool, "arguments": text(event.arguments), "outcome": event.outcome,
        "result_digest": event.result_digest, "detail": text(event.detail),
        "state_change": text(event.state_change), "prev_hash": event.prev_hash,
        "hash": event.hash,
    }  # fmt: skip


def _scan(
    store: Store,
    run_id: str,
    expected_head: str | None,
    anchor: LogAnchor | None,
    key: AnchorKey | bytes | None | Literal["env"],
    *,
    collect: bool,
    every: bool = False,
) -> tuple[ChainReport, list[Event]]:
    head = get_run(store, run_id)
    changes: list[Event] = []
    wanted = {head.sealed_seq} | ({anchor.seq} if anchor is not None else set())
    seen: dict[int, str] = {0: genesis_hash(run_id)}
    expected_seq, prev = 1, genesis_hash(run_id)
    problem: ChainProblem | None = None
    for row in stored_rows(store, run_id, 0, head.seq):
        problem = _check(head, row, expected_seq, prev)
        if problem is not None:
            break
        if collect and (every or row["state_change"] is not None):
            changes.append(row_event(row))
        if row["seq"] in wanted:
            seen[row["seq"]] = row["hash"]
        expected_seq, prev = expected_seq + 1, row["hash"]
    if problem is None:
        problem = _check_tail(head, expected_seq - 1, prev, expected_head, seen)
    if problem is None and anchor is not None:
        problem = _check_anchor(head, expected_seq - 1, anchor, seen, log_key() if key == "env" else key)
    report = ChainReport(
        run_id=run_id,
        seat=head.seat,
        events=head.seq,
        head_hash=head.hash,
        ok=problem is None,
        problem=problem,
        anchor=anchor.describe() if anchor is not None else None,
    )
    return report, changes


def _check(head: Head, row: dict[str, Any], seq: int, prev: str) -> ChainProblem | None:
    if row["seq"] != seq:
        return ChainProblem(
            seq=seq,
            kind="gap",
            message=f"event {seq} is missing: the stored log jumps from event {seq - 1} "
            f"to event {row['seq']}",
        )
    malformed = _malformed(row)
    if malformed:
        return ChainProblem(seq=seq, kind="malformed", message=f"event {seq}: {malformed}")
    if row_hash(row) != row["hash"]:
        written_as = _original_seq(row, head.seq)
        if written_as is not None:
            return ChainProblem(
                seq=seq,
                kind="reordered",
                message=f"event {seq} is out of order: the event stored there was written as "
                f"event {written_as}",
            )
        return ChainProblem(
            seq=seq,
            kind="hash_mismatch",
            message=f"event {seq} ({row['tool']}) was altered: its content no longer matches "
            "its hash",
        )
    if row["prev_hash"] != prev:
        return ChainProblem(
            seq=seq,
            kind="prev_mismatch",
            message=f"event {seq} does not follow event {seq - 1}: its prev hash "
            f"{row['prev_hash'][:16]}… is not the hash {prev[:16]}… of the event before it",
        )
    if row["seat"] != head.seat:
        return ChainProblem(
            seq=seq,
            kind="seat_mismatch",
            message=f"event {seq} acts as seat {row['seat']}, but run {head.run_id} belongs "
            f"to seat {head.seat}",
        )
    if head.exclusive and row["session"] != head.session:
        return ChainProblem(
            seq=seq,
            kind="session_mismatch",
            message=f"event {seq} was written by session {row['session'][:8]}…, but run "
            f"{head.run_id} is claimed by session {head.session[:8]}…: a second writer "
            "interleaved its events",
        )
    return None


def _check_tail(
    head: Head, last_seq: int, last_hash: str, expected_head: str | None, seen: dict[int, str]
) -> ChainProblem | None:
    if last_seq < head.seq:
        return ChainProblem(
            seq=last_seq + 1,
            kind="truncated",
            message=f"events {last_seq + 1}–{head.seq} are missing: the stored log ends at "
            f"event {last_seq}",
        )
    if last_seq < head.sealed_seq:
        return ChainProblem(
            seq=last_seq + 1,
            kind="truncated",
            message=f"events {last_seq + 1}–{head.sealed_seq} are missing: the run's sealed "
            f"head records {head.sealed_seq} events but the stored log ends at event {last_seq}",
        )
    if head.sealed_seq and seen.get(head.sealed_seq) != head.sealed_hash:
        return ChainProblem(
            seq=head.sealed_seq,
            kind="head_mismatch",
            message=f"event {head.sealed_seq}'s hash is not the head hash the run sealed",
        )
    if expected_head is not None and last_hash != expected_head:
        return ChainProblem(
            seq=last_seq,
            kind="head_mismatch",
            message=f"the chain ends at event {last_seq} with hash {last_hash[:16]}…, not at the "
            f"expected head {expected_head[:16]}…",
        )
    return None


def _check_anchor(
    head: Head, last_seq: int, anchor: LogAnchor, seen: dict[int, str], key: AnchorKey | bytes | None
) -> ChainProblem | None:
    def problem(kind: ProblemKind, seq: int, text: str) -> ChainProblem:
        return ChainProblem(seq=seq, kind=kind, message=f"against its {anchor.describe()}: {text}")

    unsigned = signature_problem(anchor, key)
    if unsigned is not None:
        return problem("anchor_signature", anchor.seq, unsigned)
    if anchor.run_id != head.run_id or anchor.seat != head.seat:
        return problem(
            "anchor_mismatch", anchor.seq,
            f"the anchor is for run {anchor.run_id} (seat {anchor.seat}), not run {head.run_id} "
            f"(seat {head.seat})",
        )  # fmt: skip
    if head.exclusive and anchor.session != head.session:
        return problem(
            "anchor_mismatch", anchor.seq,
            f"the anchor was written by session {anchor.session[:8]}…, but the run is claimed "
            f"by session {head.session[:8]}…",
        )  # fmt: skip
    if last_seq < anchor.seq:
        return problem(
            "truncated", last_seq + 1,
            f"events {last_seq + 1}–{anchor.seq} are missing: the anchor records {anchor.seq} "
            f"events but the stored log ends at event {last_seq} (cut short, head moved back)",
        )  # fmt: skip
    if seen.get(anchor.seq) != anchor.hash:
        return problem(
            "anchor_mismatch", anchor.seq,
            f"event {anchor.seq} has hash {str(seen.get(anchor.seq))[:16]}…, the anchor "
            f"{anchor.hash[:16]}…: the log was rewritten (or its chain recomputed) up to there",
        )  # fmt: skip
    if anchor.final and last_seq != anchor.seq:
        return problem(
            "anchor_mismatch", anchor.seq + 1,
            f"the log was closed at event {anchor.seq} but the store holds events up to "
            f"{last_seq}: events were added after the run ended",
        )  # fmt: skip
    return None


def _malformed(row: Mapping[str, Any]) -> str | None:
    """Why a stored row cannot be a genuine event, or None."""
    if row["version"] != LOG_VERSION:
        return f"format version {row['version']} is not {LOG_VERSION}"
    if not isinstance(row["session"], str) or not _SESSION.fullmatch(row["session"]):
        return f"session {row['session']!r} is not a session id"
    if row["outcome"] not in OUTCOMES:
        return f"outcome {row['outcome']!r} is not one of {', '.join(OUTCOMES)}"
    try:
        if format_time(parse_time(row["time"])) != row["time"]:
            return f"time {row['time']!r} is not in the stored form"
    except ValueError:
        return f"time {row['time']!r} is not a time"
    for field in ("arguments", "detail", "state_change"):
        text = row[field]
        if text is None:
            if field == "arguments":
                return "arguments are missing"
            continue
        try:
            value = json.loads(text)
        except ValueError:
            return f"{field} are not valid JSON (edited after they were written)"
        if not isinstance(value, dict) or canonical_json(value)[:-1] != text:
            return f"{field} are not canonical JSON (edited after they were written)"
    return None


def _original_seq(row: dict[str, Any], limit: int) -> int | None:
    """The seq an unedited row was hashed with, if it sits at another position (reordering)."""
    for candidate in range(1, limit + 1):
        if candidate != row["seq"] and row_hash({**row, "seq": candidate}) == row["hash"]:
            return candidate
    return None

"""Tampering that gets past the database guards is caught by the hash chain, naming the event.

Each test drops the guards (as someone with DDL rights could), edits the stored log behind the
API, and requires `verify_chain` to name the first bad event and what is wrong with it.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from worldkit.errors import ExitCode, LogTampered
from worldkit.store import (
    EventLog,
    Store,
    require_intact,
    row_hash,
    state_changes,
    verify_chain,
)

Tamper = Callable[..., None]  # the `tamper` fixture: raw SQL with the guards dropped

SEAT = "EMP-QC-001"
RUN = "run-1"


@pytest.fixture
def logged(store: Store) -> Store:
    """Six events; event 4 changes state."""
    with EventLog(store, RUN, SEAT) as log:
        for i in range(1, 7):
            change = {"op": "touch", "n": i} if i == 4 else None
            log.append("read_file", {"path": f"file{i}.txt"}, "ok", "a" * 64, state_change=change)
    assert verify_chain(store, RUN).ok
    return store


def _problem(store: Store) -> tuple[int, str, str]:
    report = verify_chain(store, RUN)
    assert not report.ok and report.problem is not None
    return report.problem.seq, report.problem.kind, report.message


def test_one_edited_byte_of_arguments_is_named(logged: Store, tamper: Tamper) -> None:
    tamper("UPDATE log_events SET arguments = replace(arguments, 'file3', 'filE3') WHERE seq = 3")
    seq, kind, message = _problem(logged)
    assert (seq, kind) == (3, "hash_mismatch")
    assert "event 3 (read_file) was altered" in message and "re-run the task" in message


def test_an_edit_that_breaks_the_json_is_named(logged: Store, tamper: Tamper) -> None:
    tamper("UPDATE log_events SET arguments = replace(arguments, '}', ']') WHERE seq = 5")
    assert _problem(logged)[:2] == (5, "malformed")


def test_an_edit_that_keeps_the_value_but_not_the_bytes_is_named(
    logged: Store, tamper: Tamper
) -> None:
    tamper("UPDATE log_events SET arguments = replace(arguments, ':', ': ') WHERE seq = 2")
    seq, kind, message = _problem(logged)
    assert (seq, kind) == (2, "malformed") and "not canonical JSON" in message


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("outcome", "'denied'"),
        ("result_digest", "NULL"),
        ("time", "'2026-01-01T00:00:00.000000Z'"),
        ("state_change", "NULL"),
        ("tool", "'write_file'"),
    ],
)
def test_edits_of_any_field_are_named(logged: Store, tamper: Tamper, column, value) -> None:
    tamper(f"UPDATE log_events SET {column} = {value} WHERE seq = 4")
    assert _problem(logged)[:2] == (4, "hash_mismatch")


def test_a_deleted_event_is_named_as_a_gap(logged: Store, tamper: Tamper) -> None:
    tamper("DELETE FROM log_events WHERE seq = 2")
    seq, kind, message = _problem(logged)
    assert (seq, kind) == (2, "gap")
    assert "event 2 is missing: the stored log jumps from event 1 to event 3" in message


def test_a_deleted_last_event_is_named_against_the_run_head(logged: Store, tamper: Tamper) -> None:
    tamper("DELETE FROM log_events WHERE seq = 6")
    seq, kind, message = _problem(logged)
    assert (seq, kind) == (6, "truncated") and "head records 6 events" in message


def test_swapped_events_are_named_as_reordered(logged: Store, tamper: Tamper) -> None:
    # On SQLite the key holds the seq too (`event_key`): a swap that wants to go unseen moves both.
    key = ", id = id - seq + {}" if logged.backend == "sqlite" else ""
    tamper(f"UPDATE log_events SET seq = 1000{key.format(1000)} WHERE seq = 3")
    tamper(f"UPDATE log_events SET seq = 3{key.format(3)} WHERE seq = 4")
    tamper(f"UPDATE log_events SET seq = 4{key.format(4)} WHERE seq = 1000")
    seq, kind, message = _problem(logged)
    assert (seq, kind) == (3, "reordered")
    assert "the event stored there was written as event 4" in message


def test_an_edit_with_a_recomputed_hash_breaks_the_next_link(
    logged: Store, tamper: Tamper
) -> None:
    (row,) = _rows(logged, 3)
    forged = {**row, "arguments": '{"path":"forged.txt"}'}
    tamper(
        "UPDATE log_events SET arguments = :arguments, hash = :hash WHERE seq = 3",
        arguments=forged["arguments"],
        hash=row_hash(forged),
    )
    seq, kind, message = _problem(logged)
    assert (seq, kind) == (4, "prev_mismatch") and "event 4 does not follow event 3" in message


def test_a_tail_cut_together_with_the_head_is_caught_by_an_expected_head(
    logged: Store, tamper: Tamper
) -> None:
    full = verify_chain(logged, RUN)
    (row,) = _rows(logged, 5)
    tamper("DELETE FROM log_events WHERE seq = 6")
    tamper("UPDATE log_runs SET head_seq = 5, head_hash = :h", h=row["hash"])
    assert verify_chain(logged, RUN).ok  # nothing inside the store can tell
    report = verify_chain(logged, RUN, expected_head=full.head_hash)
    assert not report.ok and report.problem is not None
    assert (report.problem.seq, report.problem.kind) == (5, "head_mismatch")


def test_a_broken_chain_refuses_replay_and_require_intact(logged: Store, tamper: Tamper) -> None:
    tamper("UPDATE log_events SET arguments = replace(arguments, 'file5', 'file6') WHERE seq = 5")
    with pytest.raises(LogTampered, match="event 5") as caught:
        state_changes(logged, RUN)
    assert caught.value.exit_code == ExitCode.CHECK_FAILED
    with pytest.raises(LogTampered, match="event 5"):
        require_intact(logged, RUN)


def test_an_event_acting_as_another_seat_is_named(logged: Store, tamper: Tamper) -> None:
    (row,) = _rows(logged, 6)
    forged = {**row, "seat": "EMP-HR-001"}
    tamper(
        "UPDATE log_events SET seat = :seat, hash = :hash WHERE seq = 6",
        seat="EMP-HR-001",
        hash=row_hash(forged),
    )
    tamper("UPDATE log_runs SET head_hash = :hash", hash=row_hash(forged))
    assert _problem(logged)[:2] == (6, "seat_mismatch")


def _rows(store: Store, seq: int) -> list[dict]:
    import sqlalchemy as sa

    from worldkit.store.schema import log_events

    with store.engine.connect() as conn:
        query = sa.select(log_events).where(log_events.c.run_id == RUN, log_events.c.seq == seq)
        return [dict(row._mapping) for row in conn.execute(query)]

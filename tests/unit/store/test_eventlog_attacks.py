"""The attacks of issue 11 on the event log, each reproduced and shown caught.

- overwrites the database refuses: REPLACE / INSERT OR REPLACE / upserts on both log tables
  (SQLite fires no delete trigger for REPLACE), UPDATE and DELETE on both backends;
- tampering past the guards (DDL rights: triggers dropped) that nothing inside the database can
  tell: a log cut short with its head moved back, a chain recomputed after an edit — caught by
  the anchor kept outside the store, the recomputation only with a signed anchor;
- two writers claiming one run id; a second session interleaving events into a claimed run.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.unit.store.conftest import drop_guards
from worldkit.errors import LogTampered
from worldkit.store import (
    EventLog,
    RunIdTaken,
    Store,
    make_anchor,
    read_anchor,
    require_intact,
    row_hash,
    verify_chain,
    write_anchor,
)
from worldkit.store.runs import get_run
from worldkit.store.schema import event_key, events_table, log_events

SEAT = "EMP-QC-001"
RUN = "run-1"
KEY = b"the user's secret key"


@pytest.fixture
def logged(store: Store, tmp_path: Path) -> Store:
    """Six events in a claimed run, closed: sealed head and a final anchor in `anchor.json`."""
    with EventLog(store, RUN, SEAT, claim=True, anchor=tmp_path / "anchor.json", key=None) as log:
        for i in range(1, 7):
            log.append("read_file", {"path": f"file{i}.txt"}, "ok", "a" * 64)
    return store


def _raw(store: Store, sql: str, **params: object) -> None:
    with store.engine.begin() as conn:
        conn.execute(sa.text(sql), params)


def _rows(store: Store) -> list[dict]:
    with store.engine.connect() as conn:
        query = sa.select(log_events).where(log_events.c.run_id == RUN).order_by(log_events.c.seq)
        return [dict(row._mapping) for row in conn.execute(query)]


COLUMNS = "run_id, seq, version, time, seat, session, tool, arguments, outcome, result_digest, detail, state_change, prev_hash, hash"  # noqa: E501
# Every stored column of event 3, with the arguments swapped: a row that is valid in every way
# except that it overwrites an existing event.
OVERWRITE_EVENT_3 = {
    "sqlite": [
        f"REPLACE INTO log_events ({COLUMNS}) SELECT run_id, seq, version, time, seat, session, tool, "
        "'{\"path\":\"forged.txt\"}', outcome, result_digest, detail, state_change, prev_hash, hash "
        "FROM log_events WHERE seq = 3",
        f"INSERT OR REPLACE INTO log_events ({COLUMNS}) SELECT run_id, seq, version, time, seat, session, "
        "tool, '{}', outcome, result_digest, detail, state_change, prev_hash, hash FROM log_events WHERE seq = 3",
        # The same with the event's integer key (schema 5), as someone who read the layout would.
        f"REPLACE INTO log_events (id, {COLUMNS}) SELECT id, run_id, seq, version, time, seat, session, tool, "
        "'{\"path\":\"forged.txt\"}', outcome, result_digest, detail, state_change, prev_hash, hash "
        "FROM log_events WHERE seq = 3",
        f"INSERT OR REPLACE INTO log_events (id, {COLUMNS}) SELECT id, run_id, seq, version, time, seat, "
        "session, tool, '{}', outcome, result_digest, detail, state_change, prev_hash, hash FROM log_events "
        "WHERE seq = 3",
        f"INSERT INTO log_events (id, {COLUMNS}) SELECT id, run_id, seq, version, time, seat, session, tool, "
        "arguments, outcome, result_digest, detail, state_change, prev_hash, hash FROM log_events WHERE seq = 3 "
        "ON CONFLICT (id) DO UPDATE SET arguments = '{}'",
        # A new key (another run's range) carrying event 3's run and seq: a second copy of it.
        f"INSERT INTO log_events (id, {COLUMNS}) SELECT id + 4294967296, run_id, seq, version, time, seat, "
        "session, tool, '{}', outcome, result_digest, detail, state_change, prev_hash, hash FROM log_events "
        "WHERE seq = 3",
    ],
    "postgresql": [
        f"INSERT INTO log_events ({COLUMNS}) SELECT run_id, seq, version, time, seat, session, tool, "
        "arguments, outcome, result_digest, detail, state_change, prev_hash, hash FROM log_events WHERE seq = 3 "
        "ON CONFLICT (run_id, seq) DO UPDATE SET arguments = '{}'",
    ],
}
RUN_COLUMNS = "run_id, seat, created_at, session, exclusive, head_seq, head_hash"
OVERWRITE_RUN = {
    "sqlite": [
        # Move the head back to event 0 (genesis): hides every event from a head-based check.
        f"REPLACE INTO log_runs ({RUN_COLUMNS}) SELECT run_id, seat, created_at, session, exclusive, 0, "
        "head_hash FROM log_runs",
        f"INSERT OR REPLACE INTO log_runs ({RUN_COLUMNS}) SELECT run_id, seat, created_at, session, 0, "
        "head_seq, head_hash FROM log_runs",
        f"INSERT INTO log_runs ({RUN_COLUMNS}) SELECT run_id, seat, created_at, session, exclusive, head_seq, "
        "head_hash FROM log_runs WHERE true ON CONFLICT (run_id) DO UPDATE SET head_seq = 2",
        # A new run id with the run's key (schema 5): REPLACE would delete the run's row on the
        # unique conflict, orphaning its events' keys.
        f"REPLACE INTO log_runs ({RUN_COLUMNS}, run_key) SELECT 'run-2', seat, created_at, session, exclusive, "
        "head_seq, head_hash, run_key FROM log_runs",
        f"INSERT INTO log_runs ({RUN_COLUMNS}, run_key) SELECT 'run-2', seat, created_at, session, exclusive, "
        "0, head_hash, run_key FROM log_runs WHERE true ON CONFLICT (run_key) DO UPDATE SET head_seq = 2",
    ],
    "postgresql": [
        f"INSERT INTO log_runs ({RUN_COLUMNS}) SELECT run_id, seat, created_at, session, exclusive, head_seq, "
        "head_hash FROM log_runs ON CONFLICT (run_id) DO UPDATE SET head_seq = 2",
        f"INSERT INTO log_runs ({RUN_COLUMNS}) SELECT run_id, seat, created_at, session, exclusive, head_seq, "
        "head_hash FROM log_runs ON CONFLICT (run_id) DO UPDATE SET exclusive = 0",
    ],
}


def test_replace_and_upsert_of_an_event_are_refused(logged: Store) -> None:
    before = _rows(logged)
    statements = OVERWRITE_EVENT_3[logged.backend]
    for sql in statements:
        # Without the key (or with a key that is not its run's and seq's), SQLite's guard refuses
        # the row for its key (not next to its predecessor's) before it could overwrite anything.
        with pytest.raises(sa.exc.DBAPIError, match="append-only|extend its run's chain"):
            _raw(logged, sql)
    assert _rows(logged) == before and verify_chain(logged, RUN).ok


def test_replace_and_upsert_of_a_run_are_refused(logged: Store) -> None:
    with logged.engine.connect() as conn:
        before = conn.exec_driver_sql("SELECT * FROM log_runs").all()
    for sql in OVERWRITE_RUN[logged.backend]:
        with pytest.raises(sa.exc.DBAPIError, match="already claimed|head"):
            _raw(logged, sql)
    with logged.engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT * FROM log_runs").all() == before


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE log_events SET arguments = '{}' WHERE seq = 6",
        "DELETE FROM log_events WHERE seq = 6",
        "UPDATE log_runs SET head_seq = 5",
        "UPDATE log_runs SET session = 'ffffffffffffffffffffffffffffffff'",
        "UPDATE log_runs SET exclusive = 0",
        "DELETE FROM log_runs",
    ],
)
def test_updates_and_deletes_on_both_tables_are_refused(logged: Store, sql: str) -> None:
    with pytest.raises(sa.exc.DBAPIError, match="append-only|head|cannot be deleted"):
        _raw(logged, sql)
    assert verify_chain(logged, RUN).events == 6


def _cut_to_five(store: Store) -> None:
    """Past the guards: delete event 6 and move the sealed head back onto event 5."""
    drop_guards(store)
    five = _rows(store)[4]
    _raw(store, "DELETE FROM log_events WHERE seq = 6")
    _raw(store, "UPDATE log_runs SET head_seq = 5, head_hash = :h", h=five["hash"])


def test_a_log_cut_short_with_its_head_moved_back_is_caught_by_the_anchor(
    logged: Store, tmp_path: Path
) -> None:
    anchor = read_anchor(tmp_path / "anchor.json")
    assert (anchor.seq, anchor.final, anchor.signature) == (6, True, None)
    _cut_to_five(logged)
    assert verify_chain(logged, RUN, key=None).ok  # nothing inside the store can tell
    report = verify_chain(logged, RUN, anchor=anchor, key=None)
    assert not report.ok and report.problem is not None
    assert (report.problem.kind, report.problem.seq) == ("truncated", 6)
    assert "anchor records 6 events but the stored log ends at event 5" in report.message
    with pytest.raises(LogTampered, match="cut short"):
        require_intact(logged, RUN, anchor=anchor, key=None)


def _recompute_from_three(store: Store) -> str:
    """Past the guards: edit event 3, re-hash 3..6 so every link holds, move the sealed head."""
    drop_guards(store)
    rows = _rows(store)
    prev = rows[1]["hash"]
    for row in rows[2:]:
        if row["seq"] == 3:
            row["arguments"] = '{"path":"forged.txt"}'
        row["prev_hash"] = prev
        row["hash"] = prev = row_hash(row)
        _raw(store, "UPDATE log_events SET arguments = :a, prev_hash = :p, hash = :h WHERE seq = :s",
             a=row["arguments"], p=row["prev_hash"], h=row["hash"], s=row["seq"])  # fmt: skip
    _raw(store, "UPDATE log_runs SET head_hash = :h", h=prev)
    return prev


def test_a_recomputed_chain_is_caught_by_the_anchor_it_no_longer_ends_at(
    logged: Store, tmp_path: Path
) -> None:
    anchor = read_anchor(tmp_path / "anchor.json")
    _recompute_from_three(logged)
    assert verify_chain(logged, RUN, key=None).ok  # a consistent chain: only the anchor knows
    report = verify_chain(logged, RUN, anchor=anchor, key=None)
    assert not report.ok and report.problem is not None
    assert report.problem.kind == "anchor_mismatch" and "rewritten" in report.message


def test_a_recomputed_chain_with_a_rewritten_anchor_is_caught_only_with_the_key(
    store: Store, tmp_path: Path
) -> None:
    path = tmp_path / "anchor.json"
    with EventLog(store, RUN, SEAT, claim=True, anchor=path, key=KEY) as log:
        for i in range(1, 7):
            log.append("read_file", {"path": f"file{i}.txt"}, "ok", "a" * 64)
    signed = read_anchor(path)
    assert signed.signature is not None and signed.signature.key_id in path.read_text()
    assert KEY.decode() not in path.read_text()
    assert verify_chain(store, RUN, anchor=signed, key=KEY).ok
    new_head = _recompute_from_three(store)
    # The attacker, without the key, rewrites the anchor to the recomputed head.
    forged = make_anchor(run_id=RUN, seat=SEAT, session=signed.session, seq=6, head_hash=new_head,
                         final=True, key=None)  # fmt: skip
    write_anchor(forged, path)
    assert verify_chain(store, RUN, anchor=read_anchor(path), key=None).ok  # unsigned: undetectable
    report = verify_chain(store, RUN, anchor=read_anchor(path), key=KEY)
    assert not report.ok and report.problem is not None and report.problem.kind == "anchor_signature"
    assert "not signed although WORLDKIT_LOG_KEY is set" in report.message
    # ... or keeps the signature and edits the head: the MAC no longer matches.
    resigned = signed.model_copy(update={"hash": new_head})
    report = verify_chain(store, RUN, anchor=resigned, key=KEY)
    assert report.problem is not None and report.problem.kind == "anchor_signature"
    assert "does not match its contents" in report.message
    # ... or signs with a key of their own.
    own = make_anchor(run_id=RUN, seat=SEAT, session=signed.session, seq=6, head_hash=new_head,
                      final=True, key=b"attacker")  # fmt: skip
    report = verify_chain(store, RUN, anchor=own, key=KEY)
    assert report.problem is not None and "not with the key" in report.message


def test_a_signed_anchor_cannot_be_checked_without_the_key(store: Store, tmp_path: Path) -> None:
    with EventLog(store, RUN, SEAT, claim=True, anchor=tmp_path / "a.json", key=KEY) as log:
        log.append("list_files", {}, "ok", None)
    report = verify_chain(store, RUN, anchor=read_anchor(tmp_path / "a.json"), key=None)
    assert not report.ok and "set WORLDKIT_LOG_KEY" in report.message


def test_events_added_after_a_final_anchor_are_caught(logged: Store, tmp_path: Path) -> None:
    anchor = read_anchor(tmp_path / "anchor.json")
    drop_guards(logged)
    with logged.engine.begin() as conn:
        conn.exec_driver_sql("UPDATE log_runs SET exclusive = 0")
    with EventLog(logged, RUN, SEAT) as late:
        late.append("read_file", {"path": "later.txt"}, "ok", None)
    report = verify_chain(logged, RUN, anchor=anchor, key=None)
    assert report.problem is not None and "events were added after the run ended" in report.message


def test_an_in_progress_anchor_accepts_a_longer_log_but_not_a_shorter_one(
    store: Store, tmp_path: Path
) -> None:
    path = tmp_path / "anchor.json"
    log = EventLog(store, RUN, SEAT, claim=True, anchor=path, key=None, anchor_every=0.0)
    for i in range(4):
        log.append("read_file", {"path": f"f{i}"}, "ok", None)
    midway = read_anchor(path)  # as a killed server leaves it: not final
    assert (midway.seq, midway.final) == (4, False)
    log.append("read_file", {"path": "f5"}, "ok", None)
    assert verify_chain(store, RUN, anchor=midway, key=None).ok
    drop_guards(store)
    _raw(store, "DELETE FROM log_events WHERE seq >= 4")
    report = verify_chain(store, RUN, anchor=midway, key=None)
    assert report.problem is not None and report.problem.kind == "truncated"


def test_a_second_claim_of_a_run_id_is_refused(store: Store) -> None:
    EventLog(store, RUN, SEAT, claim=True).close()
    with pytest.raises(RunIdTaken, match="run id run-1 is already claimed") as caught:
        EventLog(store, RUN, SEAT, claim=True)
    assert caught.value.exit_code == 2
    with pytest.raises(RunIdTaken, match="cannot be joined"):
        EventLog(store, RUN, SEAT)  # not even as a cooperating writer


def test_of_two_simultaneous_claims_exactly_one_wins(store: Store) -> None:
    outcomes: list[str] = []
    barrier = threading.Barrier(2)

    def claim() -> None:
        barrier.wait()
        try:
            EventLog(store, "contested", SEAT, claim=True).close()
            outcomes.append("claimed")
        except RunIdTaken:
            outcomes.append("refused")

    threads = [threading.Thread(target=claim) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["claimed", "refused"]


def test_events_of_a_second_session_in_a_claimed_run_are_caught(logged: Store) -> None:
    """A writer that inserts valid next links into a claimed run under its own session."""
    last = _rows(logged)[-1]
    row = {**last, "seq": 7, "session": "f" * 32, "prev_hash": last["hash"], "arguments": "{}"}
    row["hash"] = row_hash(row)
    table = events_table(logged.engine.dialect)
    if "id" in table.c:  # SQLite: the key a writer must give
        row["id"] = event_key(get_run(logged, RUN).run_key, 7)
    with logged.engine.begin() as conn:
        conn.execute(sa.insert(table).values(**row))
    report = verify_chain(logged, RUN, key=None)
    assert report.problem is not None and report.problem.kind == "session_mismatch"
    assert "a second writer interleaved its events" in report.message

"""The event log through its API: appending, reading, hashing, state changes, runs."""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from worldkit.canon import sha256_json
from worldkit.errors import StoreError, UsageError
from worldkit.store import (
    EventLog,
    Store,
    genesis_hash,
    list_runs,
    read_events,
    require_intact,
    row_hash,
    state_changes,
    verify_chain,
)

SEAT = "EMP-QC-001"
START = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)


def ticking_clock(start: datetime = START, step: timedelta = timedelta(seconds=1)):
    counter = itertools.count()
    return lambda: start + step * next(counter)


def _session(log: EventLog) -> None:
    log.append("list_files", {"offset": 0, "limit": 50}, "ok", "1" * 64)
    log.append("read_file", {"path": "hr/salaries.xlsx"}, "denied", None, {"reason": "HR only"})
    log.append(
        "update_record",
        {"id": "DEV-0042", "status": "closed"},
        "ok",
        "2" * 64,
        state_change={"op": "set_status", "id": "DEV-0042", "status": "closed"},
    )
    log.append("read_file", {"path": "../etc/passwd"}, "error", None, {"error": "PathRefused"})


def test_appended_events_read_back_exactly(store: Store) -> None:
    with EventLog(store, "run-1", SEAT, clock=ticking_clock()) as log:
        first = log.append("list_files", {"offset": 0}, "ok", "a" * 64)
        second = log.append(
            "read_file", {"path": "sop/é.md", "length": 10}, "denied", None, {"why": "x"}
        )
    assert list(read_events(store, "run-1")) == [first, second]
    assert (first.seq, second.seq) == (1, 2)
    assert first.prev_hash == genesis_hash("run-1")
    assert second.prev_hash == first.hash
    assert first.time == START and second.time == START + timedelta(seconds=1)
    assert first.time.tzinfo is not None
    assert (second.seat, second.tool, second.outcome) == (SEAT, "read_file", "denied")
    assert second.arguments == {"path": "sop/é.md", "length": 10}
    assert second.detail == {"why": "x"} and second.result_digest is None


def test_each_hash_covers_every_other_field(store: Store) -> None:
    with EventLog(store, "run-1", SEAT) as log:
        _session(log)
    for event in read_events(store, "run-1"):
        assert event.hash == sha256_json(event.hash_payload())
        fields = set(type(event).model_fields)
        assert set(event.hash_payload()) | {"hash", "version"} == fields | {"v"}


def test_the_genesis_hash_depends_on_the_run_id_only() -> None:
    assert genesis_hash("run-1") == genesis_hash("run-1") != genesis_hash("run-2")


def test_time_is_digested_only_into_the_event_hash(store: Store) -> None:
    early = EventLog(store, "early", SEAT, clock=ticking_clock())
    late = EventLog(store, "late", SEAT, clock=ticking_clock(START + timedelta(days=9)))
    for log in (early, late):
        log.append("update_record", {"id": "D1"}, "ok", "3" * 64, state_change={"id": "D1"})
        log.close()
    (a,), (b,) = read_events(store, "early"), read_events(store, "late")
    assert a.hash != b.hash
    assert (a.arguments, a.result_digest, a.state_change) == (
        b.arguments,
        b.result_digest,
        b.state_change,
    )


def test_read_events_after_a_sequence_number(store: Store) -> None:
    with EventLog(store, "run-1", SEAT) as log:
        _session(log)
    assert [e.seq for e in read_events(store, "run-1", after=2)] == [3, 4]


def test_append_many_writes_consecutive_events(store: Store) -> None:
    with EventLog(store, "run-1", SEAT) as log:
        log.append("list_files", {}, "ok", None)
        batch = log.append_many(
            [
                {"tool": "read_file", "arguments": {"path": f"f{i}"}, "outcome": "ok"}
                for i in range(5)
            ]
        )
        assert log.append_many([]) == []
        assert log.head().seq == 6
    assert [e.seq for e in batch] == [2, 3, 4, 5, 6]
    assert verify_chain(store, "run-1").ok


def test_state_changes_are_the_mutations_in_order(store: Store) -> None:
    with EventLog(store, "run-1", SEAT) as log:
        _session(log)
        log.append("update_record", {"id": "CAPA-7"}, "ok", None, state_change={"id": "CAPA-7"})
    changes = list(state_changes(store, "run-1"))
    assert [(e.seq, e.state_change["id"]) for e in changes] == [(3, "DEV-0042"), (5, "CAPA-7")]


def test_a_fresh_run_verifies_with_no_events(store: Store) -> None:
    EventLog(store, "empty", SEAT).close()
    report = require_intact(store, "empty")
    assert (report.ok, report.events, report.head_hash) == (True, 0, genesis_hash("empty"))
    assert list(read_events(store, "empty")) == []


def test_a_run_acts_as_one_seat(store: Store) -> None:
    EventLog(store, "run-1", SEAT).close()
    with pytest.raises(StoreError, match="run run-1 already belongs to seat EMP-QC-001, not X"):
        EventLog(store, "run-1", "X")
    EventLog(store, "run-1", SEAT).close()  # reopening with the same seat is fine


def test_every_event_names_its_writer_session(store: Store) -> None:
    with EventLog(store, "run-1", SEAT) as first:
        first.append("list_files", {}, "ok", None)
    with EventLog(store, "run-1", SEAT) as second:
        second.append("list_files", {}, "ok", None)
    events = list(read_events(store, "run-1"))
    assert [e.session for e in events] == [first.session, second.session]
    assert first.session != second.session and len(first.session) == 32


@pytest.mark.parametrize("run_id", ["", "has space", "-leading", "x" * 129, "a/b"])
def test_bad_run_ids_are_refused(store: Store, run_id: str) -> None:
    with pytest.raises(UsageError, match="run id .* is not valid"):
        EventLog(store, run_id, SEAT)


def test_unknown_runs_are_usage_errors_naming_the_fix(store: Store) -> None:
    for call in (verify_chain, state_changes, lambda s, r: list(read_events(s, r))):
        with pytest.raises(UsageError, match="no run 'nope' in store .*worldkit log list"):
            call(store, "nope")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"outcome": "maybe"}, "outcome 'maybe' of a t call is not one of ok, denied, error"),
        ({"result_digest": "XYZ"}, "result digest 'XYZ' of a t call is not a lowercase hex"),
        ({"arguments": ["a"]}, "arguments of a t call must be a JSON object"),
        ({"arguments": {"b": b"bytes"}}, "arguments of a t call cannot be stored as JSON"),
        ({"state_change": "x"}, "state_change of a t call must be a JSON object"),
        ({"tool": ""}, "tool name '' must be a non-empty string"),
    ],
)
def test_bad_calls_are_refused_and_nothing_is_appended(store: Store, kwargs, match) -> None:
    call = {"tool": "t", "arguments": {}, "outcome": "ok", "result_digest": None, **kwargs}
    with EventLog(store, "run-1", SEAT) as log:
        with pytest.raises(StoreError, match=match):
            log.append(**call)
        with pytest.raises(StoreError, match=match):
            log.append_many([{"tool": "t", "arguments": {}, "outcome": "ok"}, call])
        assert log.head().seq == 0


def test_list_runs(store: Store) -> None:
    with EventLog(store, "b-run", "EMP-A", clock=ticking_clock()) as log:
        _session(log)
    EventLog(store, "a-run", "EMP-B").close()
    runs = {run.run_id: run for run in list_runs(store)}
    assert set(runs) == {"a-run", "b-run"}
    assert (runs["b-run"].seat, runs["b-run"].events) == ("EMP-A", 4)
    assert runs["b-run"].last_time == START + timedelta(seconds=3)
    assert runs["a-run"].last_time is None and runs["a-run"].head_hash == genesis_hash("a-run")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text() | st.floats(allow_nan=False),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)
json_objects = st.dictionaries(st.text(max_size=8), json_values, max_size=5)
_runs = itertools.count()


@settings(max_examples=60, deadline=None)
@given(arguments=json_objects, state_change=st.none() | json_objects)
def test_any_json_arguments_round_trip_and_verify(arguments, state_change) -> None:
    with Store.open("sqlite://") as store:
        run_id = f"h{next(_runs)}"
        with EventLog(store, run_id, SEAT) as log:
            written = log.append("t", arguments, "ok", None, state_change=state_change)
        (read,) = read_events(store, run_id)
        assert read == written and read.arguments == arguments
        assert read.hash == sha256_json(read.hash_payload())
        assert verify_chain(store, run_id).ok


def test_row_hash_matches_the_canonical_payload() -> None:
    row = {
        "version": 2,
        "run_id": "r",
        "seq": 7,
        "time": "2026-03-02T09:00:00.000000Z",
        "seat": "S",
        "session": "ab" * 16,
        "tool": "t\u00e9\"",
        "arguments": '{"a":[1,2.5,"\\n"]}',
        "outcome": "ok",
        "result_digest": None,
        "detail": None,
        "state_change": '{"z":{}}',
        "prev_hash": "0" * 64,
    }
    payload = {
        "arguments": {"a": [1, 2.5, "\n"]},
        "detail": None,
        "outcome": "ok",
        "prev_hash": "0" * 64,
        "result_digest": None,
        "run_id": "r",
        "seat": "S",
        "seq": 7,
        "session": "ab" * 16,
        "state_change": {"z": {}},
        "time": "2026-03-02T09:00:00.000000Z",
        "tool": "t\u00e9\"",
        "v": 2,
    }
    assert row_hash(row) == sha256_json(payload)


def test_the_servers_append_path_stores_what_append_would(store) -> None:
    """`record` (the lone writer's one-INSERT path, its hash text built from pre-encoded fields)
    stores events whose hashes are those of `Event.hash_payload`, for awkward values too."""
    from worldkit.store.eventlog import row_hash, stored_rows

    calls = [
        ("read_file", {"path": "é/ü \"q\" \\ \n"}, "ok", "0" * 64, None, None),
        ("wr\u00efte", {"n": [1, 2.5, None, True]}, "denied", None, {"why": "ß"}, None),
        ("write_file", {}, "error", None, None, {"op": "put", "path": "a/b", "bytes": "✓"}),
    ]
    with EventLog(store, "run-e", "Seat ✓", clock=ticking_clock()) as log:
        heads = [log.record(*call) for call in calls]
    rows = list(stored_rows(store, "run-e", 0, 10))
    assert [(row["seq"], row["hash"]) for row in rows] == heads == [(n, h) for n, h in heads]
    events = list(read_events(store, "run-e"))
    assert [sha256_json(event.hash_payload()) for event in events] == [h for _, h in heads]
    assert [row_hash(row) for row in rows] == [h for _, h in heads]
    assert [(e.tool, e.arguments, e.outcome, e.detail, e.state_change) for e in events] == [
        (tool, args, outcome, detail, change) for tool, args, outcome, _, detail, change in calls
    ]
    assert verify_chain(store, "run-e").ok

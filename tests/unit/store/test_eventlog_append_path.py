"""The lone writer's append path (`EventLog.record`) and the clock text it stores.

`record` writes the time as `times.now_text` gives it (the default clock) or as the injected
clock says; on SQLite its INSERT carries the log's run id, seat and session as SQL literals, so
seats that need quoting, or cannot be a literal at all (a NUL), must store exactly what `append`
would.
"""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta, timezone

import pytest

from worldkit.store import EventLog, Store, read_events, row_hash, times, verify_chain
from worldkit.store.eventlog import stored_rows
from worldkit.store.times import format_time, now_text, parse_time, utc_now

START = datetime(2026, 3, 2, 9, 0, 59, 999_999, tzinfo=timezone.utc)


def test_now_text_is_the_clock_in_the_stored_form() -> None:
    before = utc_now()
    text = now_text()
    after = utc_now()
    assert format_time(parse_time(text)) == text and text.endswith("Z") and len(text) == 27
    assert before <= parse_time(text) <= after


@pytest.mark.parametrize(
    "moments",
    [
        # Across a second, a minute, an hour, a day, a month and a year (the cached text changes).
        [datetime(2026, 12, 31, 23, 59, 59, 999_999, tzinfo=timezone.utc) + timedelta(microseconds=n)
         for n in (0, 1, 2, 1_000_000, 1_000_001)],
        # Back in time (a clock set back), and the same second again after another one.
        [datetime(2026, 3, 2, 9, 0, 5, 7, tzinfo=timezone.utc), datetime(2026, 3, 2, 9, 0, 4, tzinfo=timezone.utc),
         datetime(2026, 3, 2, 9, 0, 5, 999_999, tzinfo=timezone.utc)],
    ],
)  # fmt: skip
def test_now_text_equals_format_time_of_the_same_instant(monkeypatch, moments: list[datetime]) -> None:
    epoch = datetime(1970, 1, 1, tzinfo=timezone.utc)
    for moment in moments:
        ns = (moment - epoch) // timedelta(microseconds=1) * 1000 + 999  # sub-microsecond: dropped
        monkeypatch.setattr(times, "_time_ns", lambda ns=ns: ns)
        assert now_text() == format_time(moment)


def test_record_stores_the_injected_clocks_time(store: Store) -> None:
    ticks = itertools.count()
    with EventLog(store, "clocked", "EMP-QC-001", clock=lambda: START + timedelta(seconds=next(ticks))) as log:
        for n in range(3):
            log.record("read_file", {"path": f"f{n}"}, "ok", None)
    assert [event.time for event in read_events(store, "clocked")] == [
        START + timedelta(seconds=n) for n in range(3)
    ]


def test_record_with_the_default_clock_stores_the_time_of_the_call(store: Store) -> None:
    with EventLog(store, "now", "EMP-QC-001") as log:
        before = utc_now()
        log.record("read_file", {"path": "f"}, "ok", None)
        after = utc_now()
    (event,) = read_events(store, "now")
    assert before <= event.time <= after


def _record_all(store: Store, seat: str, calls: list[tuple]) -> list[tuple[int, str]]:
    """`record` each call into run "by-record"; every call after the first (which opens the log's
    connection by the general path) must take the lone writer's one-INSERT path."""
    with EventLog(store, "by-record", seat) as log:
        heads = [log.record(*calls[0])]
        general: list[int] = []
        write = log._write
        log._write = lambda entries: general.append(len(entries)) or write(entries)  # type: ignore[method-assign]
        heads += [log.record(*call) for call in calls[1:]]
    assert general == []
    return heads


@pytest.mark.parametrize(
    "seat", ["O'Brien", "a''b'", "'; DROP TABLE log_events; --", "Seat ✓ é", "nul\x00seat", "?"]
)
def test_record_stores_what_append_would_for_any_seat(store: Store, seat: str) -> None:
    """Quotes, SQL, non-ASCII and a NUL (no literal can hold it: the values are bound instead)."""
    if "\x00" in seat and store.backend == "postgresql":
        pytest.skip("PostgreSQL text cannot hold a NUL")
    calls = [("read_file", {"path": "x"}, "ok", "0" * 64), ("write_file", {"p": "'"}, "denied", None)] * 2
    heads = _record_all(store, seat, calls)
    with EventLog(store, "by-append", seat) as log:
        appended = [log.append(*call) for call in calls]
    recorded = list(read_events(store, "by-record"))
    assert [(e.seq, e.hash) for e in recorded] == heads
    assert [(e.seat, e.tool, e.arguments, e.outcome, e.result_digest) for e in recorded] == [
        (e.seat, e.tool, e.arguments, e.outcome, e.result_digest) for e in appended
    ]
    assert all(event.seat == seat for event in recorded)
    assert [row_hash(row) for row in stored_rows(store, "by-record", 0, 9)] == [h for _, h in heads]
    assert verify_chain(store, "by-record").ok and verify_chain(store, "by-append").ok


def test_record_stores_what_append_would_for_every_optional_field(store: Store) -> None:
    """`detail`, `state_change` and `result_digest` each set or None, in every combination: on
    SQLite the lone writer's INSERT writes a None `detail` / `state_change` as the literal NULL."""
    calls = [
        ("update_record", {"id": n}, "ok" if digest else "error", digest, detail, change)
        for n, (digest, detail, change) in enumerate(
            itertools.product(["d" * 64, None], [{"why": "x"}, None], [{"op": "set", "id": 1}, None])
        )
    ] * 2  # fmt: skip
    heads = _record_all(store, "EMP-QC-001", calls)
    with EventLog(store, "by-append", "EMP-QC-001") as log:
        appended = [log.append(*call) for call in calls]
    recorded = list(read_events(store, "by-record"))
    assert [(e.seq, e.hash) for e in recorded] == heads
    fields = [(e.tool, e.arguments, e.outcome, e.result_digest, e.detail, e.state_change) for e in recorded]
    assert fields == [(e.tool, e.arguments, e.outcome, e.result_digest, e.detail, e.state_change) for e in appended]
    assert fields == [(t, a, o, r, d, c) for t, a, o, r, d, c in calls]
    assert [row_hash(row) for row in stored_rows(store, "by-record", 0, len(calls))] == [h for _, h in heads]
    assert verify_chain(store, "by-record").ok and verify_chain(store, "by-append").ok

"""A killed server's run resumed by its own session (crash recovery appends to the run's own
log): the chain stays one writer's; another session, or a run not in the store, is refused."""

from __future__ import annotations

import pytest

from worldkit.errors import StoreError, UsageError
from worldkit.store import EventLog, Store, read_events, verify_chain


def test_the_runs_own_session_resumes_it_and_no_other(store_url: str) -> None:
    with Store.open(store_url) as store:
        killed = EventLog(store, "run-k", "S1", claim=True, key=None)
        killed.append("move_files", {"ids": ["F1"]}, "ok", None)
        killed._release()  # the server dies: no close, no seal
        with pytest.raises(StoreError, match="only the run's own session"):
            EventLog(store, "run-k", "S1", resume_session="0" * 32, key=None)
        with pytest.raises(UsageError, match="not in the store"):
            EventLog(store, "run-x", "S1", resume_session=killed.session, key=None)
        with EventLog(store, "run-k", "S1", resume_session=killed.session, key=None) as resumed:
            resumed.append("move_files", {"ids": ["F2"]}, "ok", None, {"recovered": "yes"})
        assert [e.arguments["ids"] for e in read_events(store, "run-k")] == [["F1"], ["F2"]]
        assert {e.session for e in read_events(store, "run-k")} == {killed.session}
        assert verify_chain(store, "run-k", key=None).ok

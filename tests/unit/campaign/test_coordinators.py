"""One coordinator per campaign, leased by the store's clock, with fencing: the three multi-host
failures of the old cross-host claiming cannot happen (SQLite and PostgreSQL)."""

from __future__ import annotations

import os
import time

import pytest
import sqlalchemy as sa

from worldkit.campaign import claims
from worldkit.store import Store


def run_id(seq: int, attempt: int) -> str:
    return f"c-{seq:04d}.t.a{attempt}"


def _age(store: Store, campaign_id: str, seconds: float) -> None:
    """Make the coordinator's last heartbeat `seconds` old by the store's own clock."""
    with store.write() as conn:
        now = claims.db_now(conn)
        conn.execute(sa.update(claims.coordinators).where(claims.coordinators.c.campaign_id == campaign_id)
                     .values(heartbeat_at=now - seconds))


def test_a_second_coordinator_is_refused_even_with_the_same_host_name_and_pid(store_url: str) -> None:
    """Two coordinators in separate PID namespaces share a host name and may share a pid: neither
    identifies them, the random coordinator id does, and the second is refused while the first lives."""
    with Store.open(store_url) as store:
        claims.ensure_campaign(store, "c1", "d" * 64, "{}", range(1, 5))
        first, second = claims.new_coordinator_id(), claims.new_coordinator_id()
        assert first != second
        assert claims.acquire(store, "c1", first, executor="local", folder="/host-a/out") is None
        with pytest.raises(claims.CoordinatorBusy, match="another coordinator .* pid %d" % os.getpid()) as caught:
            claims.acquire(store, "c1", second, executor="local", folder="/host-b/out")
        assert caught.value.exit_code == 2 and "--executor ray" in caught.value.message
        # its workers claim nothing either: their holder names a coordinator not in charge
        assert claims.claim_next(store, "c1", claims.this_holder(second), run_id) is None
        assert claims.claim_next(store, "c1", claims.this_holder(first), run_id) is not None


def test_the_lease_is_the_stores_clock_not_the_hosts(store_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A host whose clock runs 150 s ahead (or behind) does not take a live coordinator's campaign."""
    with Store.open(store_url) as store:
        claims.ensure_campaign(store, "c2", "e" * 64, "{}", [1])
        live = claims.new_coordinator_id()
        claims.acquire(store, "c2", live, executor="local", folder="/a")
        for skew in (150.0, -150.0):
            real = time.time
            monkeypatch.setattr(time, "time", lambda skew=skew: real() + skew)
            with pytest.raises(claims.CoordinatorBusy):
                claims.acquire(store, "c2", claims.new_coordinator_id(), executor="local", folder="/b")
            monkeypatch.undo()
        _age(store, "c2", claims.COORDINATOR_LEASE_S + 1)
        newcomer = claims.new_coordinator_id()
        assert claims.acquire(store, "c2", newcomer, executor="local", folder="/b") == live


def test_a_superseded_coordinators_workers_are_fenced(store_url: str) -> None:
    """A coordinator stopped past its lease (kill -STOP) loses the campaign; when it resumes, its
    worker's finish records nothing, it claims nothing, and it learns it must stop."""
    with Store.open(store_url) as store:
        claims.ensure_campaign(store, "c3", "f" * 64, "{}", [1, 2])
        old = claims.new_coordinator_id()
        claims.acquire(store, "c3", old, executor="local", folder="/a")
        stale = claims.this_holder(old)
        held = claims.claim_next(store, "c3", stale, run_id)
        _age(store, "c3", claims.COORDINATOR_LEASE_S + 5)
        new = claims.new_coordinator_id()
        me = claims.this_holder(new)
        assert claims.acquire(store, "c3", new, executor="local", folder="/b") == old
        released = claims.release_dead(store, "c3", lease_s=0, me=me)  # the old coordinator's claims all go
        assert [r.seq for r in released] == [held.seq]
        again = claims.claim_next(store, "c3", me, run_id)
        assert (again.seq, again.attempt) == (held.seq, 2)
        # the stopped coordinator resumes:
        assert not claims.finish(store, "c3", held, stale, status="done", record_sha256="0" * 64)
        assert claims.claim_next(store, "c3", stale, run_id) is None
        assert not claims.keep(store, "c3", old)
        assert claims.finish(store, "c3", again, me, status="done", record_sha256="1" * 64)
        rows = {r.seq: r for r in claims.rows(store, "c3")}
        assert (rows[held.seq].status, rows[held.seq].attempt, rows[held.seq].record_sha256) == ("done", 2, "1" * 64)


def test_a_stopped_worker_keeps_its_run_however_long_it_is_stopped(store_url: str) -> None:
    """Workers are judged by their process, not a heartbeat: a worker stopped longer than any lease
    is alive, so its run is not handed to another worker (no second execution, no second record)."""
    with Store.open(store_url) as store:
        claims.ensure_campaign(store, "c4", "a" * 64, "{}", [1])
        coordinator = claims.new_coordinator_id()
        claims.acquire(store, "c4", coordinator, executor="local", folder="/a")
        worker = claims.this_holder(coordinator)  # this very (live) process stands for the stopped worker
        held = claims.claim_next(store, "c4", worker, run_id)
        with store.write() as conn:
            conn.execute(sa.update(claims.campaign_runs).values(heartbeat_at=claims.db_now(conn) - 10_000))
        assert claims.release_dead(store, "c4", lease_s=120,
                                   me=claims.this_holder(coordinator)) == []
        dead = claims.Holder(worker.host, 2**22 + 4321, "1", coordinator)  # a worker that really died
        with store.write() as conn:
            conn.execute(sa.update(claims.campaign_runs).values(holder=str(dead)))
        assert [r.seq for r in claims.release_dead(store, "c4", lease_s=0, me=claims.this_holder(coordinator))] == [held.seq]


def test_a_coordinator_killed_on_this_host_is_taken_over_at_once(store_url: str) -> None:
    """kill -9 of a coordinator: the next one on the same host and folder holds the folder's lock,
    which the kernel freed, so it need not wait for the lease."""
    with Store.open(store_url) as store:
        claims.ensure_campaign(store, "c5", "b" * 64, "{}", [1])
        killed = claims.new_coordinator_id()
        claims.acquire(store, "c5", killed, executor="local", folder="/runs/camp")
        assert claims.acquire(store, "c5", claims.new_coordinator_id(), executor="local", folder="/runs/camp") == killed


def test_a_coordinator_that_ends_gives_the_campaign_up(store_url: str) -> None:
    with Store.open(store_url) as store:
        claims.ensure_campaign(store, "c6", "c" * 64, "{}", [1])
        ended = claims.new_coordinator_id()
        claims.acquire(store, "c6", ended, executor="ray", folder="/a")
        claims.release(store, "c6", ended)
        assert claims.acquire(store, "c6", claims.new_coordinator_id(), executor="ray", folder="/b") is None

"""Claims in the store: each planned run is taken exactly once, on both backends, and a lost claim
records nothing."""

from __future__ import annotations

import threading
from collections import Counter

from worldkit.campaign import claims
from worldkit.store import Store


def run_id(seq: int, attempt: int) -> str:
    return f"c-{seq:04d}.a{attempt}"


def test_concurrent_workers_claim_each_run_once(store_url: str) -> None:
    with Store.open(store_url) as store:
        assert claims.ensure_campaign(store, "c1", "d" * 64, "{}", range(1, 41))
        assert not claims.ensure_campaign(store, "c1", "d" * 64, "{}", range(1, 41))
    taken: list[int] = []
    lock = threading.Lock()

    def worker(index: int) -> None:
        holder = claims.Holder("host", 10_000 + index, "0")
        with Store.open(store_url) as own:
            while (claim := claims.claim_next(own, "c1", holder, run_id)) is not None:
                with lock:
                    taken.append(claim.seq)
                assert claims.finish(own, "c1", claim, holder, status="done", record_sha256="0" * 64)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert Counter(taken) == Counter(range(1, 41))
    with Store.open(store_url) as store:
        assert {r.status for r in claims.rows(store, "c1")} == {"done"}


def test_a_claim_of_a_dead_holder_is_released_and_its_finish_refused(store_url: str) -> None:
    dead = claims.Holder(claims.this_holder().host, 2**22 + 12345, "1")  # no such process
    me = claims.this_holder()
    with Store.open(store_url) as store:
        claims.ensure_campaign(store, "c2", "e" * 64, "{}", [1, 2])
        first = claims.claim_next(store, "c2", dead, run_id)
        assert first is not None and first.run_id == "c-0001.a1"
        released = claims.release_dead(store, "c2", lease_s=3600, me=me)
        assert [r.seq for r in released] == [1]
        assert not claims.finish(store, "c2", first, dead, status="done")  # lost: nothing recorded
        again = claims.claim_next(store, "c2", me, run_id)
        assert again is not None and (again.seq, again.attempt, again.run_id) == (1, 2, "c-0001.a2")
        assert claims.finish(store, "c2", again, me, status="done")
        # a live holder on another host keeps its claim until its heartbeat is older than the lease
        other = claims.Holder("elsewhere", 1, "0")
        second = claims.claim_next(store, "c2", other, run_id)
        assert claims.release_dead(store, "c2", lease_s=3600, me=me) == []
        assert [r.seq for r in claims.release_dead(store, "c2", lease_s=-1, me=me)] == [second.seq]


def test_a_store_holding_another_plan_under_the_id_is_refused(store_url: str) -> None:
    import pytest

    from worldkit.errors import StoreError

    with Store.open(store_url) as store:
        claims.ensure_campaign(store, "c3", "a" * 64, "{}", [1])
        with pytest.raises(StoreError, match="holds campaign c3 with plan aaaaaaaaaaaa…"):
            claims.ensure_campaign(store, "c3", "b" * 64, "{}", [1])

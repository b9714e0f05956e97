"""The campaign's bookkeeping in the store: the plan's runs, who holds which, what is finished.

Tables of their own (created beside the store's tables, never altering them): `campaigns` (one
row per plan digest), `campaign_runs` (one row per planned run), `campaign_coordinators` (the one
coordinator running a campaign) and `campaign_discards` (results that arrived for an attempt that
no longer counted).

One coordinator runs a campaign at a time, on one host: it takes the campaign with a random
coordinator id (`acquire`), and keeps it by a heartbeat stamped with the *database server's* clock
(`db_now`), so no host's clock and no host name decide who is alive. A second coordinator is
refused while the first's heartbeat is younger than the lease; once older, the campaign passes to
the newcomer and everything the old one holds is fenced: its claims, finishes and heartbeats are
conditional on the campaign still naming it. Spreading a campaign over machines is Ray's job
(`worldkit.campaign.ray_executor`), not this table's.

A worker claims the next pending run in plan order in one transaction (`FOR UPDATE SKIP LOCKED` on
PostgreSQL; SQLite's write lock serializes). Every claim bumps the run's attempt and names its
holder (coordinator id, host, pid, process start time); finishing is conditional on still holding
that attempt, so a run is recorded at most once. A claim whose worker process died is returned to
the pool by `release_dead` (the coordinator's own workers are its children, checked by pid and
start time in its own PID namespace); claims of an earlier, superseded coordinator all are.

This module never touches run folders; the executor does.
"""

from __future__ import annotations

import os
import secrets
import socket
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from worldkit.errors import ExitCode, StoreError
from worldkit.store import Store

__all__ = [
    "Claim", "CoordinatorBusy", "Holder", "acquire", "claim_next", "db_now", "discard", "discards", "ensure_campaign",
    "finish", "keep", "new_coordinator_id", "release", "release_dead", "rows", "this_holder",
]

metadata = sa.MetaData()

campaigns = sa.Table(
    "campaigns",
    metadata,
    sa.Column("campaign_id", sa.String(32), primary_key=True),
    sa.Column("plan_sha256", sa.String(64), nullable=False),
    sa.Column("plan_json", sa.Text, nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
)

campaign_runs = sa.Table(
    "campaign_runs",
    metadata,
    sa.Column("campaign_id", sa.String(32), sa.ForeignKey("campaigns.campaign_id"), primary_key=True),
    sa.Column("seq", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("status", sa.String(16), nullable=False),  # pending | running | done | failed
    sa.Column("attempt", sa.Integer, nullable=False),
    sa.Column("run_id", sa.String(128), nullable=True),
    sa.Column("holder", sa.String(300), nullable=True),
    sa.Column("heartbeat_at", sa.Float, nullable=True),
    sa.Column("started_at", sa.Float, nullable=True),
    sa.Column("finished_at", sa.Float, nullable=True),
    sa.Column("record_sha256", sa.String(64), nullable=True),
    sa.Column("error", sa.Text, nullable=True),
    sa.Column("rss_kb", sa.Integer, nullable=True),
)

coordinators = sa.Table(
    "campaign_coordinators",
    metadata,
    sa.Column("campaign_id", sa.String(32), sa.ForeignKey("campaigns.campaign_id"), primary_key=True),
    sa.Column("coordinator_id", sa.String(64), nullable=False),
    sa.Column("host", sa.String(300), nullable=False),
    sa.Column("pid", sa.Integer, nullable=False),
    sa.Column("executor", sa.String(16), nullable=False),
    sa.Column("folder", sa.Text, nullable=False),  # the campaign folder it holds (locked) on its host
    sa.Column("heartbeat_at", sa.Float, nullable=False),  # the database server's clock
)

discarded = sa.Table(
    "campaign_discards",
    metadata,
    sa.Column("campaign_id", sa.String(32), sa.ForeignKey("campaigns.campaign_id"), primary_key=True),
    sa.Column("run_id", sa.String(128), primary_key=True),
    sa.Column("seq", sa.Integer, nullable=False),
    sa.Column("at", sa.Float, nullable=False),
    sa.Column("reason", sa.Text, nullable=False),
)

STATUSES = ("pending", "running", "done", "failed")
COORDINATOR_LEASE_S = 30.0
"""A coordinator whose heartbeat (database clock) is older than this may be superseded."""
_PG_DDL_LOCK = 0x776B63616D70  # "wkcamp"


def _start_time(pid: int) -> str:
    """The process's start time in clock ticks since boot ('' where /proc is missing)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().rpartition(")")[2].split()[19]
    except OSError:
        return ""


@dataclass(frozen=True)
class Holder:
    """Who holds a claim: the coordinator it works for, its host, pid and the process's start time
    (so a reused pid is not alive). Without a coordinator (`""`) nothing is fenced: only the
    bookkeeping's own tests hold claims that way."""

    host: str
    pid: int
    started: str
    coordinator: str = ""

    def __str__(self) -> str:
        own = f"{self.host}:{self.pid}:{self.started}"
        return f"{self.coordinator}@{own}" if self.coordinator else own

    @classmethod
    def parse(cls, text: str) -> Holder:
        coordinator, _, own = text.rpartition("@")
        host, pid, started = own.rsplit(":", 2)
        return cls(host, int(pid), started, coordinator)

    def alive(self) -> bool:
        """Whether this holder's process still runs (only answerable on its own host)."""
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass
        return _start_time(self.pid) == self.started


def _host() -> str:
    """This host: its name and boot id (two machines, or one rebooted, are never the same host)."""
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as handle:
            boot = handle.read().strip()[:8]
    except OSError:
        boot = "-"
    return f"{socket.gethostname()}/{boot}"


def this_holder(coordinator: str = "") -> Holder:
    pid = os.getpid()
    return Holder(_host(), pid, _start_time(pid), coordinator)


def new_coordinator_id() -> str:
    """A fresh coordinator id: random, so two coordinators never share one (host names, PID
    namespaces and reused pids make anything derived from the process ambiguous)."""
    return secrets.token_hex(16)


def db_now(conn: Connection) -> float:
    """The database server's clock, in seconds since the epoch (every host reads the same one)."""
    if conn.dialect.name == "postgresql":
        return float(conn.execute(sa.text("SELECT extract(epoch from clock_timestamp())")).scalar_one())
    return float(conn.execute(sa.text("SELECT (julianday('now') - 2440587.5) * 86400.0")).scalar_one())


class CoordinatorBusy(StoreError):
    """Another coordinator runs this campaign and its heartbeat is fresh (a usage error: wait for it)."""

    exit_code = ExitCode.USAGE


def acquire(store: Store, campaign_id: str, coordinator_id: str, *, executor: str, folder: str,
            lease_s: float = COORDINATOR_LEASE_S) -> str | None:
    """Take the campaign for `coordinator_id`, which holds the lock of the campaign folder `folder`
    on this host; the superseded coordinator's id, if there was one.

    Refused (`CoordinatorBusy`) while another coordinator's heartbeat is younger than `lease_s`
    seconds by the database's clock — unless that coordinator held the very folder this one now
    holds the lock of, on this host (the same kernel, by boot id): the kernel released its lock, so
    it is gone (a kill -9 resumes at once)."""
    install(store)
    c = coordinators.c
    with store.guard("write to"), store.write() as conn:
        now = db_now(conn)
        row = conn.execute(sa.select(coordinators).where(c.campaign_id == campaign_id).with_for_update()).first()
        if row is None:
            conn.execute(sa.insert(coordinators).values(
                campaign_id=campaign_id, coordinator_id=coordinator_id, host=_host(), pid=os.getpid(),
                executor=executor, folder=folder, heartbeat_at=now))  # fmt: skip
            return None
        age = now - row.heartbeat_at
        gone = row.host == _host() and row.folder == folder
        if row.coordinator_id != coordinator_id and age < lease_s and not gone:
            raise CoordinatorBusy(
                f"campaign {campaign_id} is being run by another coordinator ({row.executor} executor, pid "
                f"{row.pid} on {row.host.split('/')[0]}, last heard from {age:.0f} s ago by the store's clock); "
                "one coordinator runs a campaign: wait for it to finish (`worldkit campaign status`), or, to "
                "spread a campaign over machines, run it once with `--executor ray` against a Ray cluster"
            )
        conn.execute(sa.update(coordinators).where(c.campaign_id == campaign_id).values(
            coordinator_id=coordinator_id, host=_host(), pid=os.getpid(), executor=executor, folder=folder,
            heartbeat_at=now))
        return None if row.coordinator_id == coordinator_id else row.coordinator_id


def keep(store: Store, campaign_id: str, coordinator_id: str) -> bool:
    """The coordinator's heartbeat; False if the campaign passed to another coordinator (then this
    one must stop: nothing it finishes counts any more)."""
    c = coordinators.c
    with store.guard("write to"), store.write() as conn:
        result = conn.execute(sa.update(coordinators)
                              .where(c.campaign_id == campaign_id, c.coordinator_id == coordinator_id)
                              .values(heartbeat_at=db_now(conn)))
        return result.rowcount == 1


def release(store: Store, campaign_id: str, coordinator_id: str) -> None:
    """Give the campaign up (a coordinator that ends), so the next one need not wait for the lease."""
    c = coordinators.c
    with store.guard("write to"), store.write() as conn:
        conn.execute(sa.delete(coordinators).where(c.campaign_id == campaign_id, c.coordinator_id == coordinator_id))


def _in_charge(campaign_id: str, holder: Holder) -> sa.ColumnElement[bool]:
    """True while the campaign's coordinator is the holder's (always, for a holder without one)."""
    if not holder.coordinator:
        return sa.true()
    return sa.exists().where(coordinators.c.campaign_id == campaign_id,
                             coordinators.c.coordinator_id == holder.coordinator)


def discard(store: Store, campaign_id: str, seq: int, run_id: str, reason: str) -> None:
    """Note a result that arrived for an attempt that no longer counted (it was not recorded)."""
    with store.guard("write to"), store.write() as conn:
        exists = conn.execute(sa.select(discarded.c.run_id).where(
            discarded.c.campaign_id == campaign_id, discarded.c.run_id == run_id)).first()
        if exists is None:
            conn.execute(sa.insert(discarded).values(campaign_id=campaign_id, run_id=run_id, seq=seq,
                                                     at=db_now(conn), reason=reason[:2000]))


def discards(store: Store, campaign_id: str) -> list[sa.Row]:
    with store.guard("read"), store.engine.connect() as conn:
        if not sa.inspect(conn).has_table(discarded.name):
            return []
        return conn.execute(sa.select(discarded).where(discarded.c.campaign_id == campaign_id)
                            .order_by(discarded.c.seq, discarded.c.run_id)).all()


@dataclass(frozen=True)
class Claim:
    """A run this worker holds: its plan position and attempt."""

    seq: int
    attempt: int
    run_id: str


def install(store: Store) -> None:
    with store.guard("set up campaign tables in"), store.write() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_DDL_LOCK})
        metadata.create_all(conn, checkfirst=True)


def ensure_campaign(store: Store, campaign_id: str, plan_sha256: str, plan_json: str, seqs: Iterable[int]) -> bool:
    """Register the campaign and its planned runs unless present; True if this call created it.

    A campaign id already in the store with another plan digest is refused.
    """
    install(store)
    with store.guard("write to"), store.write() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_DDL_LOCK + 1})
        existing = conn.execute(
            sa.select(campaigns.c.plan_sha256).where(campaigns.c.campaign_id == campaign_id)
        ).scalar_one_or_none()
        if existing is not None:
            if existing != plan_sha256:
                raise StoreError(
                    f"store {store.url} holds campaign {campaign_id} with plan {existing[:12]}…, not "
                    f"{plan_sha256[:12]}…; use another store for this design"
                )
            return False
        conn.execute(sa.insert(campaigns).values(
            campaign_id=campaign_id, plan_sha256=plan_sha256, plan_json=plan_json, created_at=db_now(conn),
        ))  # fmt: skip
        conn.execute(
            sa.insert(campaign_runs),
            [{"campaign_id": campaign_id, "seq": seq, "status": "pending", "attempt": 0} for seq in seqs],
        )
        return True


def claim_next(store: Store, campaign_id: str, holder: Holder, run_id_of: Callable[[int, int], str]) -> Claim | None:
    """Take the first pending run in plan order, or None when no run is pending (or the holder's
    coordinator no longer runs the campaign)."""
    with store.guard("claim a run in"), store.write() as conn:
        now = db_now(conn)
        if not conn.execute(sa.select(_in_charge(campaign_id, holder))).scalar():
            return None
        row = conn.execute(
            sa.select(campaign_runs.c.seq, campaign_runs.c.attempt)
            .where(campaign_runs.c.campaign_id == campaign_id, campaign_runs.c.status == "pending")
            .order_by(campaign_runs.c.seq)
            .limit(1)
            .with_for_update(skip_locked=True)
        ).first()
        if row is None:
            return None
        attempt = row.attempt + 1
        run_id = run_id_of(row.seq, attempt)
        conn.execute(
            sa.update(campaign_runs)
            .where(campaign_runs.c.campaign_id == campaign_id, campaign_runs.c.seq == row.seq)
            .values(status="running", attempt=attempt, run_id=run_id, holder=str(holder), heartbeat_at=now,
                    started_at=now, finished_at=None, error=None, record_sha256=None)
        )  # fmt: skip
        return Claim(row.seq, attempt, run_id)


def _held(campaign_id: str, claim: Claim, holder: Holder) -> sa.ColumnElement[bool]:
    c = campaign_runs.c
    return sa.and_(
        c.campaign_id == campaign_id, c.seq == claim.seq, c.attempt == claim.attempt,
        c.status == "running", c.holder == str(holder), _in_charge(campaign_id, holder),
    )  # fmt: skip


def heartbeat(store: Store, campaign_id: str, claims: Iterable[Claim], holder: Holder) -> None:
    with store.guard("write to"), store.write() as conn:
        now = db_now(conn)
        for claim in claims:
            conn.execute(sa.update(campaign_runs).where(_held(campaign_id, claim, holder)).values(heartbeat_at=now))


def finish(
    store: Store, campaign_id: str, claim: Claim, holder: Holder, *, status: str,
    record_sha256: str | None = None, error: str | None = None, rss_kb: int | None = None,
) -> bool:  # fmt: skip
    """Mark a held run done or failed; False if the claim was lost (then nothing is recorded)."""
    if status not in ("done", "failed"):
        raise ValueError(status)
    with store.guard("write to"), store.write() as conn:
        result = conn.execute(
            sa.update(campaign_runs).where(_held(campaign_id, claim, holder)).values(
                status=status, finished_at=db_now(conn), record_sha256=record_sha256,
                error=(error or None) and error[:4000], rss_kb=rss_kb,
            )
        )  # fmt: skip
        return result.rowcount == 1


def requeue(store: Store, campaign_id: str, claim: Claim, holder: Holder, error: str) -> bool:
    """Give a held run back to the pool (its execution was lost with its node); the next claim is a
    new attempt under a new run id. False if the claim was no longer held."""
    with store.guard("write to"), store.write() as conn:
        result = conn.execute(sa.update(campaign_runs).where(_held(campaign_id, claim, holder)).values(
            status="pending", holder=None, heartbeat_at=None, error=error[:4000]))
        return result.rowcount == 1


def adopt(store: Store, campaign_id: str, seq: int, run_id: str, record_sha256: str, status: str = "done") -> bool:
    """Mark a run finished (`status`) whose latest attempt wrote its record before its holder died."""
    c = campaign_runs.c
    with store.guard("write to"), store.write() as conn:
        result = conn.execute(
            sa.update(campaign_runs)
            .where(c.campaign_id == campaign_id, c.seq == seq, c.run_id == run_id, c.status.in_(("running", "pending")))
            .values(status=status, finished_at=db_now(conn), record_sha256=record_sha256,
                    error="the run failed (see its record)" if status == "failed" else None)
        )
        return result.rowcount == 1


def release_dead(store: Store, campaign_id: str, *, lease_s: float, me: Holder) -> list[sa.Row]:
    """Return to the pool every running claim whose holder is gone; the rows as they were.

    A holder of `me`'s coordinator is gone when its process is (its workers are its children, in
    its PID namespace); a holder of another coordinator is gone once `me`'s coordinator runs the
    campaign (it took the campaign from a coordinator whose lease ran out). Without a coordinator
    (`me.coordinator == ""`, the bookkeeping's own tests), a holder on this host is judged by its
    process and one elsewhere by its heartbeat against `lease_s`, by the database's clock.
    """
    released = []
    with store.guard("write to"), store.write() as conn:
        now = db_now(conn)
        running = conn.execute(
            sa.select(campaign_runs)
            .where(campaign_runs.c.campaign_id == campaign_id, campaign_runs.c.status == "running")
            .with_for_update(skip_locked=True)
        ).all()
        for row in running:
            holder = Holder.parse(row.holder)
            if me.coordinator:
                dead = (not holder.alive()) if holder.coordinator == me.coordinator else True
            elif holder.host == me.host:
                dead = not holder.alive()
            else:
                dead = (now - (row.heartbeat_at or 0)) > lease_s
            if dead:
                conn.execute(
                    sa.update(campaign_runs)
                    .where(campaign_runs.c.campaign_id == campaign_id, campaign_runs.c.seq == row.seq,
                           campaign_runs.c.attempt == row.attempt, campaign_runs.c.status == "running")
                    .values(status="pending", holder=None, heartbeat_at=None)
                )  # fmt: skip
                released.append(row)
    return released


def retry_failed(store: Store, campaign_id: str) -> int:
    with store.guard("write to"), store.write() as conn:
        c = campaign_runs.c
        result = conn.execute(
            sa.update(campaign_runs).where(c.campaign_id == campaign_id, c.status == "failed").values(status="pending")
        )
        return result.rowcount


def rows(store: Store, campaign_id: str) -> list[sa.Row]:
    """Every planned run's row, in plan order."""
    with store.guard("read"), store.engine.connect() as conn:
        return conn.execute(
            sa.select(campaign_runs).where(campaign_runs.c.campaign_id == campaign_id).order_by(campaign_runs.c.seq)
        ).all()


def stored_plan(conn: Connection, campaign_id: str) -> str | None:
    return conn.execute(sa.select(campaigns.c.plan_json).where(campaigns.c.campaign_id == campaign_id)).scalar_one_or_none()

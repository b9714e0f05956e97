"""The campaign's bookkeeping in the store: the plan's runs, who holds which, what is finished.

Two tables of their own (created beside the store's tables, never altering them): `campaigns`
(one row per plan digest) and `campaign_runs` (one row per planned run). A worker claims the
next pending run in plan order in one transaction — `FOR UPDATE SKIP LOCKED` on PostgreSQL, so
workers on several hosts never take the same row; SQLite's write lock serializes claims on one
host. Every claim bumps the run's attempt and names its holder (host, pid, process start time);
finishing is conditional on still holding that attempt, so a run is recorded at most once even
when a slow worker loses its claim. A holder that died (its process gone on this host, or its
heartbeat older than the lease anywhere) has its claim returned to the pool by `release_dead`.

This module never touches run folders; the executor does.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from worldkit.errors import StoreError
from worldkit.store import Store

__all__ = ["Claim", "Holder", "ensure_campaign", "claim_next", "finish", "heartbeat", "release_dead", "rows", "this_holder"]

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

STATUSES = ("pending", "running", "done", "failed")
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
    """Who holds a claim: host, pid and the process's start time (so a reused pid is not alive)."""

    host: str
    pid: int
    started: str

    def __str__(self) -> str:
        return f"{self.host}:{self.pid}:{self.started}"

    @classmethod
    def parse(cls, text: str) -> Holder:
        host, pid, started = text.rsplit(":", 2)
        return cls(host, int(pid), started)

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


def this_holder() -> Holder:
    pid = os.getpid()
    return Holder(_host(), pid, _start_time(pid))


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
            campaign_id=campaign_id, plan_sha256=plan_sha256, plan_json=plan_json, created_at=time.time(),
        ))  # fmt: skip
        conn.execute(
            sa.insert(campaign_runs),
            [{"campaign_id": campaign_id, "seq": seq, "status": "pending", "attempt": 0} for seq in seqs],
        )
        return True


def claim_next(store: Store, campaign_id: str, holder: Holder, run_id_of: Callable[[int, int], str]) -> Claim | None:
    """Take the first pending run in plan order, or None when no run is pending."""
    now = time.time()
    with store.guard("claim a run in"), store.write() as conn:
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
        c.status == "running", c.holder == str(holder),
    )  # fmt: skip


def heartbeat(store: Store, campaign_id: str, claims: Iterable[Claim], holder: Holder) -> None:
    now = time.time()
    with store.guard("write to"), store.write() as conn:
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
                status=status, finished_at=time.time(), record_sha256=record_sha256,
                error=(error or None) and error[:4000], rss_kb=rss_kb,
            )
        )  # fmt: skip
        return result.rowcount == 1


def adopt(store: Store, campaign_id: str, seq: int, run_id: str, record_sha256: str, status: str = "done") -> bool:
    """Mark a run finished (`status`) whose latest attempt wrote its record before its holder died."""
    c = campaign_runs.c
    with store.guard("write to"), store.write() as conn:
        result = conn.execute(
            sa.update(campaign_runs)
            .where(c.campaign_id == campaign_id, c.seq == seq, c.run_id == run_id, c.status.in_(("running", "pending")))
            .values(status=status, finished_at=time.time(), record_sha256=record_sha256,
                    error="the run failed (see its record)" if status == "failed" else None)
        )
        return result.rowcount == 1


def release_dead(store: Store, campaign_id: str, *, lease_s: float, me: Holder) -> list[sa.Row]:
    """Return to the pool every running claim whose holder is gone; the rows as they were.

    On this host a holder is gone when its process is; elsewhere, when its heartbeat is older
    than `lease_s` seconds.
    """
    now = time.time()
    released = []
    with store.guard("write to"), store.write() as conn:
        running = conn.execute(
            sa.select(campaign_runs)
            .where(campaign_runs.c.campaign_id == campaign_id, campaign_runs.c.status == "running")
            .with_for_update(skip_locked=True)
        ).all()
        for row in running:
            holder = Holder.parse(row.holder)
            local = holder.host == me.host
            dead = (not holder.alive()) if local else (now - (row.heartbeat_at or 0)) > lease_s
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

"""Execution records gathered for `worldkit report` and `worldkit export ledgers`: from run folders
and from stores, each store's copy read back exactly as the run folder's copy is.

`worldkit.record.stored.store_record` puts them there. `stored_records` reads them back: each record's digest, its run id and its final anchor must
agree with the stored row, that head must still end the run's log (`worldkit.store.records`), and
the whole log must be an intact chain ending there (an event altered in place is refused).
A store holding campaign bookkeeping (`worldkit.campaign.claims`) counts each planned run's
recorded attempt only, as the campaign folder's `runs/` does: attempts that were superseded
(retried, lost their claim) or never finished are left out, with a note.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import sqlalchemy as sa
from pydantic import ValidationError

from worldkit.canon import sha256_bytes
from worldkit.errors import LogTampered, UsageError
from worldkit.record.execution import (
    RECORD_SCHEMA_VERSION,
    ExecutionRecord,
    LoadedRecord,
    check_unique,
    load_records,
)
from worldkit.record.results import InvalidResults
from worldkit.store import Store, StoredRecord, count_records, list_runs, read_records, verify_chain
from worldkit.store.anchor import parse_anchor

__all__ = ["StoredRecords", "gather_records", "stored_records"]


@dataclass
class StoredRecords:
    """The records a store holds, checked, and what was left out and why."""

    url: str
    """The store (password hidden)."""
    records: list[LoadedRecord] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _no_records(store: Store) -> UsageError:
    runs = list_runs(store)
    if runs:
        shown = ", ".join(r.run_id for r in runs[:3]) + (", …" if len(runs) > 3 else "")
        held = f"the event logs of {len(runs)} run(s) ({shown})"
    else:
        held = "no run logs"
    return UsageError(
        f"{store.url} is a worldkit store: it holds {held} but no execution records — runs "
        "store their record beside their log since store schema 4; report the run folders "
        "`worldkit run --out DIR` wrote (a campaign's DIR/runs), or re-run the tasks with this "
        "worldkit and --store pointing here"
    )


def _parse(url: str, stored: StoredRecord) -> ExecutionRecord:
    origin = f"{url}#{stored.run_id}"
    try:
        data = json.loads(stored.record_json)
        if isinstance(data, dict) and data.get("schema_version") != RECORD_SCHEMA_VERSION:
            raise InvalidResults(
                f"schema_version {data.get('schema_version')!r} is not supported (this worldkit "
                f"reads version {RECORD_SCHEMA_VERSION}); use the worldkit that wrote it",
                file=origin, field="schema_version")
        record = ExecutionRecord.model_validate(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InvalidResults("the stored record is not UTF-8 JSON", file=origin) from error
    except ValidationError as error:
        first = error.errors()[0]
        raise InvalidResults(f"{first['msg']} ({error.error_count()} problem(s) in all)", file=origin,
                             field=".".join(str(p) for p in first["loc"]) or None) from error
    anchor = record.log_anchor or {}
    named = (record.run_id, anchor.get("seq"), anchor.get("hash"), anchor.get("final"))
    if named != (stored.run_id, stored.head_seq, stored.head_hash, True):
        raise LogTampered(
            f"record of run {stored.run_id} in store {url} names run {record.run_id} and log head "
            f"{anchor.get('seq')} ({str(anchor.get('hash'))[:12]}…, final={anchor.get('final')}) but "
            f"was stored at head {stored.head_seq} ({stored.head_hash[:12]}…): the record does not "
            "belong to this log"
        )
    return record


@dataclass(frozen=True)
class _Campaigns:
    """The campaigns a store holds: each one's plan, and which attempts are recorded."""

    plans: dict[str, bytes]
    counted: set[str]

    def campaign_of(self, run_id: str) -> str | None:
        for campaign_id in self.plans:
            if re.match(rf"{re.escape(campaign_id)}-\d+\.", run_id):
                return campaign_id
        return None


def _campaigns(store: Store) -> _Campaigns:
    from worldkit.campaign.claims import campaign_runs, campaigns

    with store.guard("read"), store.engine.connect() as conn:
        if not sa.inspect(conn).has_table(campaign_runs.name):
            return _Campaigns({}, set())
        rows = conn.execute(sa.select(campaign_runs.c.run_id, campaign_runs.c.status)).all()
        stored = conn.execute(sa.select(campaigns.c.campaign_id, campaigns.c.plan_sha256,
                                        campaigns.c.plan_json)).all()
    plans: dict[str, bytes] = {}
    for row in stored:
        data = row.plan_json.encode("utf-8")
        if sha256_bytes(data) != row.plan_sha256:
            raise LogTampered(
                f"campaign {row.campaign_id}'s plan in store {store.url} does not match its digest "
                f"({row.plan_sha256[:12]}…): it was modified after the campaign started")
        plans[row.campaign_id] = data
    counted = {row.run_id for row in rows if row.run_id and row.status in ("done", "failed")}
    return _Campaigns(plans, counted)


def _require_chain(store: Store, url: str, record: ExecutionRecord) -> None:
    """The run's whole log is an intact chain ending at the record's final anchor (signed if a key
    is set): a logged event altered in place is refused, not reported."""
    anchor = parse_anchor(record.log_anchor, source=f"{url}#{record.run_id}")
    report = verify_chain(store, record.run_id, anchor=anchor)
    if not report.ok:
        raise LogTampered(f"run {record.run_id} in store {url}: {report.message}; its record is not reported "
                          f"(`worldkit log verify {record.run_id} --store URL` names the event)")  # fmt: skip


def stored_records(url: str, run_ids: Iterable[str] | None = None) -> StoredRecords:
    """The execution records in the store at `url` (of `run_ids`, else all), each checked."""
    wanted = None if run_ids is None else list(run_ids)
    with Store.open(url, create=False) as store:
        result = StoredRecords(url=store.url)
        if count_records(store) == 0:
            raise _no_records(store)
        rows = read_records(store, wanted)
        known = _campaigns(store)
        left_out: list[str] = []
        for stored in rows:
            campaign = known.campaign_of(stored.run_id)
            if wanted is None and campaign is not None and stored.run_id not in known.counted:
                left_out.append(stored.run_id)
                continue
            record = _parse(result.url, stored)
            _require_chain(store, result.url, record)
            result.records.append(LoadedRecord(
                record, f"{result.url}#{record.run_id}", store=result.url,
                campaign_plan=None if campaign is None else known.plans[campaign]))
        if wanted is None:
            recorded = {stored.run_id for stored in rows}
            unrecorded = [r.run_id for r in list_runs(store) if r.run_id not in recorded]
            if unrecorded:
                shown = ", ".join(unrecorded[:3]) + (", …" if len(unrecorded) > 3 else "")
                result.notes.append(
                    f"{result.url}: {len(unrecorded)} run log(s) without an execution record are "
                    f"not reported ({shown}): sessions served and graded into a run folder, or "
                    "runs stopped before their record; report their folders for them")
    if left_out:
        shown = ", ".join(left_out[:3]) + (", …" if len(left_out) > 3 else "")
        result.notes.append(
            f"{result.url}: {len(left_out)} record(s) of campaign attempts that are not their "
            f"planned run's recorded attempt (superseded or unfinished) are not counted ({shown}); "
            "name them with --run-id to report them"
        )
    return result


def gather_records(runs: Sequence[Path] = (), stores: Sequence[str] = (),
                   run_ids: Sequence[str] | None = None) -> tuple[list[LoadedRecord], list[str]]:
    """The records under the folders `runs` and in the `stores` (only those of `run_ids` when
    given, every one of which must be found), each run once; and notes on what was left out."""
    wanted = None if not run_ids else sorted(set(run_ids))
    records = load_records(runs) if runs else []
    if wanted is not None:
        records = [loaded for loaded in records if loaded.record.run_id in wanted]
    notes: list[str] = []
    for url in stores:
        found = stored_records(url, wanted)
        records += found.records
        notes += found.notes
    if wanted is not None:
        missing = sorted(set(wanted) - {loaded.record.run_id for loaded in records})
        if missing:
            raise UsageError(
                f"no execution record of run(s) {', '.join(missing)} in the folders and stores "
                "given; `worldkit log list --store URL` lists a store's runs"
            )
    return check_unique(records), notes

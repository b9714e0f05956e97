"""Before workers start, the folder and the store are made to agree: a run whose record reached
runs/ is kept, what was in flight and superseded attempts are deleted, dead claims return."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from tests.fixtures.overlays.paths import TRIAGE
from worldkit.campaign import claims
from worldkit.campaign.executor import (
    INFLIGHT,
    RUNS,
    counts,
    execute_run,
    open_campaign,
    reconcile,
)
from worldkit.campaign.plan import PlannedTask
from worldkit.errors import CheckFailed
from worldkit.store import Store


def test_reconcile_keeps_finished_records_and_deletes_the_rest(tmp_path: Path) -> None:
    design = tmp_path / "design.yaml"
    design.write_text(f"tasks: [{TRIAGE}]\nagents: [noop]\nconditions: {{full: 4}}\nseed: 1\n")
    out = tmp_path / "c"
    campaign = open_campaign(design, out)
    assert (out / "plan.json").is_file() and (out / "plan.sha256").read_text().endswith("  plan.json\n")
    dead = claims.Holder(claims.this_holder().host, 2**22 + 999, "1")
    with Store.open(campaign.store_url) as store:
        taken = [claims.claim_next(store, campaign.campaign_id, dead, campaign.run_id) for _ in range(4)]
        assert [c.seq for c in taken] == [1, 2, 3, 4]
    runs, inflight = out / RUNS, out / INFLIGHT
    # 1: record written and moved before the worker died → kept; 2: failed record moved → kept as failed
    for claim, status in ((taken[0], "completed"), (taken[1], "failed")):
        (runs / claim.run_id).mkdir(parents=True)
        (runs / claim.run_id / "execution-record.json").write_text(json.dumps({"status": status}))
    # 3: still in flight → deleted and redone; 4: a stale folder of an older attempt → deleted
    (inflight / taken[2].run_id).mkdir(parents=True)
    stale = runs / campaign.run_id(4, 0)
    stale.mkdir()
    (stale / "execution-record.json").write_text("{}")
    with Store.open(campaign.store_url) as store:
        reconcile(campaign, store)
        rows = {r.seq: r for r in claims.rows(store, campaign.campaign_id)}
        state = counts(campaign, store)
    assert [rows[s].status for s in (1, 2, 3, 4)] == ["done", "failed", "pending", "pending"]
    assert rows[1].record_sha256 and rows[1].run_id == taken[0].run_id
    assert sorted(p.name for p in runs.iterdir()) == sorted([taken[0].run_id, taken[1].run_id])
    assert not inflight.exists()
    assert (state.planned, state.done, state.failed, state.pending, state.records) == (4, 1, 1, 2, 2)


def test_a_task_changed_after_planning_fails_its_runs(tmp_path: Path) -> None:
    design = tmp_path / "design.yaml"
    design.write_text(f"tasks: [{TRIAGE}]\nagents: [noop]\nconditions: {{full: 1}}\n")
    campaign = open_campaign(design, tmp_path / "c")
    task = campaign.plan.tasks[0]
    forged = campaign.plan.model_copy(update={"tasks": [PlannedTask(**{**task.model_dump(), "sha256": "0" * 64})]})
    with pytest.raises(CheckFailed, match="is not the one the plan pinned"):
        execute_run(replace(campaign, plan=forged), campaign.plan.runs[0], "x-1")
    assert not (tmp_path / "c" / INFLIGHT).exists()  # refused before anything was staged

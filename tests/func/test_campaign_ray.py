"""`--executor ray` on a real Ray cluster on this machine (`ray.cluster_utils.Cluster`, three nodes on
127.0.0.1): a 40-run campaign, a worker node removed mid-way, every planned run recorded exactly once,
and the report equal to the local executor's on the same design and seed."""

from __future__ import annotations

import json
import os
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.fixtures.overlays.paths import TRIAGE
from worldkit._cli.main import run
from worldkit.campaign import claims
from worldkit.campaign.executor import run_campaign
from worldkit.record.execution import read_record
from worldkit.store import Store, list_runs

if os.environ.get("CI") == "true":
    import ray  # under CI a missing Ray is a failure, never a skip
else:
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'worldkit[ray]')")

pytestmark = pytest.mark.slow


def design(folder: Path) -> Path:
    path = folder / "design.yaml"
    path.write_text(f"tasks: [{TRIAGE}]\nagents: [oracle, noop]\nconditions: {{full: 10, curated: 10}}\nseed: 11\n")
    return path


def report(capsys, folder: Path) -> dict:
    capsys.readouterr()
    assert run(["report", str(folder), "--json", "--replicates", "0"]) == 0
    data = json.loads(capsys.readouterr().out)
    data.pop("provenance")
    return data


def test_a_campaign_on_a_ray_cluster_survives_a_lost_node(tmp_path: Path, capsys) -> None:
    from ray.cluster_utils import Cluster

    from worldkit.campaign.ray_executor import RayOptions, run_campaign_ray

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    workers = [cluster.add_node(num_cpus=1) for _ in range(2)]
    cluster.wait_for_nodes()
    out = tmp_path / "ray"
    lines: list[str] = []
    removed = threading.Event()

    def finished(line: str) -> None:
        lines.append(line)
        if not removed.is_set() and sum(line.startswith("done") for line in lines) >= 8:
            removed.set()
            cluster.remove_node(workers[0], allow_graceful=False)  # a node lost mid-campaign

    try:
        state = run_campaign_ray(design(tmp_path), out, options=RayOptions(address=cluster.address),
                                 on_finished=finished)  # fmt: skip
    finally:
        cluster.shutdown()
    assert removed.is_set()
    assert (state.planned, state.done, state.failed, state.running, state.pending, state.records) == (40, 40, 0, 0, 0, 40)
    campaign_id = json.loads((out / "campaign.json").read_bytes())["campaign_id"]
    with Store.open(f"sqlite:///{out / 'store.db'}") as store:
        rows = claims.rows(store, campaign_id)
        logged = {r.run_id for r in list_runs(store)}
    assert [r.status for r in rows] == ["done"] * 40
    records = [read_record(p) for p in sorted((out / "runs").glob("*/execution-record.json"))]
    assert len(records) == 40
    by_seq = Counter(r.run_id.split(".", 1)[0] for r in records)
    assert set(by_seq.values()) == {1}, "a planned run was recorded twice"
    assert sorted(r.run_id for r in records) == sorted(r.run_id for r in rows)
    assert {r.run_id for r in rows} <= logged  # each recorded attempt's event log is in the store
    lost = [line for line in lines if line.startswith("lost")]
    for line in lost:  # a run lost with the node ran again as a new attempt, and that one counts
        seq = int(line.split()[1].split("-")[1].split(".")[0])
        assert rows[seq - 1].attempt >= 2

    local = tmp_path / "local"
    counts = run_campaign(design(tmp_path), local, workers=2)
    assert (counts.done, counts.records) == (40, 40)
    assert report(capsys, out) == report(capsys, local)

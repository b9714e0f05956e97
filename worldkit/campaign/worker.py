"""A campaign worker process: `python -m worldkit.campaign.worker`, started by the coordinator.

Reads its job (campaign folder, task paths on this host, runs per worker) as JSON on stdin and
the store URL from $WORLDKIT_STORE; re-reads the plan from the folder (digest checked), then
claims and executes runs until none is pending (`executor.worker_main`).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def main() -> None:
    from worldkit.campaign.executor import Campaign, load_campaign, worker_main

    job = json.loads(sys.stdin.read())
    loaded = load_campaign(Path(job["out"]), os.environ["WORLDKIT_STORE"])
    campaign = Campaign(plan=loaded.plan, paths=dict(job["paths"]), out=loaded.out, store_url=loaded.store_url)
    worker_main(campaign, int(job.get("runs_per_worker", 0)), job.get("coordinator"),
                coordinator_id=str(job.get("coordinator_id", "")), max_rss_mb=int(job.get("max_rss_mb", 0)))


if __name__ == "__main__":
    main()

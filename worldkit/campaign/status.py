"""Where a campaign stands: planned, done, failed, running, pending, and the records on disk.

Read from the campaign folder's plan (its digest checked) and from the store the folder's
`campaign.json` names (never a default store); the folder's own record count is reported beside
the store's figures, never trusted instead of them. Results that arrived for an attempt that no
longer counted are listed as discarded (they were not recorded).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from worldkit.campaign import claims
from worldkit.campaign.executor import counts, load_campaign
from worldkit.store import Store

__all__ = ["campaign_status"]


def campaign_status(out: Path, store_url: str | None = None) -> dict[str, Any]:
    """The status of the campaign in folder `out` as one JSON-ready mapping."""
    campaign = load_campaign(out, store_url)
    with Store.open(campaign.store_url, create=False) as store:
        claims.install(store)
        state = counts(campaign, store)
    return {
        "campaign_id": campaign.campaign_id,
        "plan_sha256": campaign.plan.digest,
        "store": store.url,
        **state.as_dict(),
    }

"""Which campaigns a report's run folders hold, and how much of each: a report of one host's
folder, or of a campaign cut short, says it covers N of M planned runs."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from worldkit.campaign.plan import DIGEST_FILE, PLAN_FILE, CampaignPlan
from worldkit.canon import sha256_bytes
from worldkit.record.execution import LoadedRecord

__all__ = ["campaign_notes"]


def _campaign_folders(runs: Sequence[Path]) -> list[Path]:
    """The campaign folders among `runs` and their parents (a campaign's `runs/` given directly)."""
    found = []
    for given in runs:
        for folder in (Path(given), Path(given).parent):
            if (folder / PLAN_FILE).is_file() and (folder / DIGEST_FILE).is_file() and folder not in found:
                found.append(folder)
                break
    return found


def campaign_notes(runs: Sequence[Path], records: Sequence[LoadedRecord]) -> list[str]:
    """One note per campaign folder among `runs`: its id, plan digest, and how many of its planned
    runs the report holds (with what to do when that is not all of them)."""
    notes = []
    for folder in _campaign_folders(runs):
        data = (folder / PLAN_FILE).read_bytes()
        digest = sha256_bytes(data)
        recorded = (folder / DIGEST_FILE).read_text(encoding="utf-8").split()
        if not recorded or recorded[0] != digest:
            notes.append(f"{folder}: its campaign plan does not match its digest ({DIGEST_FILE}); its runs are "
                         "reported as plain runs")
            continue
        plan = CampaignPlan.model_validate_json(data)
        campaign_id, planned = plan.campaign_id, len(plan.runs)
        pattern = re.compile(rf"{re.escape(campaign_id)}-(\d+)\.")
        seqs = {int(m.group(1)) for loaded in records if (m := pattern.match(loaded.record.run_id))}
        note = f"campaign {campaign_id} (plan sha256 {digest[:12]}…): {len(seqs)} of {planned} planned runs"
        if len(seqs) < planned:
            note += (" — a part of the campaign, not a balanced design: report the campaign's store "
                     "(`worldkit report STORE`) or every host's folder for the whole")
        notes.append(note)
    return notes

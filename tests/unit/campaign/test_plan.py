"""The campaign plan: the paper's design expands to the run ledger's structure, deterministically."""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import yaml

from tests.fixtures.overlays.paths import TRIAGE, WORLD
from worldkit.campaign import (
    CampaignDesign,
    InvalidDesign,
    PlannedTask,
    expand,
    load_design,
    plan_bytes,
)
from worldkit.campaign.plan import resolve_tasks
from worldkit.errors import ExitCode

REPO = Path(__file__).resolve().parents[4]
LEDGER = Path("workworld", "data", "run_ledger.csv")
"""The public WorkWorlds run ledger, under the shared data folder (the `shared_data` fixture)."""


def paper_design(seed: int = 20260301) -> tuple[CampaignDesign, list[PlannedTask]]:
    tasks = [PlannedTask(id=f"T{i:02d}", ref=f"T{i:02d}", kind="overlay", sha256=f"{i:064x}",
                         packets=["curator-1", "curator-2"]) for i in range(1, 9)]
    design = CampaignDesign(tasks=[t.id for t in tasks], agents=["opus5", "grok", "sol"],
                            conditions={"full": 4, "curated": 2}, seed=seed)
    return design, tasks


def test_same_seed_same_plan_bytes_other_seed_other_order() -> None:
    design, tasks = paper_design()
    first, again = expand(design, tasks), expand(*paper_design())
    assert plan_bytes(first) == plan_bytes(again) and first.digest == again.digest
    other = expand(*paper_design(seed=1))
    assert [(r.task, r.agent, r.condition) for r in other.runs] != [(r.task, r.agent, r.condition) for r in first.runs]
    assert Counter((r.task, r.agent, r.condition) for r in other.runs) == Counter((r.task, r.agent, r.condition) for r in first.runs)


def test_paper_design_has_the_ledgers_shape(shared_data: Path) -> None:
    plan = expand(*paper_design())
    assert len(plan.runs) == 192 and [r.seq for r in plan.runs] == list(range(1, 193))
    assert plan.design.block_count == 2
    ours = Counter((r.block, r.condition.split(":")[0]) for r in plan.runs)
    with (shared_data / LEDGER).open(encoding="utf-8") as handle:
        ledger = list(csv.DictReader(handle))
    theirs = Counter((int(r["block"]), "full" if r["condition"] == "world_first" else "curated") for r in ledger)
    assert ours == theirs
    cells: dict[tuple[str, str], list] = {}
    for run in plan.runs:
        cells.setdefault((run.task, run.agent), []).append(run)
    assert len(cells) == 24
    for runs in cells.values():
        # orders 1..8 in execution order, block 1 holding 1..4: 2 full + 1 per curator, as the ledger
        assert [r.order for r in runs] == list(range(1, 9))
        assert [r.block for r in runs] == [1] * 4 + [2] * 4
        for block in (1, 2):
            assert Counter(r.condition for r in runs if r.block == block) == {
                "full": 2, "curated:curator-1": 1, "curated:curator-2": 1}
    # blocks run one after the other; within a block the cells take turns
    assert [r.block for r in plan.runs] == sorted(r.block for r in plan.runs)
    assert len({(r.task, r.agent) for r in plan.runs[:24]}) == 24


def test_plan_bytes_do_not_depend_on_the_process(tmp_path: Path) -> None:
    design = tmp_path / "design.yaml"
    design.write_text(f"tasks: [{TRIAGE}]\nagents: [oracle, noop]\nconditions: {{full: 2, curated: 1}}\nseed: 7\n")
    outputs = []
    for hashseed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hashseed, "PYTHONPATH": str(REPO)}
        done = subprocess.run([sys.executable, "-m", "worldkit", "campaign", "plan", str(design), "--json"],
                              capture_output=True, env=env, check=True, cwd=tmp_path)
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1]
    loaded = load_design(design)
    plan = expand(loaded, [r.planned for r in resolve_tasks(loaded, tmp_path)])
    assert plan.digest.encode() in outputs[0]


@pytest.mark.parametrize(("text", "message"), [
    ("tasks: [a]\nagents: [noop]\nconditions: {full: 3, curated: 2}\nblocks: 2\n",
     "d.yaml: blocks: 2 does not divide every run count (3 full, 2 per curated packet)"),
    ("tasks: [a]\nagents: [noop, noop]\n", "agent names repeated: noop"),
    ("tasks: [a]\nagents: [noop]\nconditions: {full: 0}\n", "conditions plan no run"),
    ("tasks: [a]\nagents: [noop]\nsed: 3\n", "field sed: unknown key `sed`; did you mean `seed`?"),
    ("tasks: [a\n", "not valid YAML"),
])
def test_bad_designs_are_refused_with_file_and_item(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "d.yaml"
    path.write_text(text)
    with pytest.raises(InvalidDesign) as caught:
        load_design(path)
    assert message in caught.value.message and str(path) in caught.value.message
    assert caught.value.exit_code == ExitCode.INVALID_INPUT


def test_tasks_are_checked_when_resolved(tmp_path: Path) -> None:
    design = CampaignDesign(tasks=["no-such-task"], agents=["noop"])
    with pytest.raises(InvalidDesign, match="task 'no-such-task' is neither an overlay nor a packet"):
        resolve_tasks(design, tmp_path)
    raw = yaml.safe_load(TRIAGE.read_text(encoding="utf-8"))
    raw.pop("curated")
    raw["world"] = str(WORLD)
    (tmp_path / "bare.yaml").write_text(yaml.safe_dump(raw))
    shutil.copytree(TRIAGE.parent / "reference", tmp_path / "reference")
    design = CampaignDesign(tasks=["bare.yaml"], agents=["noop"], conditions={"full": 1, "curated": 1})
    with pytest.raises(InvalidDesign, match="declare no curated packet; set conditions.curated to 0"):
        resolve_tasks(design, tmp_path)

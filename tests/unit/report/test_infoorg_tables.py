"""InfoOrgBench tables over hand-written packet runs: Avg only over all three families, tasks
weigh equally, Model × Harness from the recorded harness, random shape averaged over seeds,
Table 16 only over configurations whose usage is recorded for every task."""

from __future__ import annotations

from typing import Any

import pytest

from worldkit.infoorg.scoring import StructureScore
from worldkit.report.infoorg import config_of, packet_tables
from worldkit.report.infoorg_text import render_text
from worldkit.run.infoorg_packet import PacketRun, RunUsage


def packet_run(task: str, agent: str, S: float, *, harness: dict[str, Any] | None = None,  # noqa: N803
               tokens: int | None = None, valid: bool = True, run_id: str | None = None) -> PacketRun:
    score = StructureScore(valid=valid, n_records=40, S=S if valid else 0.0, triplet_f1=S, penalty=0.0, E=1.0,
                           clade_f1=S, exact=S == 1.0, category="none" if S == 1.0 else "both")
    usage = None if tokens is None else RunUsage(tokens_in=tokens, tokens_out=0, steps=1, tool_calls=1, stop_reason="done",
                                                 wall_time_s=1.0, transcript=None, transcript_sha256=None)
    return PacketRun(run_id=run_id or f"{task}.{agent}", task_id=task, agent=agent, seat="EMP-ORG-001", run_dir="/nowhere",
                     store="sqlite://", events=1, event_log_head="", replay_matches=True, agent_message="", score=score,
                     rubric={}, harness=harness or {}, usage=usage)  # fmt: skip


def test_model_and_harness_come_from_the_recorded_harness() -> None:
    assert config_of(packet_run("recap-001", "openai:m1", 0.5)) == ("m1", "ReAct-FC")  # a version 1 result
    assert config_of(packet_run("recap-001", "codex:m2", 0.5, harness={"harness": "codex", "model": "m2"})) == ("m2", "Codex")
    assert config_of(packet_run("recap-001", "baseline:random:3", 0.5)) == ("—", "baseline:random")


def test_avg_needs_all_three_families_and_tasks_weigh_equally() -> None:
    runs = [
        packet_run("recap-001", "openai:m", 0.2), packet_run("recap-002", "openai:m", 0.6),
        packet_run("recap-002", "openai:m", 1.0, run_id="again"),  # repeats of a task are averaged first
        packet_run("thread-001", "openai:m", 0.5), packet_run("design-001", "openai:m", 0.9, valid=False),
        packet_run("recap-001", "openai:n", 0.4),
    ]
    rows = {(r["model"], r["harness"]): r for r in packet_tables(runs).table3}
    m = rows[("m", "ReAct-FC")]
    assert m["families"]["recap"]["score"] == pytest.approx(50.0)  # (20 + (60 + 100) / 2) / 2
    assert m["families"]["design"]["score"] == 0.0  # an invalid output stays in its family mean with 0
    assert m["avg"]["score"] == pytest.approx((50.0 + 50.0 + 0.0) / 3)
    n = rows[("n", "ReAct-FC")]
    assert n["avg"] is None and n["missing"] == ["thread", "design"]
    text = render_text(packet_tables(runs))
    assert "n · ReAct-FC: no Avg, it needs all three families (missing thread, design)" in text
    assert packet_tables(runs).table11["models"] == [{"model": "m", "mean_S": 100 / 3, "configs": 1}]


def test_random_shape_averages_its_seeds_and_says_when_five_are_missing() -> None:
    runs = [packet_run("thread-001", f"baseline:random:{s}" if s else "baseline:random", s / 10) for s in range(3)]
    runs.append(packet_run("thread-001", "baseline:silhouette", 0.7))
    tables = packet_tables(runs)
    assert tables.table12["baselines"]["random"]["thread"] == pytest.approx(10.0)  # (0 + 10 + 20) / 3
    assert tables.table12["random_seeds"] == {"min": 3, "max": 3}
    assert tables.table3 == []  # baselines are not systems of Table 3
    assert "random shape: 3–3 seed(s) per task, Table 12 averages 5" in render_text(tables)


def test_table16_uses_configurations_with_usage_for_every_task() -> None:
    runs = [packet_run("recap-001", "openai:m", 0.5, tokens=2000), packet_run("recap-002", "openai:m", 0.7, tokens=4000),
            packet_run("recap-001", "openai:n", 0.5, tokens=1000), packet_run("recap-002", "openai:n", 0.5)]
    t16 = packet_tables(runs).table16
    assert t16["models"] == {"m": {"recap": {"S": 60.0, "ktokens": 3.0, "configs": 1}}}
    assert t16["unrecorded"] == ["n · ReAct-FC (recap)"]

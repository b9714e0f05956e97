"""`worldkit export ledgers`: worldkit runs as a WorkWorlds ledger release, read back exactly;
and `worldkit report RUNS` on real runs of the fixture overlays (estimates refused plainly,
curated packets reported as Table 1)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from tests.unit.analysis.test_analysis_small import synthetic

from tests.fixtures.overlays.paths import GOOD, TRIAGE
from worldkit._cli.main import run
from worldkit.analysis.export import CRITERION_COLUMNS, RUN_COLUMNS
from worldkit.analysis.ledgers import read_ledgers
from worldkit.record.execution import RECORD_FILENAME, load_rows, write_record


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = run(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    """Synthetic records of three tasks, with every kind of missing value."""
    root = tmp_path / "runs"
    for index, record in enumerate(synthetic(tasks=3)):
        if index % 7 == 0:  # an ungraded criterion and a judge that failed
            criteria = list(record.criteria)
            criteria[0] = criteria[0].model_copy(update={"result": "ungraded", "route": "semantic"})
            criteria[1] = criteria[1].model_copy(update={"result": "grader_error"})
            record = record.model_copy(update={"criteria": criteria})
        if index % 5 == 0:
            record = record.model_copy(update={"stats": record.stats.model_copy(
                update={"tool_calls_before_first_access": None})})
        folder = root / record.run_id
        folder.mkdir(parents=True)
        write_record(record, folder / RECORD_FILENAME)
    return root


def _without_source(data: dict, source: str) -> str:
    text = json.dumps({key: data[key] for key in ("columns", "overall", "by_packet", "by_task",
                                                 "by_agent", "analyses")}, sort_keys=True)
    return text.replace(f'"source": "{source}"', '"source": "?"')


def test_round_trip_is_exact(capsys, runs: Path, tmp_path: Path) -> None:
    out = tmp_path / "ledgers"
    code, _, err = cli(capsys, "export", "ledgers", str(runs), "--out", str(out))
    assert code == 0, err
    assert f"wrote {out / 'criterion_results.csv'} (" in err
    # The public artifact's columns, CRLF lines like the release.
    with (out / "criterion_results.csv").open(newline="", encoding="utf-8") as handle:
        assert tuple(next(csv.reader(handle))) == CRITERION_COLUMNS
    with (out / "run_ledger.csv").open(newline="", encoding="utf-8") as handle:
        assert tuple(next(csv.reader(handle))) == RUN_COLUMNS
    assert (out / "run_ledger.csv").read_bytes().count(b"\r\n") == 1 + 3 * 2 * 3 * 3
    # Row for row, the ledgers read back as the records' own rows (digests verified on read).
    assert read_ledgers(out, source="runs") == load_rows([runs])
    # And every table and estimate of the report is the same.
    options = ("--json", "--replicates", "25", "--workers", "1")
    code, direct, _ = cli(capsys, "report", str(runs), *options)
    assert code == 0
    code, back, _ = cli(capsys, "report", "--ledgers", str(out), *options)
    assert code == 0
    direct_data, back_data = json.loads(direct), json.loads(back)
    assert direct_data["analyses"][0]["reason"] is None
    assert direct_data["analyses"][0]["passed"]["contrast"]["interval"] is not None
    assert _without_source(direct_data, "runs") == _without_source(back_data, "ledgers")


def test_exported_row_edited_is_caught(capsys, runs: Path, tmp_path: Path) -> None:
    out = tmp_path / "ledgers"
    assert cli(capsys, "export", "ledgers", str(runs), "--out", str(out))[0] == 0
    text = (out / "criterion_results.csv").read_text(encoding="utf-8")
    (out / "criterion_results.csv").write_text(text.replace(",accessed,", ",not_accessed,", 1),
                                               encoding="utf-8", newline="")
    code, _, err = cli(capsys, "report", "--ledgers", str(out), "--no-estimates")
    assert code == 3 and "criterion_record_sha256" in err


def test_export_refuses_a_non_empty_directory(capsys, runs: Path, tmp_path: Path) -> None:
    out = tmp_path / "taken"
    out.mkdir()
    (out / "keep.txt").write_text("x", encoding="utf-8")
    code, _, err = cli(capsys, "export", "ledgers", str(runs), "--out", str(out))
    assert code == 2
    assert err == (f"error: {out} exists and is not an empty directory; pass --out a new "
                   "directory (the export never overwrites)\n")


def test_failed_runs_are_left_out(capsys, runs: Path, tmp_path: Path) -> None:
    first = sorted(runs.rglob(RECORD_FILENAME))[0]
    data = json.loads(first.read_text(encoding="utf-8"))
    data["status"] = "failed"
    first.write_text(json.dumps(data), encoding="utf-8")
    out = tmp_path / "ledgers"
    code, _, err = cli(capsys, "export", "ledgers", str(runs), "--out", str(out))
    assert code == 0, err
    assert data["run_id"] not in (out / "run_ledger.csv").read_text(encoding="utf-8")


# Real runs of the fixture overlays ---------------------------------------------------------------

@pytest.fixture(scope="module")
def real_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("real")
    store = f"sqlite:///{root / 'store.db'}"
    for overlay, agent, condition in ((GOOD, "oracle", "full"), (GOOD, "oracle", "curated:curator-1"),
                                      (GOOD, "noop", "full"), (GOOD, "noop", "curated:curator-2"),
                                      (TRIAGE, "oracle", "full"), (TRIAGE, "noop", "curated:minimal")):
        code = run(["run", "--overlay", str(overlay), "--agent", agent, "--condition", condition,
                    "--out", str(root / "runs"), "--store", store, "--json"])
        assert code == 0
    return root / "runs"


def test_report_on_real_runs(capsys, real_runs: Path) -> None:
    capsys.readouterr()
    code, out, err = cli(capsys, "report", str(real_runs), "--json", "--replicates", "0")
    assert code == 0, err
    data = json.loads(out)
    [analysis] = data["analyses"]
    assert analysis["tasks"] == ["cc1-report", "cc1-triage"]
    # oracle passes every graded criterion and noop never reaches evidence: no finite logistic
    # fit exists, and the report says so instead of printing a number.
    assert analysis["passed"]["contrast"] is None
    assert analysis["passed"]["reason"].startswith("perfect separation: every agent ")
    assert analysis["access"]["reason"].startswith("perfect separation: every agent noop")
    # Table 1 from the overlays themselves; the seat's file count from the staged full runs.
    packets = data["packets"]["runs"]
    assert packets["packets"] == 3 and packets["task_pairs"] == 1
    assert 0 < packets["jaccard_by_task"]["cc1-report"] < 1
    assert set(packets["retained_share"]) == {"cc1-report/curator-1", "cc1-report/curator-2",
                                              "cc1-triage/minimal"}
    assert all(0 < share < 1 for share in packets["retained_share"].values())
    [provenance] = data["provenance"]
    assert len(provenance["run_ids"]) == 6 and set(provenance["overlays"]) == {"cc1-report",
                                                                               "cc1-triage"}
    assert provenance["revision_digests"] and provenance["fingerprints"]
    assert data["task_labels"]["cc1-report"] == "Report the status of change control CC-1"
    code, text, _ = cli(capsys, "report", str(real_runs), "--replicates", "0")
    assert "Criterion pass (GEE-standardized): not estimated — perfect separation" in text
    assert "Curated packets (runs, Table 1)" in text and "Share of the seat's files retained" in text


def test_changed_overlay_is_refused(capsys, real_runs: Path, tmp_path: Path) -> None:
    record_file = next(p for p in sorted(real_runs.rglob(RECORD_FILENAME)))
    data = json.loads(record_file.read_text(encoding="utf-8"))
    data["inputs"]["overlay_sha256"] = "0" * 64
    copy = tmp_path / "runs" / "one"
    copy.mkdir(parents=True)
    (copy / RECORD_FILENAME).write_text(json.dumps(data), encoding="utf-8")
    code, _, err = cli(capsys, "report", str(tmp_path / "runs"), "--replicates", "0")
    assert code == 3
    assert "but the runs used 000000000000…; report on the overlay the runs used" in err


# Campaign runs: block and schedule position from the plan ---------------------------------------

def test_campaign_runs_carry_the_plans_block_and_order(capsys, tmp_path: Path) -> None:
    from worldkit.campaign import CampaignDesign, PlannedTask, expand
    from worldkit.campaign.plan import write_plan

    tasks = [PlannedTask(id=f"T{i}", ref=f"T{i}", kind="overlay", sha256=f"{i:064x}",
                         packets=["p1", "p2"]) for i in range(3)]
    design = CampaignDesign(tasks=[t.id for t in tasks], agents=["a", "b"],
                            conditions={"full": 2, "curated": 2}, seed=11)
    plan = expand(design, tasks)
    assert {r.block for r in plan.runs} == {1, 2}
    folder = tmp_path / "campaign"
    write_plan(plan, folder)
    pool: dict[tuple[str, str, str], list] = {}
    for record in synthetic(tasks=3, runs=4):
        pool.setdefault((record.task, record.agent, record.condition), []).append(record)
    for run in plan.runs:
        record = pool[(run.task, run.agent, run.condition)].pop().model_copy(
            update={"run_id": plan.run_id(run, 1)})
        (folder / "runs" / record.run_id).mkdir(parents=True)
        write_record(record, folder / "runs" / record.run_id / RECORD_FILENAME)
    out = tmp_path / "ledgers"
    code, _, err = cli(capsys, "export", "ledgers", str(folder / "runs"), "--out", str(out))
    assert code == 0, err
    with (out / "run_ledger.csv").open(newline="", encoding="utf-8") as handle:
        exported = {row["run_id"]: row for row in csv.DictReader(handle)}
    assert len(exported) == len(plan.runs)
    for run in plan.runs:
        row = exported[plan.run_id(run, 1)]
        assert (row["block"], row["scheduled_order_within_task_agent"]) == (
            str(run.block), str(run.order))
    # Within each task × agent cell the orders are 1…n, as the paper's ledger numbers them.
    cells: dict[tuple[str, str], list[int]] = {}
    for row in exported.values():
        cells.setdefault((row["task_id"], row["agent_id"]), []).append(
            int(row["scheduled_order_within_task_agent"]))
    assert all(sorted(v) == list(range(1, len(v) + 1)) for v in cells.values())
    # Read back: the same rows and the same report as the records themselves.
    assert read_ledgers(out, source="runs") == load_rows([folder / "runs"])

    # A record that is not the planned run its id names is refused, naming the file.
    first = plan.runs[0]
    path = folder / "runs" / plan.run_id(first, 1) / RECORD_FILENAME
    data = json.loads(path.read_text(encoding="utf-8"))
    data["agent"] = "b" if first.agent == "a" else "a"
    path.write_text(json.dumps(data), encoding="utf-8")
    code, _, err = cli(capsys, "export", "ledgers", str(folder / "runs"), "--out",
                       str(tmp_path / "again"))
    assert code == 3 and str(path) in err and "planned run 1" in err
    # An edited plan is refused too.
    data["agent"] = first.agent
    path.write_text(json.dumps(data), encoding="utf-8")
    (folder / "plan.json").write_bytes((folder / "plan.json").read_bytes().replace(b'"seed":11',
                                                                                     b'"seed":12'))
    code, _, err = cli(capsys, "export", "ledgers", str(folder / "runs"), "--out",
                       str(tmp_path / "third"))
    assert code == 3 and "plan.json" in err and "digest" in err

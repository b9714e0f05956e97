"""`worldkit campaign run/status` end to end: kill -9 and resume, one coordinator per campaign, status."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import jsonschema
import pytest

from tests.fixtures.overlays.paths import TRIAGE
from worldkit._cli.main import run
from worldkit.campaign import claims
from worldkit.record.execution import read_record
from worldkit.store import Store, list_runs

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def write_design(folder: Path, full: int = 2, curated: int = 1) -> Path:
    design = folder / "design.yaml"
    design.write_text(
        f"tasks: [{TRIAGE}]\nagents: [oracle, noop]\nconditions: {{full: {full}, curated: {curated}}}\nseed: 7\n"
    )
    return design


def start(design: Path, out: Path, *extra: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "worldkit", "campaign", "run", str(design), "--out", str(out), *extra],
        env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )


def status(out: Path, *extra: str) -> dict:
    done = subprocess.run([sys.executable, "-m", "worldkit", "campaign", "status", str(out), "--json", *extra],
                          env=ENV, capture_output=True, check=True)
    return json.loads(done.stdout)


def check_complete(out: Path, store_url: str, planned: int) -> None:
    """planned = done = records; one record per planned run, the attempt the store recorded."""
    plan = json.loads((out / "plan.json").read_bytes())
    campaign_id = json.loads((out / "campaign.json").read_bytes())["campaign_id"]
    with Store.open(store_url) as store:
        rows = claims.rows(store, campaign_id)
    assert [r.status for r in rows] == ["done"] * planned == ["done"] * len(plan["runs"])
    records = sorted((out / "runs").glob("*/execution-record.json"))
    assert len(records) == planned
    by_run = {read_record(p).run_id: p for p in records}
    assert sorted(by_run) == sorted(r.run_id for r in rows)
    for row in rows:
        record = read_record(by_run[row.run_id])
        planned_run = plan["runs"][row.seq - 1]
        assert (record.task, record.agent, record.condition) == (
            planned_run["task"], planned_run["agent"], planned_run["condition"])
    assert not (out / ".inflight").exists() or not any((out / ".inflight").iterdir())


def test_kill_9_during_a_two_worker_campaign_then_resume(tmp_path: Path) -> None:
    design, out = write_design(tmp_path, full=2, curated=1), tmp_path / "campaign"
    store_url = f"sqlite:///{out / 'store.db'}"
    proc = start(design, out, "--workers", "2")
    deadline = time.monotonic() + 120
    killed_running: list[tuple[int, int]] = []
    while time.monotonic() < deadline:
        time.sleep(0.2)
        if not (out / "campaign.json").exists():
            continue
        with Store.open(store_url) as store:
            rows = claims.rows(store, json.loads((out / "campaign.json").read_bytes())["campaign_id"])
        running = [(r.seq, r.attempt) for r in rows if r.status == "running"]
        if any(r.status == "done" for r in rows) and running:
            os.kill(proc.pid, signal.SIGKILL)  # the coordinator only: its workers must die with it
            killed_running = running
            holders = [claims.Holder.parse(r.holder) for r in rows if r.status == "running"]
            break
    proc.wait(10)
    assert killed_running, "the campaign finished before it could be killed mid-run"
    for _ in range(50):
        if not any(h.alive() for h in holders):
            break
        time.sleep(0.1)
    assert not any(h.alive() for h in holders), "workers outlived their coordinator"
    middle = status(out)
    assert middle["planned"] == 6 and middle["done"] < 6 and middle["running"] >= 1
    # A run seen running just before the kill may have finished in the moment before it landed:
    # the runs interrupted are those still running once every process is dead.
    with Store.open(store_url) as store:
        killed_running = [(r.seq, r.attempt) for r in claims.rows(store, final_id(out)) if r.status == "running"]
    assert killed_running

    again = start(design, out, "--workers", "2", "--json")
    stdout, stderr = again.communicate(timeout=180)
    assert again.returncode == 0, stderr.decode()
    final = json.loads(stdout)
    assert (final["planned"], final["done"], final["failed"], final["running"], final["records"]) == (6, 6, 0, 0, 6)
    assert "done" in stderr.decode()  # the progress display went to stderr
    check_complete(out, store_url, 6)
    with Store.open(store_url) as store:
        rows = {r.seq: r for r in claims.rows(store, final_id(out))}
        logged = {r.run_id for r in list_runs(store)}
    for seq, attempt in killed_running:  # interrupted runs were redone from scratch, as a new attempt
        assert rows[seq].attempt > attempt and rows[seq].run_id.endswith(f".a{rows[seq].attempt}")
    assert {r.run_id for r in rows.values()} <= logged
    assert status(out) | {"store": None} == {**final, "campaign_id": final_id(out), "store": None,
                                                "plan_sha256": json.loads((out / "campaign.json").read_bytes())["plan_sha256"]}


def _report_json(capsys, *args: str) -> dict:
    capsys.readouterr()
    assert run(["report", *args, "--json", "--replicates", "0"]) == 0
    data = json.loads(capsys.readouterr().out)
    data["provenance"] = [{k: v for k, v in p.items() if k != "stores"} for p in data["provenance"]]
    # a campaign folder's report also says which campaign it holds and how much of it (a store's holds them all)
    data["notes"] = [note for note in data["notes"] if not note.startswith("campaign ")]
    return data


def check_store_reports_as_folders(capsys, outs: list[Path], store_url: str, ledgers: Path,
                                   superseded: bool = False) -> None:
    """`report STORE` and `export ledgers STORE` give what the campaign folders give (the block
    and schedule order from the plan the store holds); an attempt the store did not count (as a
    superseded one) is left out with a note, and reported when named."""
    folders = [str(out) for out in outs]
    assert _report_json(capsys, store_url) == _report_json(capsys, *folders)
    for name, args in (("folders", folders), ("store", [store_url])):
        assert run(["export", "ledgers", *args, "--out", str(ledgers / name)]) == 0
    for name in ("criterion_results.csv", "run_ledger.csv", "task_mapping.csv"):
        assert (ledgers / "store" / name).read_bytes() == (ledgers / "folders" / name).read_bytes()
    assert b",1,1,completed," in (ledgers / "store" / "run_ledger.csv").read_bytes()  # block, order
    if not superseded:
        return
    from worldkit.campaign.plan import CampaignPlan
    from worldkit.run.runner import run_task

    plan = CampaignPlan.model_validate_json((outs[0] / "plan.json").read_bytes())
    planned = plan.runs[0]
    extra = run_task(TRIAGE, planned.agent, condition=planned.condition, runs_dir=ledgers / "extra",
                     store_url=store_url, run_id=plan.run_id(planned, 2)).record.run_id
    assert _report_json(capsys, store_url)["overall"] == _report_json(capsys, *folders)["overall"]
    capsys.readouterr()
    assert run(["report", store_url, "--replicates", "0"]) == 0
    text = " ".join(capsys.readouterr().out.split())  # notes wrap to the terminal's width
    assert f"1 record(s) of campaign attempts that are not their planned run's recorded attempt " \
           f"(superseded or unfinished) are not counted ({extra})" in text
    assert _report_json(capsys, store_url, "--run-id", extra)["provenance"][0]["run_ids"] == [extra]


def final_id(out: Path) -> str:
    return json.loads((out / "campaign.json").read_bytes())["campaign_id"]


def test_a_finished_campaign_restarted_runs_nothing_and_a_busy_folder_is_refused(tmp_path: Path, capsys) -> None:
    design, out = write_design(tmp_path, full=1, curated=0), tmp_path / "c"
    assert run(["campaign", "run", str(design), "--out", str(out), "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert (first["planned"], first["done"], first["records"]) == (2, 2, 2)
    assert run(["campaign", "status", str(out), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    from worldkit._cli.schema import all_schemas

    schema = all_schemas()["campaign-status.schema.json"]
    jsonschema.validators.validator_for(schema)(schema).validate(shown)
    assert (shown["schema_version"], shown["done"], shown["failures"]) == (1, 2, [])
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validators.validator_for(schema)(schema).validate({**shown, "done": "2"})
    before = sorted(p.name for p in (out / "runs").iterdir())
    assert run(["report", str(out)]) == 0  # `worldkit report` reads a campaign folder as it is
    report = capsys.readouterr().out
    assert "Raw outcomes by condition" in report and "  Runs " in report
    check_store_reports_as_folders(capsys, [out], str(out / "store.db"), tmp_path / "ledgers", superseded=True)
    assert run(["campaign", "run", str(design), "--out", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["done"] == 2
    assert sorted(p.name for p in (out / "runs").iterdir()) == before
    (tmp_path / "x").mkdir()
    other = write_design(tmp_path / "x", full=2, curated=0)
    assert run(["campaign", "run", str(other), "--out", str(out)]) == 2
    assert "holds another campaign's plan" in capsys.readouterr().err
    from worldkit.campaign.executor import _DirLock

    held = _DirLock(out)  # another coordinator on this folder
    try:
        assert run(["campaign", "run", str(design), "--out", str(out)]) == 2
        assert f"campaign folder {out} is in use by pid {os.getpid()}" in capsys.readouterr().err
    finally:
        held.release()


def test_a_second_coordinator_of_a_campaign_is_refused(tmp_path: Path, store_url: str) -> None:
    """Two hosts (two folders) on one store: the second coordinator is refused while the first runs,
    naming it and the way to use several machines (Ray); the first finishes every run once."""
    design = write_design(tmp_path, full=2, curated=1)
    first = start(design, tmp_path / "host-a", "--workers", "1", "--store", store_url, "--json")
    try:
        deadline = time.monotonic() + 120
        while not (tmp_path / "host-a" / "campaign.json").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(0.5)  # the coordinator holds the campaign right after writing campaign.json
        second = subprocess.run([sys.executable, "-m", "worldkit", "campaign", "run", str(design), "--out",
                                 str(tmp_path / "host-b"), "--store", store_url], env=ENV, capture_output=True,
                                timeout=120)  # fmt: skip
        stdout, stderr = first.communicate(timeout=240)
    finally:
        first.kill()
    assert first.returncode == 0, stderr.decode()
    assert (json.loads(stdout)["planned"], json.loads(stdout)["done"]) == (6, 6)
    if second.returncode == 0:
        pytest.skip("the first coordinator finished before the second started; nothing was contended")
    text = " ".join(second.stderr.decode().split())
    assert second.returncode == 2 and "is being run by another coordinator" in text and "--executor ray" in text
    assert not (tmp_path / "host-b" / "runs").exists() or not any((tmp_path / "host-b" / "runs").iterdir())
    with Store.open(store_url) as store:
        rows = claims.rows(store, final_id(tmp_path / "host-a"))
    assert [r.status for r in rows] == ["done"] * 6 and all(r.attempt == 1 for r in rows)


def test_status_reads_the_store_the_campaign_was_run_with(tmp_path: Path, capsys, monkeypatch) -> None:
    """Not the working folder's default store: the one `campaign.json` names; a --store naming
    another store is refused."""
    design, out = write_design(tmp_path, full=1, curated=0), tmp_path / "c"
    elsewhere = tmp_path / "stores" / "campaign.db"
    elsewhere.parent.mkdir()
    assert run(["campaign", "run", str(design), "--out", str(out), "--store", str(elsewhere), "--json"]) == 0
    capsys.readouterr()
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("WORLDKIT_STORE", raising=False)
    assert run(["campaign", "status", str(out), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert (shown["planned"], shown["done"], shown["pending"], shown["records"]) == (2, 2, 0, 2)
    assert shown["planned"] == shown["done"] + shown["failed"] + shown["running"] + shown["pending"]
    assert shown["store"] == f"sqlite:///{elsewhere}"
    assert not (tmp_path / ".worldkit").exists()
    assert run(["campaign", "status", str(out), "--store", str(tmp_path / "other.db")]) == 2
    assert "is not the store of campaign folder" in capsys.readouterr().err
    # a report of the folder names the campaign and how much of it the folder holds
    plan_sha = json.loads((out / "campaign.json").read_bytes())["plan_sha256"]
    assert run(["report", str(out), "--replicates", "0"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert f"campaign {final_id(out)} (plan sha256 {plan_sha[:12]}…): 2 of 2 planned runs" in text
    import shutil

    shutil.rmtree(sorted((out / "runs").iterdir())[0])  # one host's share of a campaign, say
    assert run(["report", str(out / "runs"), "--replicates", "0"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert f"(plan sha256 {plan_sha[:12]}…): 1 of 2 planned runs — a part of the campaign" in text


def test_cli_errors_name_the_file_and_the_fix(tmp_path: Path, capsys) -> None:
    assert run(["campaign", "status", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"error: {tmp_path} is not a campaign folder (no campaign.json); pass the --out of `worldkit campaign run`\n")
    bad = tmp_path / "bad.yaml"
    bad.write_text("tasks: [x]\nagents: [noop]\nconditions: {full: -1}\n")
    assert run(["campaign", "plan", str(bad)]) == 3
    assert capsys.readouterr().err == (
        f"error: file {bad}, field conditions.full: Input should be greater than or equal to 0; fix it "
        "(see `worldkit schema`, campaign.schema.json)\n")
    unknown = tmp_path / "unknown.yaml"
    unknown.write_text(f"tasks: [{TRIAGE}]\nagents: [no-such-agent]\n")
    assert run(["campaign", "run", str(unknown), "--out", str(tmp_path / "u")]) == 2
    assert "unknown agent 'no-such-agent'; available agents:" in capsys.readouterr().err


def test_plan_prints_the_schedule_as_a_table_matching_its_json(tmp_path: Path, capsys) -> None:
    import re

    design = write_design(tmp_path)
    assert run(["campaign", "plan", str(design), "--json"]) == 0
    planned = json.loads(capsys.readouterr().out)["runs"]
    assert run(["campaign", "plan", str(design)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("campaign ") and f"{len(planned)} runs" in lines[0]
    assert lines[2].split() == ["SEQ", "BLOCK", "ORDER", "TASK", "AGENT", "CONDITION"]
    rows = [re.split(r" {2,}", line.strip()) for line in lines[4:] if line.strip()]
    assert rows == [[str(r["seq"]), str(r["block"]), str(r["order"]), r["task"], r["agent"], r["condition"]]
                    for r in planned]

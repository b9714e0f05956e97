"""kill -9 of `worldkit serve` mid-work, 32 times: no answered call is lost, the chain and its
anchor check out, and — once the next start's recovery (`worldkit log recover`) has settled what
the killed server left — replaying the log gives the workspace on disk, every time.

Each round serves the triage task in a fresh folder, drives it with the MCP SDK's stdio client
(reads, listings, writes of the deliverable with a unique content each) and kills the server at a
random moment after the first answer. Write-ahead logging means every answer the client got is
in the log, in order; the server may have logged (at most) the one call it was answering.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from tests.fixtures.overlays.paths import TRIAGE
from tests.func.kill_support import drive_and_kill, server_params
from worldkit._cli.main import run as cli
from worldkit.store import Store, read_anchor, read_events, verify_chain

pytestmark = pytest.mark.slow

KILLS = 32


def _call(n: int) -> tuple[str, dict]:
    if n % 3 == 2:
        return "write_file", {"path": "triage.md", "content": f"# Triage\n\nround note {n}\n"}
    if n % 3 == 1:
        return "list_files", {"limit": 5}
    return "read_file", {"path": "workspace/triage.md"}


def test_thirty_kills_of_the_seat_server_lose_no_answered_call(tmp_path: Path, capsys) -> None:
    store = f"sqlite:///{tmp_path / 'store.db'}"
    rng = random.Random(11)
    tally = {"kills": 0, "answered": 0, "logged": 0, "replay_equal": 0, "anchor_ok": 0, "temp_completed": 0,
             "temp_removed": 0}
    for k in range(KILLS):
        out, run = tmp_path / f"round-{k}", f"kill-{k}"
        argv = ["serve", "--overlay", str(TRIAGE), "--out", str(out), "--store", store, "--run-id", run]
        answered = drive_and_kill(server_params(argv, tmp_path / f"pid-{k}", tmp_path), tmp_path / f"pid-{k}",
                                  _call, rng=rng, kill_after=(0.0, 0.4))  # fmt: skip
        tally["kills"] += 1
        with Store.open(store) as opened:
            events = list(read_events(opened, run))
            report = verify_chain(opened, run, anchor=read_anchor(out / "log-anchor.json"), key=None)
        logged = [(e.tool, e.arguments) for e in events]
        tally["answered"] += len(answered)
        tally["logged"] += len(logged)
        # Every answered call is logged, in order; at most the call in flight is logged besides.
        assert logged[: len(answered)] == answered, f"round {k}: an answered call is missing from the log"
        assert len(logged) - len(answered) in (0, 1), f"round {k}: {len(logged)} logged, {len(answered)} answered"
        assert report.ok, report.message
        tally["anchor_ok"] += 1
        # A write killed between staging and its rename leaves the killed server's temp file (and
        # nothing else). Recovery (as the next start does) completes it if its event was committed,
        # drops it otherwise.
        pid = (tmp_path / f"pid-{k}").read_text().strip()
        leftovers = [p.name for p in (out / "workspace").rglob(".wk-tmp-*")]
        assert all(name.startswith(f".wk-tmp-{pid}-") for name in leftovers), f"round {k}: unexpected {leftovers}"
        assert len(leftovers) <= 1, f"round {k}: {leftovers}"
        capsys.readouterr()
        assert cli(["log", "recover", run, "--store", store, "--workspace", str(out / "workspace"),
                    "--anchor", str(out / "log-anchor.json"), "--json"]) == 0  # fmt: skip
        settled = json.loads(capsys.readouterr().out)
        assert len(settled["completed"]) + len(settled["removed"]) == len(leftovers), f"round {k}: {settled}"
        assert not list((out / "workspace").rglob(".wk-tmp-*"))
        tally["temp_completed"] += len(settled["completed"])
        tally["temp_removed"] += len(settled["removed"])
        if settled["completed"]:  # the rename was missing: the log holds the in-flight write, unanswered
            assert len(logged) == len(answered) + 1 and logged[-1][0] == "write_file", f"round {k}"
        code = cli(["log", "replay", run, "--store", store, "--from", str(out / "package" / "candidate"),
                    "--workspace", str(out / "workspace")])  # fmt: skip
        assert code == 0, f"round {k}: replay differs from the disk: {capsys.readouterr().err}"
        tally["replay_equal"] += 1
    print("seat kill -9 tally:", tally)
    assert tally["kills"] == KILLS and tally["answered"] > KILLS
    assert tally["replay_equal"] == KILLS

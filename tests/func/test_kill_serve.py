"""kill -9 of `worldkit serve` mid-work, 30 times: no answered call is lost, the chain and its
anchor check out, and replaying the log gives the workspace on disk — except (a known gap, counted
in the tally) when the kill lands between a write reaching the disk and its event's commit.

Each round serves the triage task in a fresh folder, drives it with the MCP SDK's stdio client
(reads, listings, writes of the deliverable with a unique content each) and kills the server at a
random moment after the first answer. Write-ahead logging means every answer the client got is
in the log, in order; the server may have logged (at most) the one call it was answering.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tests.fixtures.overlays.paths import TRIAGE
from tests.func.kill_support import drive_and_kill, server_params
from worldkit._cli.main import run as cli
from worldkit.mcp.confine import sweep_temp_files
from worldkit.store import Store, read_anchor, read_events, verify_chain

pytestmark = pytest.mark.slow

KILLS = 30


def _call(n: int) -> tuple[str, dict]:
    if n % 3 == 2:
        return "write_file", {"path": "triage.md", "content": f"# Triage\n\nround note {n}\n"}
    if n % 3 == 1:
        return "list_files", {"limit": 5}
    return "read_file", {"path": "workspace/triage.md"}


def test_thirty_kills_of_the_seat_server_lose_no_answered_call(tmp_path: Path, capsys) -> None:
    store = f"sqlite:///{tmp_path / 'store.db'}"
    rng = random.Random(11)
    tally = {"kills": 0, "answered": 0, "logged": 0, "lost": 0, "replay_equal": 0, "anchor_ok": 0}
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
        # A write killed before its rename leaves the killed server's temp file (and nothing else):
        # the file was never replaced and the call never answered. Swept as the next start would.
        pid = (tmp_path / f"pid-{k}").read_text().strip()
        leftovers = [p.name for p in (out / "workspace").rglob(".wk-tmp-*")]
        assert all(name.startswith(f".wk-tmp-{pid}-") for name in leftovers), f"round {k}: unexpected {leftovers}"
        removed = sweep_temp_files(out / "workspace")
        assert len(removed) == len(leftovers), f"round {k}: {removed} vs {leftovers}"
        tally["temp_left"] = tally.get("temp_left", 0) + len(removed)
        capsys.readouterr()
        code = cli(["log", "replay", run, "--store", store, "--from", str(out / "package" / "candidate"),
                    "--workspace", str(out / "workspace")])  # fmt: skip
        if code == 0:
            tally["replay_equal"] += 1
            continue
        # KNOWN GAP (reported, not hidden): the seat applies a write to disk before its event is
        # committed, so a kill in that window leaves the one in-flight, never-answered write on
        # disk and not in the log. Anything else is a failure: the disk must hold exactly that
        # call's content, and the log must end at the last answered call.
        err = capsys.readouterr().err
        in_flight = _call(len(answered))
        assert in_flight[0] == "write_file" and len(logged) == len(answered), f"round {k}: {err}"
        assert "(changed: triage.md)" in err, f"round {k}: {err}"
        assert (out / "workspace" / "triage.md").read_text() == in_flight[1]["content"], f"round {k}: {err}"
        tally["in_flight_write_unlogged"] = tally.get("in_flight_write_unlogged", 0) + 1
    print("seat kill -9 tally:", tally)
    assert tally["kills"] == KILLS and tally["answered"] > KILLS
    assert tally["replay_equal"] + tally.get("in_flight_write_unlogged", 0) == KILLS

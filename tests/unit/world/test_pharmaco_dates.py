"""PharmaCo's files carry honest dates: a file's mtime is its last change on or before the projection
date, the same in every process, and nothing re-stamps itself on a day when nothing happens."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from worldkit.materialize import materialize
from worldkit.materialize.manifest import disk_stamps
from worldkit.verify.checks.dates import _changes_on
from worldkit.world import load_world

REPO = Path(__file__).resolve().parents[3]
WORLD = REPO / "worlds" / "pharmaco_demo"
SEATS = ["EMP-MSAT-002", "EMP-MSAT-003", "EMP-QA-001", "EMP-QC-001", "EMP-RA-001", "EMP-SQ-002"]


def _entries(root: Path) -> dict[str, dict]:
    return {e["path"]: e for e in json.loads((root / "manifest.json").read_bytes())["files"]}


def _quiet_day(start: dt.date) -> dt.date:
    """The first day from `start` on which no document, record or message of r2 changes."""
    state = load_world(WORLD).revision("r2")
    day = start
    while _changes_on(state, day):
        day += dt.timedelta(days=1)
    return day


def test_two_quiet_dates_differ_only_in_the_seat_card(tmp_path: Path) -> None:
    quiet = _quiet_day(dt.date(2026, 3, 3))
    eve = quiet - dt.timedelta(days=1)
    package = load_world(WORLD)
    a = materialize(package, "r2", eve, "EMP-QC-001", tmp_path / "a").out
    b = materialize(package, "r2", quiet, "EMP-QC-001", tmp_path / "b").out
    ea, eb = _entries(a), _entries(b)
    assert set(ea) == set(eb) and len(ea) > 700
    differ = sorted(p for p in ea if ea[p] != eb[p])
    assert differ == ["seat.json"], differ
    stamps_a, stamps_b = disk_stamps(a, sorted(ea)), disk_stamps(b, sorted(eb))
    assert sorted(p for p in ea if stamps_a[p] != stamps_b[p]) == ["seat.json"]
    # Pages that used to print the projection date show their own date instead.
    for root in (a, b):
        status = (root / "files/SiteShare/Validation/Equipment status/SC-04 qualification status.md").read_text()
        assert eve.strftime("%d %b %Y") not in status and quiet.strftime("%d %b %Y") not in status


def test_mtimes_are_the_last_change_on_or_before_the_date(tmp_path: Path) -> None:
    """Between two dates, an unchanged file keeps its mtime and a changed or new one is dated between them."""
    early, late = dt.date(2026, 2, 20), dt.date(2026, 3, 6)
    package = load_world(WORLD)
    a = materialize(package, "r2", early, "EMP-QC-001", tmp_path / "a").out
    b = materialize(package, "r2", late, "EMP-QC-001", tmp_path / "b").out
    ea, eb = _entries(a), _entries(b)
    lo, hi = f"{early.isoformat()}T23:59:59Z", f"{late.isoformat()}T23:59:59Z"
    unchanged = changed = 0
    for path, entry in eb.items():
        old = ea.get(path)
        assert entry["mtime"] <= hi, path
        if old is not None and old["sha256"] == entry["sha256"]:
            unchanged += 1
            assert old["mtime"] == entry["mtime"], path
        else:
            changed += 1
            assert entry["mtime"] > lo, (path, entry["mtime"])
    assert unchanged > 600 and changed > 10
    on_disk = disk_stamps(b, sorted(eb))
    assert all(on_disk[p] == e["mtime"] for p, e in eb.items())
    # Mail carries its own time of day; a record its last event.
    mail = next(e for p, e in eb.items() if p.startswith("mail/"))
    body = json.loads((b / mail["path"]).read_bytes())
    assert mail["mtime"] == f"{body['date']}T{body['time']}:00Z"
    record = next(e for p, e in eb.items() if p.startswith("records/qms/"))
    assert record["mtime"] == json.loads((b / record["path"]).read_bytes())["updated"] + "T12:00:00Z"


_TREE = """
import json, os, sys
from pathlib import Path
from worldkit.materialize import materialize
from worldkit.world import load_world
world, out, date = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
package = load_world(world)
tree = {}
for seat in sys.argv[4:]:
    root = materialize(package, "r2", date, seat, out / seat).out
    for path in sorted(p for p in root.rglob("*")):
        st = path.lstat()
        rel = str(path.relative_to(out))
        tree[rel] = [st.st_mtime_ns, path.read_bytes().hex() if path.is_file() else "dir"]
print(json.dumps(tree, sort_keys=True))
"""


@pytest.mark.slow
def test_every_seat_twice_in_separate_processes_gives_identical_bytes_and_mtimes(tmp_path: Path) -> None:
    trees = []
    for n, seed in enumerate(("1", "2")):
        run = subprocess.run(
            [sys.executable, "-c", _TREE, str(WORLD), str(tmp_path / f"run{n}"), "2026-03-02", *SEATS],
            check=True, capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": seed},
        )
        trees.append(json.loads(run.stdout))
    assert trees[0] == trees[1]
    assert len([k for k, v in trees[0].items() if v[1] != "dir"]) > 6 * 700

"""The pre-task records a replay starts from: parsed once, copied only where a replay writes."""

from __future__ import annotations

import json
import os
from pathlib import Path

from worldkit.overlay.changes import BaselineRecords, baseline_records


def _projection(root: Path) -> Path:
    for rid, status in (("DEV-1", "open"), ("DEV-2", "closed")):
        folder = root / "records" / "qms"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{rid}.json").write_text(json.dumps({"id": rid, "status": status, "history": []}))
    return root


def test_a_write_stays_in_its_own_replay(tmp_path: Path) -> None:
    projection = _projection(tmp_path)
    first, second = BaselineRecords(projection), BaselineRecords(projection)
    assert first == second == baseline_records(projection)
    record = first.writable("DEV-1")
    record["status"] = "closed"
    record["history"].append({"kind": "status", "status": "closed"})
    assert first["DEV-1"]["status"] == "closed" and first.writable("DEV-1") is record
    # the other replay, a new one, and a full copy still see the projection's state
    for other in (second, BaselineRecords(projection), baseline_records(projection)):
        assert other["DEV-1"] == {"id": "DEV-1", "status": "open", "history": []}
    assert first["DEV-2"] is second["DEV-2"]  # unwritten records are shared, not copied


def test_a_changed_file_is_parsed_again(tmp_path: Path) -> None:
    projection = _projection(tmp_path)
    assert BaselineRecords(projection)["DEV-2"]["status"] == "closed"
    path = projection / "records" / "qms" / "DEV-2.json"
    path.write_text(json.dumps({"id": "DEV-2", "status": "reopened", "history": []}))
    os.utime(path, ns=(1, 1))  # even with an old mtime: size, inode and ctime are in the signature
    assert BaselineRecords(projection)["DEV-2"]["status"] == "reopened"
    (projection / "records" / "qms" / "DEV-3.json").write_text(json.dumps({"id": "DEV-3", "status": "open"}))
    assert sorted(BaselineRecords(projection)) == ["DEV-1", "DEV-2", "DEV-3"]

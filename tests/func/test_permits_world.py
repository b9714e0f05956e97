"""A newcomer's world (tests/permits.py: a building-permits office) verifies clean as written.

It holds the shapes that once failed verify on a valid world: the first dated item alone on the
world's first day, a seat whose records tools appear with its first record, and a verifier-only
document dated the same day as the best probe."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.permits import write_permits
from worldkit._cli.main import run


def test_the_permits_office_freezes_and_verifies_clean(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    world, _overlay = write_permits(tmp_path)
    assert run(["freeze", "--world", str(world), "--overlays"]) == 0
    out = capsys.readouterr().out
    assert "lock       plan-review" in out and "projection r2 2026-02-02 S-CLERK" in out
    assert run(["verify", "--world", str(world), "--json"]) == 0, capsys.readouterr()
    body = json.loads(capsys.readouterr().out)
    status = {c["id"]: c["status"] for c in body["checks"]}
    assert {k for k, v in status.items() if v != "pass"} == {"task-pairs-identical", "event-logs"}, status
    dates = next(c for c in body["checks"] if c["id"] == "date-conformance")["counts"]
    # BP-26-0101 shares its day only with a verifier-only document: still the best probe
    assert dates["record"] == "BP-26-0101" and dates["effective"] == "2026-01-12"
    # nothing is probed on the world's first day (the charter, alone on 2025-07-01)
    assert all(not p.endswith("on 2025-07-01") for p in dates["probes"]), dates["probes"]

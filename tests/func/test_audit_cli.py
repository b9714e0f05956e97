"""`worldkit audit sample` then `audit score` on a small campaign folder: blinded sheets in CSV
and .xlsx, a sealed key, a seeded stratified draw, and the Appendix D figures from filled sheets."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from openpyxl import load_workbook

from tests.fixtures.overlays.paths import GOOD
from worldkit._cli.main import run
from worldkit.record.execution import find_records, read_record

# a run folder names its overlay by id: the fixture overlays must be on the configured path
pytestmark = pytest.mark.usefixtures("fixture_overlays_on_path")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("audit")
    store = f"sqlite:///{root / 's.db'}"
    for agent, condition in (("oracle", "full"), ("noop", "full"), ("oracle", "curated:curator-1")):
        code = run(["run", "--overlay", str(GOOD), "--agent", agent, "--condition", condition, "--out",
                    str(root / "runs"), "--store", store, "--judge", "facts"])  # fmt: skip
        assert code == 0
    return root / "runs"


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_sample_is_blinded_stratified_and_seeded(runs: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "audit"
    assert run(["audit", "sample", str(runs), "--criteria", "8", "--access", "6", "--seed", "5", "--out", str(out)]) == 0
    assert "14 items" in capsys.readouterr().out
    rows = _rows(out / "coder-A.csv")
    assert len(rows) == 14 and {r["kind"] for r in rows} == {"criterion", "access"}
    assert _rows(out / "coder-B.csv") == rows
    text = (out / "coder-A.csv").read_text(encoding="utf-8")
    for path in find_records([runs]):
        record = read_record(path)
        assert record.run_id not in text and record.agent not in text and "curated" not in text
    assert all(r["answer"] == "" for r in rows)
    book = load_workbook(out / "coder-A.xlsx", read_only=True)
    assert [c.value for c in next(book.worksheets[0].iter_rows(max_row=1))][:3] == ["item", "kind", "task"]
    key = json.loads((out / "key.json").read_text())
    # stratified: the criterion sample covers both verdicts and both conditions the runs hold
    sampled = [key["items"][r["item"]] for r in rows if r["kind"] == "criterion"]
    assert {s["automated"] for s in sampled} == {"pass", "fail"}
    assert {s["condition"].split(":")[0] for s in sampled} == {"full", "curated"}
    again = tmp_path / "again"
    assert run(["audit", "sample", str(runs), "--criteria", "8", "--access", "6", "--seed", "5", "--out", str(again)]) == 0
    assert (again / "coder-A.csv").read_bytes() == (out / "coder-A.csv").read_bytes()
    assert (again / "key.json").read_bytes() == (out / "key.json").read_bytes()


def test_filled_sheets_score_against_each_other_and_the_automation(runs: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "audit"
    assert run(["audit", "sample", str(runs), "--criteria", "10", "--access", "10", "--seed", "2", "--out", str(out)]) == 0
    key = json.loads((out / "key.json").read_text())
    rows = _rows(out / "coder-A.csv")
    flip = {"pass": "fail", "fail": "pass", "accessed": "not_accessed", "not_accessed": "accessed", "unknown": "accessed"}
    first = rows[0]["item"]
    for coder, changed in (("A", set()), ("B", {first})):  # coder B disagrees with the automation once
        for row in rows:
            automated = key["items"][row["item"]]["automated"]
            row["answer"] = flip[automated] if row["item"] in changed else automated
        if coder == "A":
            with (out / "coder-A.csv").open("w", newline="", encoding="utf-8") as handle:
                writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
                writer.writeheader()
                writer.writerows(rows)
        else:  # coder B fills the .xlsx
            book = load_workbook(out / "coder-B.xlsx")
            sheet = book.active
            answer_col = [c.value for c in sheet[1]].index("answer") + 1
            for number, row in enumerate(rows, start=2):
                sheet.cell(row=number, column=answer_col, value=row["answer"])
            book.save(out / "coder-B.xlsx")
    capsys.readouterr()
    assert run(["audit", "score", str(out), "--json", "--bootstrap", "200"]) == 0
    result = json.loads(capsys.readouterr().out)
    kind = "criteria" if key["items"][first]["kind"] == "criterion" else "access"
    pairs = result[kind]["pairs"]
    assert pairs["A vs automated"]["agreement"] == 1.0
    n = result[kind]["n"]
    assert pairs["B vs automated"]["agreement"] == pytest.approx((n - 1) / n)
    assert pairs["A vs B"]["agreement"] == pytest.approx((n - 1) / n)
    assert run(["audit", "score", str(out)]) == 0
    text = capsys.readouterr().out
    assert "criterion verdicts:" in text and "access labels:" in text and "A vs B" in text

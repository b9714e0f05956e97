"""`audit score` on a folder written by hand: κ and AC1 known from hand computation; refusals."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from worldkit.audit.score import score_audit
from worldkit.audit.sheets import COLUMNS
from worldkit.canon import sha256_json
from worldkit.errors import UsageError

# Ten criterion items (tasks t1 ×4, t2 ×3, t3 ×3; items 1-5 full, 6-10 curated) and four access items.
CRIT_A = "pass pass pass pass pass pass pass fail fail fail".split()
CRIT_B = "pass pass pass pass pass pass fail fail fail pass".split()
CRIT_AUTO = "pass pass pass pass pass pass pass fail fail pass".split()
ACC_A = ["accessed", "accessed", "not_accessed", "unknown"]
ACC_B = ["accessed", "not_accessed", "not_accessed", "unknown"]
ACC_AUTO = ["accessed", "accessed", "not_accessed", "not_accessed"]
TASKS = ["t1"] * 4 + ["t2"] * 3 + ["t3"] * 3


def _write(folder: Path, a: list[str], b: list[str]) -> None:
    rows, items = {}, {}
    specs = [("criterion", TASKS[n], "full" if n < 5 else "curated:curator-1", CRIT_AUTO[n]) for n in range(10)]
    specs += [("access", ["t1", "t2", "t3", "t3"][n], "full", ACC_AUTO[n]) for n in range(4)]
    for number, (kind, task, condition, automated) in enumerate(specs, 1):
        item = f"I{number:04d}"
        rows[item] = {"item": item, "kind": kind, "task": task, "criterion": "C1", "criterion_text": "The memo says X.",
                      "guidance": "", "deliverable_excerpt": "X.", "evidence": "files:files/x.md", "trajectory": ""}
        items[item] = {"kind": kind, "run_id": f"run-{number}", "agent": "a", "condition": condition, "task": task,
                       "criterion": "C1", "route": "semantic", "automated": automated}
    key = {"schema_version": 1, "kind": "worldkit-audit-key", "seed": 0, "coders": ["A", "B"],
           "requested": {"criteria": 10, "access": 4}, "items": items, "rows": rows, "sheets_sha256": {}}
    key["sha256"] = sha256_json(key)
    (folder / "key.json").write_text(json.dumps(key), encoding="utf-8")
    for coder, answers in (("A", a), ("B", b)):
        with (folder / f"coder-{coder}.csv").open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=COLUMNS)
            writer.writeheader()
            for (item, row), answer in zip(rows.items(), answers, strict=True):
                writer.writerow({**row, "answer": answer, "note": ""})


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    _write(tmp_path, CRIT_A + ACC_A, CRIT_B + ACC_B)
    return tmp_path


def test_hand_computed_kappa_and_ac1(folder: Path) -> None:
    result = score_audit(folder, resamples=300, seed=1).as_json()
    crit = result["criteria"]["pairs"]
    # A vs B: po .8; κ = (.8 − .58)/.42 = 11/21; AC1 = (.8 − .42)/.58 = 19/29
    assert crit["A vs B"]["agreement"] == pytest.approx(0.8)
    assert crit["A vs B"]["kappa"] == pytest.approx(11 / 21, abs=1e-6)
    assert crit["A vs B"]["ac1"] == pytest.approx(19 / 29, abs=1e-6)
    # A vs automated: po .9; pe(κ) = .7·.8 + .3·.2 = .62 → 14/19; π = (.75, .25), pe(AC1) = .375 → 21/25
    for coder in ("A", "B"):
        pair = crit[f"{coder} vs automated"]
        assert pair["agreement"] == pytest.approx(0.9)
        assert pair["kappa"] == pytest.approx(14 / 19, abs=1e-6)
        assert pair["ac1"] == pytest.approx(21 / 25, abs=1e-6)
    assert crit["A vs B"]["clusters"] == 3 and crit["A vs B"]["kappa_ci"] is not None
    by_condition = result["criteria"]["coder_vs_automated_by_condition"]
    assert by_condition == {"curated": {"A": 0.8, "B": 0.8, "n": 5}, "full": {"A": 1.0, "B": 1.0, "n": 5}}
    access = result["access"]["pairs"]["A vs B"]
    # po .75; pe(κ) = .5·.25 + .25·.5 + .25·.25 = .3125 → 7/11; π = (.375, .375, .25), pe(AC1) = .328125 → 27/43
    assert access["agreement"] == pytest.approx(0.75)
    assert access["kappa"] == pytest.approx(7 / 11, abs=1e-6)
    assert access["ac1"] == pytest.approx(27 / 43, abs=1e-6)


def test_a_broken_seal_is_refused(folder: Path) -> None:
    key = json.loads((folder / "key.json").read_text())
    key["items"]["I0001"]["automated"] = "fail"
    (folder / "key.json").write_text(json.dumps(key))
    with pytest.raises(UsageError, match="seal does not match"):
        score_audit(folder)


def test_sheets_that_cannot_be_scored_are_refused_naming_the_item(folder: Path) -> None:
    _write(folder, CRIT_A + ACC_A, CRIT_B[:-1] + ["maybe"] + ACC_B)
    with pytest.raises(UsageError, match=r"coder-B\.csv: item I0010: answer 'maybe' is not one of pass, fail"):
        score_audit(folder)
    _write(folder, CRIT_A + ACC_A, CRIT_B[:-1] + [""] + ACC_B)
    with pytest.raises(UsageError, match=r"I0010 have no answer"):
        score_audit(folder)
    _write(folder, CRIT_A + ACC_A, CRIT_B + ACC_B)
    text = (folder / "coder-A.csv").read_text().replace("The memo says X.", "The memo says Y.", 1)
    (folder / "coder-A.csv").write_text(text)
    with pytest.raises(UsageError, match=r"item I0001: column 'criterion_text' was changed"):
        score_audit(folder)

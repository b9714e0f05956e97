"""The `facts` judge reads like a careful grader: the issue-41 cases, on the committed PharmaCo truth.

Every deliverable text here is written by hand (never produced by worldkit); the expected verdict
is what a careful grader gives it.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from worldkit.overlay.facts import UNREADABLE, judge_facts
from worldkit.overlay.load import load_overlay
from worldkit.overlay.models import CriterionFacts, Overlay

ROOT = Path(__file__).resolve().parents[3] / "overlays" / "pharmaco_demo"


@cache
def _overlay(task: str) -> Overlay:
    return load_overlay(ROOT / task / "overlay.yaml")


def _judge(task: str, criterion: str, **texts: str) -> tuple[str, str]:
    overlay = _overlay(task)
    verdict = judge_facts(overlay.truth.criteria[criterion], dict(texts), overlay.request)
    return verdict.result, verdict.detail


RI8_RIGHT = """## Escalation and impact on the variation

Raise DI deviations for findings 1-6 and inform the QA Compliance Manager today. The affected values must not be
used in the 36-month variation until each finding is resolved or assessed. Tell RA (M. Oyelaran) that filing waits
for this assessment.
"""


def test_ri8_opposite_of_the_truth_fails() -> None:
    memo = RI8_RIGHT.replace(
        "The affected values must not be\nused in the 36-month variation until each finding is resolved or assessed.",
        "There is no need to hold the data from the 36-month variation; RA can file without waiting for the assessment.",
    )
    assert "no need to hold" in memo
    result, detail = _judge("records-integrity", "RI8", memo=memo)
    assert result == "fail", detail
    assert "unsafe" in detail or "opposite" in detail


def test_ri8_right_memo_passes() -> None:
    result, detail = _judge("records-integrity", "RI8", memo=RI8_RIGHT)
    assert result == "pass", detail


def test_ri8_memo_restating_the_request_fails() -> None:
    memo = (
        "Ruth asked me (mail of 26 February) for the targeted data integrity review of stability study STP-ZV-23-01 "
        "before Regulatory Affairs uses it for the 36-month shelf-life variation.\n\n"
        "Below are my findings, their classification, the escalation and what it means for the filing.\n\n"
        "Any deviation is held until the review, which I write with the findings, their classification, the "
        "escalation and what it means for the filing.\n"
    )
    result, detail = _judge("records-integrity", "RI8", memo=memo)
    assert result == "fail", detail


SA7_RIGHT_MEMO = """# Audit of CC-2025-0012

## Findings

F1 (major) - Quality agreement after first GMP use.

## Compliant

Questionnaire and on-site audit (10-11 Jun 2025) before the conditional approval; use of WB-1320 only for the
stability batches ZV-25031 and ZV-25033 while conditionally approved; full incoming testing of the first two lots.
"""


def test_sa7_right_memo_passes() -> None:
    result, detail = _judge("supplier-change-audit", "SA7", memo=SA7_RIGHT_MEMO)
    assert result == "pass", detail


def test_sa7_invented_extra_major_finding_fails() -> None:
    csv = ("finding_id,requirement,evidence,classification\n"
           "F1,SOP-SQ-001 quality agreement before first GMP use,QAG signed 2026-01-15,major\n"
           "F6,SOP-SQ-001 supplier audit before approval,On-site audit report for Kelso signed after the visit,major\n")  # fmt: skip
    result, detail = _judge("supplier-change-audit", "SA7", memo=SA7_RIGHT_MEMO, csv=csv)
    assert result == "fail" and "reported as a finding" in detail, detail


def test_sa7_memo_restating_the_request_fails() -> None:
    memo = (
        "# Audit of CC-2025-0012\n\n"
        "Henrik asked me (mail of 26 February) for an independent audit of how change control CC-2025-0012 - the "
        "second-source stopper WB-1320 from Westbrook Elastomers - was executed against our supplier procedures.\n\n"
        "## Contents\n\nThis memo gives my findings (requirement, evidence, classification), what was done correctly, "
        "and my recommendations.\n"
    )
    result, detail = _judge("supplier-change-audit", "SA7", memo=memo)
    assert result == "fail", detail


QS5_MEMO = """# Qualification sweep (2 Mar 2026)

Overdue: SC-03 (annual mapping due 27 Jan 2026) and HPLC-07 (six-monthly PQ due 26 Feb 2026; Aurion visit cancelled).

Open event: SC-04 humidity excursion (DEV-2026-0014) - the impact assessment for the Tamsorel lots is pending.

Actions before the ZV-23007 36M pull: raise a deviation for SC-03 and set it to Restricted; test on HPLC-04/05/09, not HPLC-07; close the SC-04 impact assessment.
"""


def test_qs5_not_hplc07_passes() -> None:
    result, detail = _judge("qualification-sweep", "QS5", memo=QS5_MEMO)
    assert result == "pass", detail


def test_qs5_hplc07_named_for_the_testing_fails() -> None:
    memo = QS5_MEMO.replace("test on HPLC-04/05/09, not HPLC-07", "test on HPLC-07, not HPLC-04/05/09")
    result, detail = _judge("qualification-sweep", "QS5", memo=memo)
    assert result == "fail", detail


FACTS = CriterionFacts.model_validate({
    "required": [{"says": "the data are held out of the filing",
                  "any": [{"all": [{"regex": "hold|held|wait"}, {"regex": "filing"}]}]}],
    "unsafe": [{"says": "HPLC-07 can be used", "any": [{"all": ["HPLC-07", {"regex": "can be used"}]}]}],
})  # fmt: skip


@pytest.mark.parametrize(("text", "expected"), [
    ("Hold the data out of the filing.", "pass"),
    ("Do not hold the data out of the filing.", "fail"),
    ("Holding the data back from the filing is not necessary.", "fail"),
    ("We do not only hold the data from the filing, we also inform RA.", "pass"),
    ("Should we hold the data out of the filing?", "ungraded"),
    ("If QA agrees, hold the data out of the filing.", "ungraded"),
    ("Hold the data out of the filing. HPLC-07 can be used.", "fail"),
    ("Hold the data out of the filing. It is not true that HPLC-07 can be used.", "pass"),
])  # fmt: skip
def test_polarity_and_hedges(text: str, expected: str) -> None:
    verdict = judge_facts(FACTS, {"memo": text})
    assert verdict.result == expected, verdict.detail
    assert verdict.grader == "facts" and verdict.detail.startswith("facts:")


def test_an_unreadable_deliverable_is_ungraded_not_guessed() -> None:
    verdict = judge_facts(FACTS, {"report.docx": UNREADABLE})
    assert verdict.result == "ungraded" and "cannot read report.docx" in verdict.detail
    # ... but an affirmed unsafe claim elsewhere decides it
    failing = judge_facts(FACTS, {"report.docx": UNREADABLE, "mail 1": "HPLC-07 can be used."})
    assert failing.result == "fail"


def test_the_request_own_words_are_never_credited() -> None:
    request = "Tell us whether to hold the data out of the filing and write it in a memo for the team."
    echo = "You asked whether to hold the data out of the filing and write it in a memo for the team."
    assert judge_facts(FACTS, {"memo": echo}, request).result == "fail"
    assert judge_facts(FACTS, {"memo": "Hold the data out of the filing."}, request).result == "pass"


def test_a_hedge_elsewhere_in_the_section_does_not_hedge_the_fact() -> None:
    facts = CriterionFacts.model_validate({"required": [{"says": "SC-03 is restricted", "any": [
        {"all": ["SC-03", {"regex": "restrict"}], "within": "section"}]}]})  # fmt: skip
    section = "## Actions\n\nSet SC-03 to Restricted. Mapping might move to week 13."
    assert judge_facts(facts, {"memo": section}).result == "pass"
    only_wondering = "## Actions\n\nShould SC-03 be restricted? Mapping moves to week 13."
    assert judge_facts(facts, {"memo": only_wondering}).result == "ungraded"
    # a negation in the previous sentence does not reach across the full stop
    assert judge_facts(facts, {"memo": "## Actions\n\nNo mapping was done. SC-03 is restricted."}).result == "pass"


@pytest.mark.parametrize("sentence", [
    "test on HPLC-04/05/09, not HPLC-07",
    "run the 36M assays on HPLC-05 and avoid HPLC-07 until its PQ",
    "use HPLC-09 instead of HPLC-07",
    "HPLC-07 must not be used; the testing runs on HPLC-04",
])  # fmt: skip
def test_qs5_accepts_declared_paraphrases_of_keeping_hplc07_out(sentence: str) -> None:
    memo = QS5_MEMO.replace("test on HPLC-04/05/09, not HPLC-07", sentence)
    result, detail = _judge("qualification-sweep", "QS5", memo=memo)
    assert result == "pass", detail

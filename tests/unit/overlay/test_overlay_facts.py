"""The offline `facts` judge: pure (facts + texts → verdict), labelled `facts`, registered as a judge."""

from __future__ import annotations

from worldkit.grade.judge import judge_id, make_judge
from worldkit.overlay.facts import FactsJudge, judge_facts
from worldkit.overlay.models import CriterionFacts

FACTS = CriterionFacts.model_validate({
    "required": [
        {"says": "HPLC-07 must not be used", "any": [
            {"all": ["HPLC-07", {"regex": "\\b(not|never)\\b[^.]{0,40}\\bus(e|ed)\\b|do not use|out of (use|service)"}]}]},
        {"says": "SC-03 needs a deviation", "any": [{"all": ["SC-03", "deviation"]},
                                                    {"all": ["SC-03", {"regex": "restrict"}]}]},
    ],
    "unsafe": [{"says": "HPLC-07 can be used", "any": [{"all": ["HPLC-07", {"regex": "\\b(can|may) (still )?be used"}]}]}],
})  # fmt: skip


def test_every_required_fact_in_any_of_its_forms() -> None:
    for texts in ({"memo": "HPLC-07 must not be used. Raise a deviation for SC-03."},
                  {"memo": "Put sc 03 on Restricted.", "csv": "HPLC 07,overdue,DO NOT USE"}):  # fmt: skip
        verdict = judge_facts(FACTS, texts)
        assert verdict.passed and verdict.grader == "facts" and verdict.detail.startswith("facts:"), verdict


def test_a_missing_fact_or_an_unsafe_claim_fails_and_is_named() -> None:
    missing = judge_facts(FACTS, {"memo": "HPLC-07 must not be used."})
    assert not missing.passed and "does not state: SC-03 needs a deviation" in missing.detail
    unsafe = judge_facts(FACTS, {"memo": "HPLC-07 is not used now but can still be used for the pull. SC-03 deviation."})
    assert not unsafe.passed and "states unsafe claim: HPLC-07 can be used" in unsafe.detail


def test_registered_as_the_facts_judge() -> None:
    judge = make_judge("facts")
    assert judge is not None and judge_id(judge) == "facts"
    assert FactsJudge().describe()["kind"] == "facts"

"""Claims understand negation, contrary qualifiers, units, questions and copied request text."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from worldkit.overlay.claims import Claim, discount_request

OUTSTANDING = Claim.model_validate({"all": ["ZV-23007", {"number": 36, "unit": "month"},
                                            {"regex": "outstanding|pending|not yet (available|tested|pulled)"}]})  # fmt: skip
USED_COMMERCIALLY = Claim.model_validate({"all": [{"any": ["stopper", "stoppers", "lot", "WB-1320"]},
                                                  {"regex": r"(used|filled|released) (in|into|for) (a |the )?commercial"}]})  # fmt: skip
STOPPED = Claim.model_validate({"all": ["DEV-2026-0006", {"regex": "near[- ]miss|stopped|intercepted"}]})


@pytest.mark.parametrize("text", [
    "The ZV-23007 36M result is still outstanding.",
    "The ZV-23007 36-month time point is pending (pull in week 12).",
    "For ZV-23007 the 36 months result is not yet available.",
    "ZV-23007: 36 mo data pending.",
])  # fmt: skip
def test_a_claim_is_found_in_any_wording_the_world_uses(text: str) -> None:
    assert OUTSTANDING.match(text) is not None


@pytest.mark.parametrize("text", [
    "The ZV-23007 36-month time point is no longer outstanding.",
    "The ZV-23007 36-month result is not outstanding any more.",
    "Nothing is pending for ZV-23007 at 36 months.",
    "ZV-23007 was tested at 36 months without anything outstanding.",
])  # fmt: skip
def test_a_negated_claim_is_not_said(text: str) -> None:
    assert OUTSTANDING.match(text) is None


def test_a_question_says_nothing() -> None:
    assert OUTSTANDING.match("Is the ZV-23007 36-month result still outstanding?") is None
    assert OUTSTANDING.match("The ZV-23007 36-month result is outstanding. Is that a problem?") is not None


def test_a_number_claim_carries_its_unit() -> None:
    percent = Claim.model_validate({"all": ["total impurities", {"number": 2.49, "unit": "%"}]})
    assert percent.match("Total impurities 2.49 % at 36 months.") is not None
    assert percent.match("Total impurities were 2.49 percent.") is not None
    assert percent.match("Total impurities 2.49 mg/mL at 36 months.") is None
    assert percent.match("Total impurities 2.49 at 36 months.") is None
    months = Claim.model_validate({"all": [{"number": 36, "unit": "month"}, "shelf life"]})
    for written in ("36M", "36-month", "36 months", "36 month", "36 mo"):
        assert months.match(f"a shelf life of {written}") is not None, written
    assert months.match("a shelf life of 36 mg") is None


@pytest.mark.parametrize("text", [
    "The Westbrook lot was used in a commercial batch.",
    "The stopper lot was not stopped in time and was filled into a commercial batch.",
    "Because the scan was not configured, the lot was filled into a commercial batch.",
])  # fmt: skip
def test_a_forbidden_claim_is_not_switched_off_by_a_negation_elsewhere(text: str) -> None:
    assert USED_COMMERCIALLY.match(text) is not None


@pytest.mark.parametrize("text", [
    "No Westbrook stopper was used in a commercial batch.",
    "The stoppers may be used in commercial batches only after approval.",
    "The stoppers were never filled into a commercial batch.",
    "The lot was stopped at line clearance without being filled into a commercial batch.",
])  # fmt: skip
def test_a_negated_or_qualified_forbidden_claim_is_not_made(text: str) -> None:
    assert USED_COMMERCIALLY.match(text) is None


def test_a_negated_near_miss_is_not_a_near_miss() -> None:
    assert STOPPED.match("DEV-2026-0006: the lot was stopped at line clearance.") is not None
    assert STOPPED.match("DEV-2026-0006: the lot was not stopped in time.") is None
    assert STOPPED.match("DEV-2026-0006 was no near miss.") is None


def test_cues_that_are_not_negations() -> None:
    limit = Claim.model_validate({"all": ["assay", {"number": 95.0, "unit": "%"}]})
    assert limit.match("Assay not less than 95.0 % over the shelf life.") is not None
    assert limit.match("Assay no. 3 gave 95.0 %.") is not None


REQUEST = ("Prepare the updated stability sections of Module 3 for the variation that would extend the shelf life "
           "of Zelvara vials from 24 to 36 months, based on the study STP-ZV-23-01.")  # fmt: skip


def test_sentences_copied_from_the_request_are_discounted() -> None:
    proposes = Claim.model_validate({"all": ["shelf life", {"number": 36}, {"regex": "extend|propos"}]})
    copied = "# Draft\n\nPrepare the updated stability sections of Module 3 for the variation that would extend the shelf life of Zelvara vials from 24 to 36 months.\n"
    assert proposes.match(copied) is not None
    assert proposes.match(discount_request(copied, REQUEST)) is None
    written = "# Draft\n\nWe propose to extend the shelf life to 36 months on the long-term data of three batches.\n"
    assert proposes.match(discount_request(written, REQUEST)) is not None
    assert discount_request(written, "") == written


@given(st.sampled_from(["not", "never", "no longer", "isn't", "wasn't", "not yet"]),
       st.sampled_from(["", "formally ", "effectively "]))  # fmt: skip
def test_any_negation_before_the_term_takes_it_back(cue: str, adverb: str) -> None:
    claim = Claim.model_validate({"all": ["CAPA-2026-0002", {"regex": "closed"}]})
    verb = "is" if cue in ("not", "never", "no longer", "not yet") else ""
    assert claim.match(f"CAPA-2026-0002 is {adverb}closed on time.") is not None
    assert claim.match(f"CAPA-2026-0002 {verb} {cue} {adverb}closed on time.") is None


def test_a_term_written_across_a_negation_is_taken_back() -> None:
    cause = Claim.model_validate({"all": [{"regex": r"(root cause|cause)\b.{0,60}\b(process design|CPP)"}]})
    assert cause.match("The root cause was the process design.") is not None
    assert cause.match("Root cause: worn tubing, an equipment cause, not a weakness of the process design.") is None


def test_before_takes_back_only_the_event_it_names() -> None:
    agreement = Claim.model_validate({"all": [{"any": ["QAG-WB-2026-01", "quality agreement"]}]})
    assert agreement.match("Stoppers went into ZV-25031 before the quality agreement was signed.") is not None
    signed = Claim.model_validate({"all": ["quality agreement", {"regex": "signed"}]})
    assert signed.match("Stoppers went into ZV-25031 before the quality agreement was signed.") is None
    assert signed.match("The quality agreement was signed on 15 Jan 2026.") is not None


def test_a_negation_the_claim_writes_is_its_wording_but_another_is_not() -> None:
    trained = Claim.model_validate({"all": ["analyst", {"regex": r"not (yet )?trained|untrained"}]})
    assert trained.match("The analyst was not yet trained on v4.") is not None
    assert trained.match("The analyst was never untrained.") is None


INCIDENCE = Claim.model_validate({"all": [{"number": 4.8, "tolerance": 0.05, "unit": "%"}, {"regex": "ILD|pneumonitis"}]})
CLAUSES = Claim.model_validate({"all": [{"regex": "section|clause|protocol"}, {"number": 9.3, "tolerance": 0.001}]})
REJECTED = Claim.model_validate({"all": [{"number": 1140}, {"regex": "syringe"}, {"regex": "reject"}]})


@pytest.mark.parametrize(("claim", "text"), [
    (INCIDENCE, "It is not true that, in the safety population (N=168), ILD occurred in 8 patients (4.8%)."),
    (INCIDENCE, "It is false that ILD/pneumonitis was seen in 4.8 % of patients; the rate was lower."),
    (CLAUSES, "ZP-25002 was not included under protocol sections 8.4 and 9.3."),
    (REJECTED, "The 1,140 syringes from pump 3 were not identified and rejected."),
    (INCIDENCE, "ILD did not occur in 8 of 168 patients (4.8%)."),
])  # fmt: skip
def test_a_negation_reaches_across_parentheses_joined_items_and_sentences(claim: Claim, text: str) -> None:
    assert claim.match(text) is None


@pytest.mark.parametrize(("claim", "text"), [
    (INCIDENCE, "ILD/pneumonitis occurred in 8 of 168 patients (4.8%), none of them after week 40."),
    (CLAUSES, "The inclusion follows protocol sections 8.4 and 9.3, not the draft."),
    (REJECTED, "All 1,140 syringes were identified from the fill log and rejected, without any released."),
    (Claim.model_validate({"all": ["C-03", {"number": 45.2, "tolerance": 0.05}], "within": "paragraph"}),
     "C-03: patients without prior platinum had an ORR of 45.2% (14/31)."),
    (INCIDENCE, "The pump (not the tubing) was replaced; ILD occurred in 4.8% of patients."),
])  # fmt: skip
def test_a_negation_takes_back_only_what_it_governs(claim: Claim, text: str) -> None:
    assert claim.match(text) is not None


def test_a_number_may_leave_its_unit_to_a_neighbour_but_not_write_another() -> None:
    upper = Claim.model_validate({"all": [{"number": 29}, {"number": 324, "unit": "day", "unit_required": False}]})
    assert upper.match("Onset was at a median of 74.5 days (range 29–324).") is not None
    assert upper.match("The range was 29 to 324 days.") is not None
    assert upper.match("The range was 29 to 324 weeks.") is None


def test_a_date_of_month_precision_is_said_by_its_month_but_not_by_another_day() -> None:
    day = Claim.model_validate({"all": [{"date": "2025-08-26", "precision": "month"}]})
    for written in ("requalified Aug 2025", "requalified August 2025", "requalified 2025-08", "on 26 August 2025"):
        assert day.match(written) is not None, written
    for written in ("requalified Sep 2025", "requalified 27 Aug 2025", "requalified Aug 2024"):
        assert day.match(written) is None, written
    exact = Claim.model_validate({"all": [{"date": "2025-08-26"}]})
    assert exact.match("requalified Aug 2025") is None

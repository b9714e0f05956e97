"""The generator's negations negate the claim, or no variant is made (a variant that still states
its claim is not wrong, and a gate counting it as an escape measures the generator)."""

from __future__ import annotations

import pytest

from worldkit.mutate.declared import DeclaredClaim
from worldkit.mutate.prose import _substitute_unit, negate, wrong_memos


@pytest.mark.parametrize(("sentence", "negated"), [
    ("Site 114 is not ready for activation.", "Site 114 is ready for activation."),
    ("AVR-008 rev B does not meet DI-REQ-017: there is no significant interference.",
     "AVR-008 rev B does meet DI-REQ-017: there is significant interference."),
    ("The pull is scheduled in week 12 and is still outstanding.",
     "The pull is not scheduled in week 12 and is not still outstanding."),
])  # fmt: skip
def test_every_auxiliary_is_negated_and_a_negation_is_taken_away_not_doubled(sentence: str, negated: str) -> None:
    assert negate(sentence, 0) == negated


@pytest.mark.parametrize("line", ["## Why the overwrap is needed", "| ORR, % (95% CI) | 43.0 |", "Dear Jonas,",
                                  "Kind regards,", "**Response.**"])  # fmt: skip
def test_headings_table_rows_and_short_lines_are_left_alone(line: str) -> None:
    assert negate(line, 1) == line


def test_a_sentence_without_an_auxiliary_is_denied_as_a_whole() -> None:
    assert negate("In the safety population ILD occurred in 8 patients.", 1) == (
        "It is not true that in the safety population ILD occurred in 8 patients.")


def test_no_negated_variant_where_the_claim_stays_stated_in_a_label_or_heading() -> None:
    label = DeclaredClaim(criterion="C1", path="m.md", terms=[{"regex": "open"}, "ZV-23007"], window="sentence", forbid=False)
    text = "Open point: ZV-23007 36M is pulled in week 12.\n"
    assert [v for v in wrong_memos("m.md", text, [label], 0) if v.family == "claim-negated"] == []
    heading = DeclaredClaim(criterion="C2", path="m.md", terms=[{"regex": "shelf life"}, {"number": 36}], window="sentence", forbid=False)
    text = "# Extension of the shelf life to 36 months\n\nWe propose a shelf life of 36 months.\n"
    assert [v for v in wrong_memos("m.md", text, [heading], 0) if v.family == "claim-negated"] == []


def test_every_writing_of_the_number_gets_the_other_unit() -> None:
    assert _substitute_unit("36 months of data; the 36-month pull", 36) == "36 weeks of data; the 36-week pull"
    assert _substitute_unit("8 patients (4.8%), 4.8 % overall", 4.8) == "8 patients (4.8 mg/mL), 4.8 mg/mL overall"

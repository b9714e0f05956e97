"""Rubrics proven by mutation: generated right and wrong deliverables, graded, tallied per criterion.

From each task's reference deliverable the campaign generates right variants (other dialects,
encodings, file formats, date and number forms, identifier spellings, wordings) that must pass
every criterion, wrong variants (swapped values, shifted dates, substituted units, negated claims,
dropped and added rows, wrong identifiers) that must fail the criteria they touch, and a
do-nothing family that must pass nothing (`campaign`). `gate` turns a report into `overlay check`
problems and refuses `overlay freeze` on a rubric that fails it.

The generators never import the checks' parsing or matching code: a generator and a grader that
share code cannot test each other. They grade through the public grading path only.
"""

from worldkit.mutate.campaign import THRESHOLD, MutationReport, Tally, generate, run_campaign
from worldkit.mutate.variant import Variant

__all__ = ["THRESHOLD", "MutationReport", "Tally", "Variant", "generate", "run_campaign"]

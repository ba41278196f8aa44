"""Advice a report gives from its own results: what would settle an unsettled audit.

Pure functions of the report model, so the terminal can say them for a saved report too.
"""

from __future__ import annotations

from ..stats.verdict import listed
from .model import ReferenceInfo, TestResult


def more_questions_caveat(
    results: list[TestResult], reference: ReferenceInfo, tested: int, testable: int
) -> str | None:
    """With a reference, a likelihood test short of "likely" may settle on more questions: say so.

    Measured (docs/VALIDATION.md, "How many questions?"; docs/validation/sample-size/subsets.md):
    one pass over half of 588-590 GSM8K questions (three splits), with the base as reference, read
    "likely contaminated" in 11-18% of 200-question subsets, 33-64% of 400-question ones and every
    whole audit; without a reference no size helped, so the note is only given with one. The
    terminal report prints it too, as the next step.
    """
    unsettled = [r.name for r in results if r.kind == "bulk" and r.status == "warn"]
    settled = any(r.calibrated and r.status == "fail" for r in results)  # an uncalibrated fail is not counted
    if reference.status != "used" or not unsettled or settled or tested >= testable:
        return None
    return (
        f"{listed(unsettled)} went beyond chance on {tested} of the benchmark's {testable} usable "
        "questions. With a reference these tests gain power with the questions: in our validation a "
        "model that saw half of a GSM8K sample once read 'likely contaminated' in 11-18% of "
        "200-question audits, 33-64% of 400-question ones and every audit of the whole sample "
        "(588-590 questions; docs/validation/sample-size/subsets.md). To settle it, run again with -n "
        f"{testable}; the cache keeps this run's work."
    )

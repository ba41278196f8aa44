"""The terminal's test lines: which p-value a reader sees beside the verdict's."""

from __future__ import annotations

from contamcheck import Report
from contamcheck.report.terminal import test_line as line_of


def _with_p(report: Report, raw: float, adjusted: float) -> str:
    result = next(r for r in report.tests if r.null is not None)
    return line_of(result.model_copy(update={"p_value": raw, "p_adjusted": adjusted, "status": "pass"}))


def test_a_raw_p_under_005_shows_the_adjusted_one_the_verdict_reads(twin_report: Report) -> None:
    assert "(p = 0.046; adjusted p = 0.23)" in _with_p(twin_report, 0.046, 0.23)


def test_otherwise_the_line_shows_one_p(twin_report: Report) -> None:
    assert _with_p(twin_report, 0.31, 1.0).endswith("(p = 0.31)")  # no one reads 0.31 as significant
    assert _with_p(twin_report, 1e-5, 5e-5).endswith("(p < 0.001)")  # the same as printed

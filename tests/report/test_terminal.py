"""The terminal's test lines: which p-value a reader sees beside the verdict's."""

from __future__ import annotations

from contamcheck import Report
from contamcheck.pipeline.runners import _familiarity
from contamcheck.report.terminal import format_p
from contamcheck.report.terminal import test_line as line_of


def _with_p(report: Report, raw: float, adjusted: float) -> str:
    result = next(r for r in report.tests if r.null is not None)
    return line_of(result.model_copy(update={"p_value": raw, "p_adjusted": adjusted, "status": "pass"}))


def test_a_raw_p_under_005_shows_the_adjusted_one_the_verdict_reads(twin_report: Report) -> None:
    assert "(p = 0.046; adjusted p = 0.23)" in _with_p(twin_report, 0.046, 0.23)


def test_otherwise_the_line_shows_one_p(twin_report: Report) -> None:
    assert _with_p(twin_report, 0.31, 1.0).endswith("(p = 0.31)")  # no one reads 0.31 as significant
    assert _with_p(twin_report, 1e-5, 5e-5).endswith("(p < 0.001)")  # the same as printed


def test_canonical_order_says_prefers_only_where_it_went_beyond_chance() -> None:
    """A passing canonical-order read "prefers the published order" from the sign of its mean alone."""
    from contamcheck.report.model import TestResult

    base = TestResult(
        name="canonical-order", title="", kind="aggregate", calibrated=True, calibration="", measures="",
        null_hypothesis="", caveat="", citation="", status="pass", n=10, statistic_name="one-sided t",
        statistic=0.34, p_value=0.37, p_adjusted=1.0, mean_difference=0.2,
    )  # fmt: skip
    assert "no preference for the published order beyond chance over 10 shards" in line_of(base)
    failed = base.model_copy(update={"status": "fail", "p_value": 1e-5, "p_adjusted": 1e-4})
    assert "canonical-order: prefers the published order over 10 shards" in line_of(failed)
    below = base.model_copy(update={"mean_difference": -0.2, "statistic": -0.38})
    assert "does not prefer the published order" in line_of(below)


def test_a_p_value_between_0001_and_001_keeps_two_significant_digits() -> None:
    """guided's p = 0.0015 printed "p = 0.001", which reads as alpha itself."""
    assert format_p(0.0015) == "p = 0.0015" and format_p(0.00104) == "p = 0.0010"
    assert format_p(0.0099) == "p = 0.0099" and format_p(0.0123) == "p = 0.012"
    assert format_p(0.00099) == "p < 0.001" and format_p(0.31) == "p = 0.31"


def test_familiarity_below_the_twins_says_below() -> None:
    below = _familiarity((-0.00374, -0.01, 0.0), 2, 100, 100, None)
    assert "originals score 0.00374 below their twins (median, 95% interval -0.01 to 0)" in below
    same = _familiarity((0.0, -0.01, 0.02), 2, 100, 100, None)
    assert "originals score the same as their twins (median, 95% interval -0.01 to +0.02)" in same
    above = _familiarity((0.0987, 0.0618, 0.143), 2, 100, 100, None)
    assert "originals score +0.0987 above their twins (median, 95% interval +0.0618 to +0.143)" in above


def test_more_questions_asked_than_there_are_says_these_are_all(twin_report: Report) -> None:
    from contamcheck.report.terminal import header_lines

    tested = twin_report.sample.tested
    asked = twin_report.model_copy(
        update={"sample": twin_report.sample.model_copy(update={"requested": 100000})}
    )
    assert f"{tested} questions (all that can be tested), control:" in header_lines(asked)[1]
    fewer = twin_report.model_copy(
        update={"sample": twin_report.sample.model_copy(update={"requested": tested})}
    )
    assert header_lines(fewer)[1].startswith(f"{tested} questions, control:")


def test_what_a_terminal_would_act_on_in_a_saved_report_is_shown_not_sent(twin_report: Report) -> None:
    """A report from anyone: an escape sequence in a name or a warning must not clear the screen,
    retitle the window or hide text; bidi overrides must not reorder the line."""
    import io

    from rich.console import Console

    from contamcheck.report.terminal import render

    report = twin_report.model_copy(deep=True)
    report.model.name = "evil\x1b[2J\x1b]0;pwned\x07\x1b[8mhidden\u202etxt.exe"
    report.warnings = [*report.warnings, "\x1b[1;31mred\x9b31m"]
    report.sample.set_aside = {"\x1b]0;pwned\x07\x1b[2Jreason": 3}  # a key, printed in the header
    out = io.StringIO()
    render(report, Console(file=out, width=200, force_terminal=False))
    text = out.getvalue()
    assert not any(ch in text for ch in "\x1b\x07\x9b\u202e")
    assert "evil\ufffd[2J\ufffd]0;pwned\ufffd\ufffd[8mhidden\ufffdtxt.exe" in text
    assert "\ufffd[1;31mred\ufffd31m" in text and "\ufffd]0;pwned\ufffd\ufffd[2Jreason" in text
    assert report.model.name.startswith("evil\x1b")  # the report itself is left as it was


def test_a_question_beyond_a_bulk_chance_explains_is_not_called_a_tail() -> None:
    """One question of 50 far above a tight bulk gives the share beyond it a lower bound above 0
    (against a normal bulk), while never-seen samples flag as many half the time: the note must not
    read as evidence beside a test that passed."""
    from audits import quick_audit

    report = quick_audit("fake:clean", "sample", limit=50, ordered=False)
    minimum = report.test("min-k")
    assert minimum.status == "pass" and minimum.null is not None and minimum.null.tail_share_low > 0
    assert minimum.note is not None and "95% lower bound" not in minimum.note
    assert (
        "1 question above it, as many as chance gives a never-seen benchmark (tail count p = " in minimum.note
    )

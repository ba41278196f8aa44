"""The verdict rule of SPEC §8, case by case."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from contamcheck.stats import exit_code, is_calibrated, judge


@dataclass
class Outcome:
    name: str
    calibrated: bool = True
    p_value: float | None = 0.5
    flag_rate: float | None = 0.05
    min_attainable_p: float | None = 1e-5
    kind: str = "paired"
    expected_rate: float = 0.05
    spread_carried: bool = False  # a bulk test whose p-value the spread test against the twins gave
    count_withheld: bool = False  # a bulk test whose null held a minority of the questions
    shared_with_twins: bool = False  # a bulk test whose tail stood out with its twins

    @property
    def aggregate_evidence(self) -> bool:
        return self.kind == "aggregate" or self.spread_carried


def test_inconclusive_says_why_no_calibrated_test_ran():
    """Only guided asked for, or the calibrated tests skipped: the advice names the real cause."""
    only_guided = judge([Outcome("guided", calibrated=False, p_value=1e-6, flag_rate=0.4)], alpha=0.001)
    assert only_guided.code == "inconclusive"
    assert "Uncalibrated guided" in only_guided.explanation and "leave out --tests" in only_guided.explanation
    too_few = judge([Outcome("min-k", p_value=None), Outcome("guided", calibrated=False)], alpha=0.001)
    assert too_few.code == "inconclusive" and "at least 20" in too_few.explanation
    assert "--reference" not in too_few.explanation + only_guided.explanation


def test_an_alpha_no_permutation_count_reaches_says_to_raise_alpha():
    capped = judge([Outcome("completion", min_attainable_p=1 / 10_000_001)], alpha=1e-9)
    assert capped.code == "inconclusive" and "raise --alpha" in capped.explanation
    few = judge([Outcome("completion", min_attainable_p=0.01)], alpha=0.001)
    assert few.code == "inconclusive" and "test more questions (-n)" in few.explanation


def test_calibration_rule():
    assert is_calibrated(likelihood=False, has_reference=False, control_file=False)
    assert not is_calibrated(likelihood=True, has_reference=False, control_file=False, bulk_null=False)
    assert is_calibrated(likelihood=True, has_reference=False, control_file=False)  # the bulk null
    assert is_calibrated(likelihood=True, has_reference=True, control_file=False)
    assert is_calibrated(likelihood=True, has_reference=False, control_file=True)


def test_calibrated_failure_is_likely():
    j = judge(
        [Outcome("completion", p_value=1e-5, flag_rate=0.3), Outcome("min-k", calibrated=False)], alpha=0.001
    )
    assert j.code == "likely" and j.statuses["completion"] == "fail"


def test_low_flag_rate_is_not_likely_even_when_significant():
    j = judge([Outcome("completion", p_value=1e-5, flag_rate=0.08)], alpha=0.001)
    assert j.code == "evidence" and j.statuses["completion"] == "warn"
    assert "completion reached adjusted p < 0.001, but flagged under twice the expected rate" in j.explanation
    weaker = judge([Outcome("completion", p_value=0.01, flag_rate=0.08)], alpha=0.001)
    assert weaker.code == "evidence" and "twice the expected rate" not in weaker.explanation


def test_an_uncalibrated_test_is_shown_and_not_counted():
    j = judge(
        [Outcome("completion"), Outcome("guided", calibrated=False, p_value=1e-6, flag_rate=0.5)], alpha=0.001
    )
    assert j.code == "clean" and j.statuses["guided"] == "fail"  # its own status stays what it measured
    assert j.explanation.startswith("No calibrated test went beyond chance.")
    assert "guided went beyond chance but is uncalibrated" in j.explanation and "--control" in j.explanation
    # beside a calibrated test's warning, the verdict is that test's, and the note says guided didn't count
    j = judge(
        [
            Outcome("completion", p_value=0.01, flag_rate=0.08),
            Outcome("guided", calibrated=False, p_value=1e-6, flag_rate=0.5),
        ],
        alpha=0.001,
    )
    assert j.code == "evidence" and j.explanation.startswith("completion went beyond chance")
    assert "shown and not counted" in j.explanation
    # and where no calibrated test had the power, the inconclusive verdict says so too
    weak = judge(
        [
            Outcome("completion", min_attainable_p=0.01),
            Outcome("guided", calibrated=False, p_value=1e-6, flag_rate=0.5),
        ],
        alpha=0.001,
    )
    assert weak.code == "inconclusive" and "shown and not counted" in weak.explanation
    quiet = judge([Outcome("completion"), Outcome("min-k", calibrated=False, p_value=0.5)], alpha=0.001)
    assert quiet.code == "clean" and quiet.explanation.startswith("No test went beyond chance.")


def test_holm_over_calibrated_tests_decides_likely():
    # 0.0008 alone would pass alpha = 0.001, but not after Holm over two calibrated tests.
    j = judge([Outcome("a", p_value=0.0008, flag_rate=0.3), Outcome("b", p_value=0.5)], alpha=0.001)
    assert j.p_adjusted["a"] == pytest.approx(0.0016)
    assert j.code == "evidence"


def test_inconclusive_without_calibrated_tests_or_power():
    assert judge([Outcome("min-k", calibrated=False)], alpha=0.001).code == "inconclusive"
    assert judge([], alpha=0.001).code == "inconclusive"
    weak = judge([Outcome("completion", min_attainable_p=0.01)], alpha=0.001)
    assert weak.code == "inconclusive" and "power" in weak.explanation
    # a floor of exactly 0 is all the power there is, not a missing floor
    assert judge([Outcome("min-k", min_attainable_p=0.0)], alpha=0.001).code == "clean"
    assert judge([Outcome("min-k", min_attainable_p=None)], alpha=0.001).code == "inconclusive"


def test_skipped_tests_are_not_counted():
    j = judge([Outcome("completion", p_value=None, flag_rate=None), Outcome("min-k")], alpha=0.001)
    assert j.statuses["completion"] == "skipped"
    assert j.code == "clean"


def test_aggregate_test_fails_on_p_alone():
    j = judge([Outcome("canonical-order", kind="aggregate", p_value=1e-5, flag_rate=None)], alpha=0.001)
    assert j.code == "likely"


def test_canonical_order_alone_can_not_clear_a_benchmark():
    """A benchmark without numbers (no twins): only canonical order judges, and its silence is not
    a clean result; what it finds still counts."""
    order = Outcome("canonical-order", kind="aggregate", p_value=0.13, flag_rate=None)
    skipped = [Outcome(name, p_value=None, flag_rate=None) for name in ("completion", "min-k", "zlib")]
    quiet = judge([order, *skipped], alpha=0.001)
    assert quiet.code == "inconclusive" and "Only canonical-order could judge" in quiet.explanation
    assert "--control FILE" in quiet.explanation and exit_code(quiet.code) == 4
    assert judge(
        [Outcome("canonical-order", kind="aggregate", p_value=0.01, flag_rate=None)], 0.001
    ).code == ("evidence")
    assert judge([order, Outcome("min-k")], alpha=0.001).code == "clean"  # a question-level test judged


def test_questions_without_twins_judged_by_the_bulk_alone_can_not_clear_a_benchmark():
    """--twinless: a model that memorised every question makes one bulk too (found by a black-box
    pass: 74% memorised and more read "no evidence found", exit 0); exact recall or controls can tell."""
    bulk = [Outcome(name, kind="bulk") for name in ("min-k", "min-k++", "zlib")]
    order = Outcome("canonical-order", kind="aggregate", p_value=0.4, flag_rate=None)
    quiet = judge([*bulk, order, Outcome("completion", p_value=None)], alpha=0.001, twinless=True)
    assert quiet.code == "inconclusive" and exit_code(quiet.code) == 4
    assert "none here could see a benchmark seen whole" in quiet.explanation
    assert "--control FILE, instead of --twinless" in quiet.explanation
    assert judge(bulk, alpha=0.001).code == "clean"  # with twins for every question: as before
    assert judge([*bulk, Outcome("completion")], alpha=0.001, twinless=True).code == "clean"  # recall judged
    leak = Outcome("zlib", kind="bulk", p_value=1e-6, flag_rate=0.4)
    assert judge([*bulk[:2], leak], alpha=0.001, twinless=True).code == "likely"  # what stands out counts
    # the advice for a benchmark without numbers does not offer --twinless when it is on
    skipped = [Outcome(name, p_value=None, flag_rate=None) for name in ("completion", "min-k")]
    for twinless in (False, True):
        said = judge([order, *skipped], alpha=0.001, twinless=twinless).explanation
        assert ("--twinless lets" in said) is not twinless
        said = judge(skipped, alpha=0.001, twinless=twinless).explanation
        assert ("--twinless lets" in said) is not twinless


def test_a_test_stopped_by_its_permutation_floor_says_how_to_go_further():
    """--permutations 100: completion flagged every question at p = 1/101, the smallest it allows, and
    the audit read "Some evidence" without a word on why (found by a black-box pass)."""
    floored = Outcome("completion", p_value=1 / 101, flag_rate=1.0, min_attainable_p=1 / 101)
    verdict = judge([floored, Outcome("min-k")], alpha=0.001)
    assert verdict.code == "evidence"
    assert (
        "completion reached the smallest p-value its permutations or questions allow" in verdict.explanation
    )
    assert "raise --permutations, or -n" in verdict.explanation
    bulk = Outcome("min-k", kind="bulk", min_attainable_p=0.0)  # a fitted tail's p has no floor
    strong = Outcome("completion", p_value=1e-7, flag_rate=1.0, min_attainable_p=1e-7)
    tiny = judge([strong, bulk], alpha=1e-10)
    assert tiny.code == "evidence" and "raise --alpha" in tiny.explanation
    free = Outcome("completion", p_value=0.01, flag_rate=1.0, min_attainable_p=1e-5)  # not at its floor
    assert "smallest p-value" not in judge([free, Outcome("min-k")], alpha=0.001).explanation


def test_a_question_level_test_too_weak_to_reach_alpha_does_not_clear_a_benchmark():
    """Four questions, all memorised: completion flags 4 of 4 but its p can't go below 1/16 (found
    by a black-box pass, where canonical order's power made the audit "No evidence found", exit 0)."""
    order = Outcome("canonical-order", kind="aggregate", p_value=0.4, flag_rate=None, min_attainable_p=1e-6)
    weak = Outcome("completion", p_value=0.064, flag_rate=1.0, min_attainable_p=0.0625)
    verdict = judge([order, weak], alpha=0.001)
    assert verdict.code == "inconclusive" and exit_code(verdict.code, "evidence") == 4
    assert "completion ran, but with too few usable questions or permutations" in verdict.explanation
    strong = Outcome("completion", p_value=0.3, flag_rate=0.05, min_attainable_p=1e-5)
    assert judge([order, strong], alpha=0.001).code == "clean"  # it could have found a leak, and didn't


def test_a_bulk_test_carried_by_the_spread_test_fails_on_p_alone():
    # HumanEval, three passes over half the prompts, the base as reference: the leaked half moved as
    # a block, 4-5% flagged, and the spread against the twins at its floor (docs/VALIDATION.md)
    carried = Outcome("min-k", kind="bulk", p_value=6.7e-5, flag_rate=0.045, spread_carried=True)
    counted = Outcome("min-k", kind="bulk", p_value=6.7e-5, flag_rate=0.045)
    assert judge([carried], alpha=0.001).code == "likely"
    assert judge([counted], alpha=0.001).code == "evidence"  # a flag count needs twice the rate
    alone = judge([carried], alpha=0.001).explanation
    assert "as a whole" in alone and alone.endswith("its flags do not say which questions.")
    # beside a test whose flags do say which (Gemma-3's one pass, SmolLM2 as reference: zlib 90 flags)
    flagged = Outcome("zlib", kind="bulk", p_value=1e-70, flag_rate=0.46)
    both = judge([carried, flagged], alpha=0.001).explanation
    assert both.endswith("its flags do not say which questions; those of zlib do.")
    # two carried by the spread (Gemma-3's HumanEval one pass with the base: min-k and min-k++),
    # and tests without flags of their own (canonical order; a carried test with many flags) are
    # never said to name the questions
    second = Outcome("min-k++", kind="bulk", p_value=6.7e-5, flag_rate=0.06, spread_carried=True)
    order = Outcome("canonical-order", kind="aggregate", p_value=1e-5, flag_rate=None)
    many = Outcome("zlib", kind="bulk", p_value=6.7e-5, flag_rate=0.2, spread_carried=True)
    plural = judge([carried, second, order, many], alpha=0.001).explanation
    assert plural.endswith("min-k and min-k++ saw it in the benchmark as a whole (its questions spread "
                           "more than their twins, as when part of it was seen), not in single questions: "
                           "their flags do not say which questions.")  # fmt: skip


@pytest.mark.parametrize(
    ("code", "fail_on", "expected"),
    [
        ("clean", "likely", 0),
        ("evidence", "likely", 0),
        ("evidence", "evidence", 1),
        ("likely", "likely", 1),
        ("likely", "evidence", 1),
        ("inconclusive", "likely", 4),
        ("inconclusive", "evidence", 4),
    ],
)
def test_exit_codes(code, fail_on, expected):
    assert exit_code(code, fail_on) == expected


def test_a_test_that_could_not_judge_makes_a_quiet_audit_inconclusive():
    """A minority null: most of the benchmark may stand out, so silence elsewhere is not "clean"."""
    quiet = [Outcome("completion", p_value=0.6), Outcome("zlib", kind="bulk", p_value=0.7)]
    withheld = Outcome("min-k", kind="bulk", p_value=None, flag_rate=None, count_withheld=True)
    judged = judge([*quiet, withheld], alpha=0.001)
    assert judged.code == "inconclusive" and judged.statuses["min-k"] == "skipped"
    assert "min-k could not judge" in judged.explanation and "under 40%" in judged.explanation
    assert judge(quiet, alpha=0.001).code == "clean"
    spread = Outcome("min-k", kind="bulk", p_value=0.4, flag_rate=None, count_withheld=True)
    assert judge([*quiet, spread], alpha=0.001).code == "clean"  # a reference's spread test judged it
    found = judge([Outcome("completion", p_value=1e-6, flag_rate=0.4), withheld], alpha=0.001)
    assert found.code == "likely"  # another test's evidence stands
    some = judge([Outcome("completion", p_value=0.004, flag_rate=0.12), withheld], alpha=0.001)
    assert some.code == "evidence"


def test_a_withheld_test_below_alpha_with_a_small_spread_says_why_it_is_not_likely():
    tiny = Outcome("zlib", kind="bulk", p_value=1e-6, flag_rate=None, count_withheld=True)
    judged = judge([Outcome("completion", p_value=0.6), tiny], alpha=0.001)
    assert judged.code == "evidence"
    assert (
        "too small an effect to call" in judged.explanation
        and "flagged under twice" not in judged.explanation
    )

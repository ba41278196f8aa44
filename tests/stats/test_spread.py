"""The spread test: exact on a small case, calibrated on simulated clean pairs, and a partial leak caught."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from contamcheck.report import model
from contamcheck.stats.spread import (
    SMALL_EFFECT,
    TWINS_BACK,
    SpreadOutcome,
    carries,
    shared_with_twins,
    spread_test,
    tail_gain_test,
)


def clean_pairs(rng: np.random.Generator, n: int, shift: float) -> tuple[np.ndarray, np.ndarray]:
    """Originals and twins that share most of their score (the words) and differ by a familiarity shift."""
    common = rng.normal(0, 1, n)
    return common + rng.normal(0, 0.3, n) + shift, common + rng.normal(0, 0.3, n)


def test_the_p_value_matches_exact_enumeration_of_the_swaps():
    x = np.array([3.0, 0.5, 2.0, -1.0, 1.5, 0.2, 4.0])
    y = np.array([1.0, 0.7, 1.0, -0.8, 0.5, 0.4, 1.0])
    outcome = spread_test(x, y, swaps=40_000, seed=2)
    ranks = stats.rankdata(x + y)
    observed = np.corrcoef(ranks, x - y)[0, 1]
    assert outcome.correlation == pytest.approx(observed)
    swapped = [
        np.corrcoef(ranks, np.array(signs) * (x - y))[0, 1] for signs in itertools.product((1, -1), repeat=7)
    ]
    exact = np.mean(np.array(swapped) >= observed - 1e-12)
    assert outcome.p_value == pytest.approx(exact, abs=0.01)
    assert outcome.min_attainable_p == pytest.approx(0.5**7)


@pytest.mark.parametrize("shift", [0.0, 0.5, 5.0])
def test_clean_pairs_are_flagged_at_the_nominal_rate_whatever_the_familiarity_shift(shift):
    rng = np.random.default_rng(int(shift * 10))
    runs = 3000  # the rate's standard error is 0.4 points: the bounds are about 3.7 of them
    p_values = np.array(
        [spread_test(*clean_pairs(rng, 150, shift), swaps=400, seed=i).p_value for i in range(runs)]
    )
    assert 0.035 <= np.mean(p_values < 0.05) <= 0.065
    assert 0.4 <= np.mean(p_values) <= 0.6  # uniform on average, not only at the 5% point


def test_a_partial_leak_lifting_originals_more_than_their_twins_is_caught():
    rng = np.random.default_rng(7)
    x, y = clean_pairs(rng, 150, shift=0.3)
    leaked = rng.random(150) < 0.5
    # a leaked question gains about two spreads of the bulk (AUROC ~0.9, as one pass with a
    # reference); its twin, which shares the words, gains most of that
    x[leaked] += 2.0
    y[leaked] += 1.2
    outcome = spread_test(x, y, swaps=20_000)
    assert outcome.correlation > 0
    assert outcome.p_value < 0.001


def test_identical_pairs_give_no_evidence_and_bad_shapes_are_refused():
    x = np.linspace(0, 1, 20)
    assert spread_test(x, x.copy(), swaps=200).p_value == pytest.approx(1.0)
    with pytest.raises(ValueError, match="equal-length"):
        spread_test(x, x[:-1], swaps=10)
    with pytest.raises(ValueError, match="finite"):
        spread_test(x, np.where(x > 0.5, np.nan, x), swaps=10)


def test_the_spread_test_carries_a_result_only_when_it_gave_the_p_value_with_a_small_effect():
    assert carries(tail_p=0.7, spread_p=3e-5, correlation=0.42)
    assert not carries(tail_p=1e-80, spread_p=3e-5, correlation=0.42)  # the tail count gave it
    assert not carries(tail_p=0.7, spread_p=3e-5, correlation=SMALL_EFFECT / 2)  # too small to matter
    assert not carries(tail_p=None, spread_p=3e-5, correlation=0.42)  # no reference, no spread test


def test_a_saved_result_says_whether_the_spread_test_carried_it():
    null = model.BulkNull(
        centre=0.0, scale=1.0, bulk_share=1.0, components=1, tail_share_low=0.0,
        tail_p_value=0.73, spread_correlation=0.42, spread_p_value=3.3e-5,
    )  # fmt: skip
    fields = dict(
        name="min-k", title="", kind="bulk", calibrated=True, calibration="", measures="",
        null_hypothesis="", caveat="", citation="", status="pass",
    )  # fmt: skip
    assert model.TestResult(**fields, null=null).aggregate_evidence
    counted = null.model_copy(update={"tail_p_value": 1e-9})  # the tail count gave the p-value
    assert not model.TestResult(**fields, null=counted).aggregate_evidence
    assert not model.TestResult(**fields).aggregate_evidence


def test_a_tail_counts_only_where_the_twins_back_it():
    backed = SpreadOutcome(0.3, 0.001, 1e-4, 10_000)
    unbacked = SpreadOutcome(-0.05, TWINS_BACK, 1e-4, 10_000)
    assert not shared_with_twins(1e-9, backed)
    assert shared_with_twins(1e-9, unbacked)
    assert not shared_with_twins(1e-9, unbacked, gain_p=0.001)  # the tail's own gain backs it
    assert shared_with_twins(1e-9, SpreadOutcome(0.1, 0.03, 1e-4, 10_000), gain_p=0.2)  # twice 0.03
    assert not shared_with_twins(TWINS_BACK, unbacked)  # no tail beyond chance: nothing to withhold
    assert not shared_with_twins(None, unbacked)


def test_the_tail_gain_test_is_exact_on_exchangeable_pairs_and_sees_a_small_tail():
    rng = np.random.default_rng(3)
    p_values = []
    for _ in range(400):
        x, y = clean_pairs(rng, 200, 0.0)
        kind = rng.random(200) < 0.2  # lifted alike: still exchangeable
        p_values.append(tail_gain_test(x + 3 * kind, y + 3 * kind, 20))
    assert 0.02 <= np.mean(np.array(p_values) < 0.05) <= 0.09
    x, y = clean_pairs(rng, 200, 0.0)
    memorised = np.arange(200) < 10  # 5% of the questions, their twins lifted 60% as much
    assert tail_gain_test(x + 4 * memorised, y + 2.4 * memorised, 10) < 0.01
    assert tail_gain_test(x, y, 0) == 1.0 and tail_gain_test(x, x, 10) == 1.0


def test_a_lifted_kind_is_shared_with_the_twins_and_memorised_questions_are_not():
    """30% of the pairs lifted three SDs, question and twin alike (a kind of text the model knows
    better than the reference): the twins share the tail in about 95% of draws, the chance level of
    the two tests of the twins. The same questions memorised (their twins lifted 60% as much) are
    backed by the twins in every draw. docs/METHODS.md, "A tail its twins share", gives the rates
    for smaller tails (``experiments/twin_backing.py``)."""
    rng = np.random.default_rng(11)
    draws, n = 200, 200
    shared = backed = 0
    for _ in range(draws):
        x, y = clean_pairs(rng, n, 0.0)
        kind = rng.random(n) < 0.3
        top = int(kind.sum())
        for lift, twin, count in ((3, 3, "shared"), (3, 1.8, "backed")):
            xs, ys = x + lift * kind, y + twin * kind
            outcome = shared_with_twins(1e-9, spread_test(xs, ys, 2000, seed=1), tail_gain_test(xs, ys, top))
            if count == "shared":
                shared += outcome
            else:
                backed += not outcome
    assert 0.9 * draws <= shared <= 0.99 * draws, shared
    assert backed == draws

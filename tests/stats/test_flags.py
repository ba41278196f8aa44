"""Flags and permutation p-values: hand-checked cases and simulated clean / contaminated data."""

from __future__ import annotations

import math

import numpy as np
import pytest

from contamcheck.stats import label_permutation_test, mirrored_threshold, sign_flip_test


def test_mirrored_threshold_is_the_95th_percentile_of_the_mirror_image():
    diffs = np.arange(-10, 11, dtype=float)  # symmetric: the mirror image is the same set
    assert mirrored_threshold(diffs) == pytest.approx(np.quantile(diffs, 0.95))
    shifted = diffs + 100  # all positive: the mirror image is all negative
    assert mirrored_threshold(shifted) == pytest.approx(-np.quantile(shifted, 0.05))


def test_sign_flip_p_value_matches_exact_enumeration_on_a_small_case():
    diffs = np.array([3.0, 2.5, 2.0, 1.5, -0.5, 0.7])
    outcome = sign_flip_test(diffs, permutations=20_000, seed=1)
    # Exact: enumerate all 2^6 sign patterns.
    counts = []
    for pattern in range(2**6):
        signs = np.array([1 if pattern >> i & 1 else -1 for i in range(6)])
        flipped = signs * diffs
        counts.append(int((flipped > np.quantile(-flipped, 0.95)).sum()))
    exact = np.mean(np.array(counts) >= outcome.flagged)
    assert outcome.p_value == pytest.approx(exact, abs=0.01)
    assert outcome.min_attainable_p == pytest.approx(0.5**6)


def test_p_value_is_never_zero_and_floors_at_one_over_permutations():
    diffs = np.full(200, 5.0)
    outcome = sign_flip_test(diffs, permutations=999)
    assert outcome.p_value == pytest.approx(1 / 1000)
    assert outcome.flagged == 200


def test_zero_differences_carry_no_power():
    outcome = sign_flip_test(np.zeros(50), permutations=1000)
    assert outcome.flagged == 0
    assert outcome.p_value == 1.0
    assert outcome.min_attainable_p == 1.0


def test_simulated_clean_data_flags_about_five_percent_with_uniform_p_values():
    rng = np.random.default_rng(0)
    rates, p_values = [], []
    for _ in range(300):
        diffs = rng.normal(0, 1, 200)
        outcome = sign_flip_test(diffs, permutations=500, seed=int(rng.integers(1 << 30)))
        rates.append(outcome.flagged / 200)
        p_values.append(outcome.p_value)
    assert np.mean(rates) == pytest.approx(0.05, abs=0.01)
    p = np.array(p_values)
    # Roughly uniform (a discrete statistic, so a little conservative): no excess of small p.
    assert np.mean(p < 0.05) <= 0.07
    assert np.mean(p < 0.5) == pytest.approx(0.5, abs=0.12)


def test_twenty_percent_strongly_shifted_items_are_caught():
    rng = np.random.default_rng(1)
    diffs = rng.normal(0, 1, 200)
    diffs[:40] += 4.0  # 20% memorised
    outcome = sign_flip_test(diffs, permutations=20_000, seed=3)
    assert outcome.p_value < 0.001
    assert outcome.flags[:40].mean() > 0.8
    assert outcome.flags[40:].mean() < 0.1


def test_label_permutation_on_exchangeable_samples():
    rng = np.random.default_rng(2)
    p_values = []
    for _ in range(200):
        outcome = label_permutation_test(
            rng.normal(size=60), rng.normal(size=60), permutations=300, seed=int(rng.integers(1 << 30))
        )
        p_values.append(outcome.p_value)
    assert np.mean(np.array(p_values) < 0.05) <= 0.08


def test_label_permutation_catches_a_shifted_benchmark():
    rng = np.random.default_rng(3)
    bench, controls = rng.normal(size=100), rng.normal(size=100)
    bench[:30] += 5
    outcome = label_permutation_test(bench, controls, permutations=5000)
    assert outcome.p_value < 0.001
    assert outcome.threshold == np.sort(controls)[95]  # the 96th of 100: ⌈0.95 × 101⌉
    assert outcome.expected_rate == pytest.approx(5 / 101)
    assert outcome.flags[:30].all()
    assert outcome.min_attainable_p == pytest.approx(2 / 5001)  # two statistics, Bonferroni
    assert outcome.auroc == pytest.approx(0.5 + 0.3 / 2, abs=0.06)


@pytest.mark.parametrize(
    ("controls", "rate"),
    [(1, 1 / 2), (2, 1 / 3), (5, 1 / 6), (18, 1 / 19), (19, 1 / 20), (20, 1 / 21), (38, 1 / 39),
     (39, 2 / 40), (60, 3 / 61), (200, 10 / 201)],
)  # fmt: skip
def test_label_permutation_reports_the_chance_rate_its_threshold_gives(controls, rate):
    """Exchangeable questions beat the control they must beat as often as the reported rate: at
    most 5% from 19 controls on (as low as 1 in 39 at 38, the highest still the one to beat), 1 in
    m + 1 below 19 (with one control, half an unseen benchmark is flagged)."""
    rng = np.random.default_rng(controls)
    rates, expected = [], set()
    for _ in range(400):
        outcome = label_permutation_test(rng.normal(size=50), rng.normal(size=controls), permutations=1)
        rates.append(outcome.flags.mean())
        expected.add(outcome.expected_rate)
    (reported,) = expected
    assert reported == pytest.approx(rate)
    assert np.mean(rates) == pytest.approx(rate, abs=3 * np.std(rates) / np.sqrt(400) + 0.002)
    assert rate <= 0.05 or controls < 19


def test_label_permutation_catches_a_light_exposure_of_half_the_benchmark():
    """Half the questions a little above the controls: few cross the 95th percentile, the ranks see it."""
    rng = np.random.default_rng(4)
    bench, controls = rng.normal(size=200), rng.normal(size=400)
    bench[:100] += 0.8
    outcome = label_permutation_test(bench, controls, permutations=5000)
    assert outcome.p_value < 0.001
    assert outcome.flags.mean() < 0.15  # the flag count alone would be weak evidence
    assert outcome.parts is not None and outcome.parts[1] < outcome.parts[0]  # the rank sum carries it
    assert outcome.auroc is not None and 0.6 < outcome.auroc < 0.75


def test_label_permutation_counts_ties_fairly():
    """Discrete scores (completion's share of numbers) tie often; ties must not look like a shift."""
    rng = np.random.default_rng(5)
    p_values = [
        label_permutation_test(
            rng.integers(0, 3, 80).astype(float), rng.integers(0, 3, 80).astype(float), 300, seed=i
        ).p_value
        for i in range(150)
    ]
    assert np.mean(np.array(p_values) < 0.05) <= 0.08


def test_label_permutation_power_bound_for_tiny_samples():
    outcome = label_permutation_test(np.array([1.0, 2.0]), np.array([0.0, 0.5]), permutations=10_000)
    assert outcome.min_attainable_p == pytest.approx(2 * max(1 / 10_001, 1 / math.comb(4, 2)))

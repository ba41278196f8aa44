"""The bulk null: a uniform shift is not contamination, a memorised tail is."""

from __future__ import annotations

import numpy as np
import pytest

from contamcheck.stats import bulk
from contamcheck.stats.bulk import (
    TAIL_BEYOND,
    BulkFit,
    bulk_tail_test,
    candidates,
    fit_bulk,
    memorised_probability,
    minority,
    mixture_cut,
    normal_pdf,
    null_flag_counts,
    threshold_of,
)

SIMULATIONS = 1000
TAIL_Z = 1.6448536269514722  # the normal's 95th percentile: 5% expected by chance


def simulate(rng, n=200, shift=0.0, memorised=0.0, lift=4.0):
    values = rng.normal(shift, 1.0, n)
    tail = np.zeros(n, dtype=bool)
    tail[: int(memorised * n)] = True
    values[tail] += lift
    return values, tail


@pytest.mark.parametrize("shift", [0.0, 2.5, -7.0])
def test_a_clean_bulk_is_flagged_about_five_percent_wherever_it_sits(shift):
    rng = np.random.default_rng(1)
    rates, p_values = [], []
    for _ in range(60):
        values, _ = simulate(rng, shift=shift)
        outcome = bulk_tail_test(values, SIMULATIONS)
        rates.append(outcome.flagged / len(values))
        p_values.append(outcome.p_value)
    assert np.mean(rates) == pytest.approx(0.05, abs=0.015)
    assert np.mean(np.array(p_values) < 0.05) <= 0.12


def test_a_shift_plus_twenty_percent_memorised_is_caught():
    values, tail = simulate(np.random.default_rng(2), shift=1.5, memorised=0.2)
    outcome = bulk_tail_test(values, SIMULATIONS)
    assert outcome.p_value < 1e-6
    # A flag means "at least four times as likely memorised as not": most of the tail, little of
    # the rest.
    assert outcome.flags[tail].mean() >= 0.85 and outcome.flags[~tail].mean() < 0.05
    assert outcome.fit.components == 2 and outcome.fit.bulk_share == pytest.approx(0.8, abs=0.05)
    assert 0.1 < outcome.tail_share_low <= 0.2


def test_half_the_benchmark_memorised_keeps_the_held_out_half_clean():
    values, tail = simulate(np.random.default_rng(3), memorised=0.5, lift=5.0)
    outcome = bulk_tail_test(values, SIMULATIONS)
    assert outcome.flags[tail].mean() > 0.95 and outcome.flags[~tail].mean() < 0.1
    assert outcome.fit.bulk_share == pytest.approx(0.5, abs=0.05)


def test_with_a_tail_a_flag_starts_where_a_question_is_four_times_as_likely_the_tail_s():
    values, _ = simulate(np.random.default_rng(2), shift=1.5, memorised=0.2)
    fit = fit_bulk(values)
    quantile = fit.centre + TAIL_Z * fit.scale
    fits = candidates(values)
    tail = (1 - fits.null_share) * normal_pdf(np.array(fit.crossing), fits.tail_mean, fits.tail_sd)
    bulk = fits.null_share * normal_pdf(np.array(fit.crossing), fits.null_mean, fits.null_sd)
    # The light, distant tail: between the 95th percentile and the crossing, a question is less
    # than four times as likely the tail's as the bulk's (a local false discovery rate above 0.2),
    # so it is not flagged.
    assert fit.crossing is not None and fit.crossing > quantile + 0.3
    assert threshold_of(fit) == fit.crossing
    assert float(tail[0]) == pytest.approx(4 * float(bulk[0]), rel=1e-3)
    outcome = bulk_tail_test(values, SIMULATIONS)
    assert outcome.threshold == fit.crossing and outcome.flagged == int(np.sum(values > fit.crossing))


def test_each_question_gets_how_likely_it_is_the_tail_s_never_less_than_a_lower_score_s():
    values, tail = simulate(np.random.default_rng(2), shift=1.5, memorised=0.2)
    fit = fit_bulk(values)
    memorised = memorised_probability(values, fit)
    assert memorised is not None and fit.tail_centre is not None and fit.tail_scale is not None
    order = np.argsort(values)
    assert np.all(np.diff(memorised[order]) >= 0)  # memorisation only lifts scores
    flags = bulk_tail_test(values, SIMULATIONS).flags
    assert memorised[flags].min() >= 1 - bulk.LOCAL_FDR - 1e-3  # a flag: four to one or more
    assert memorised[tail].mean() > 0.85 and memorised[~tail].mean() < 0.05


def test_a_narrow_tail_does_not_give_the_scores_far_above_it_back_to_the_bulk():
    fit = BulkFit(0.0, 1.0, 0.8, 2, crossing=3.0, tail_centre=4.0, tail_scale=0.5)
    far = 9.0
    z_tail, z_bulk = (far - 4.0) / 0.5, far
    raw = 1 / (1 + (0.8 / 0.2) * 0.5 * np.exp(-0.5 * z_bulk**2 + 0.5 * z_tail**2))
    assert raw < 0.5  # two normals alone would hand it back to the bulk
    memorised = memorised_probability(np.array([4.0, far]), fit)
    assert memorised is not None and memorised[1] == memorised[0] > 0.99


def _fits(null_share: float, tail_mean: float, tail_sd: float) -> bulk.Candidates:
    one = np.array
    return bulk.Candidates(
        one([0.0]),
        one([1.0]),
        one([0.0]),
        one([1.0]),
        one([null_share]),
        one([tail_mean]),
        one([tail_sd]),
        one([100.0]),
    )


def _odds(fits: bulk.Candidates, x: float) -> float:
    tail = (1 - fits.null_share[0]) * normal_pdf(np.array(x), fits.tail_mean[0], fits.tail_sd[0])
    return float(tail / (fits.null_share[0] * normal_pdf(np.array(x), 0.0, 1.0)))


def test_a_wide_tail_reaches_four_to_one_above_its_centre_and_the_search_finds_it():
    fits = _fits(0.6, 2.0, 1.8)  # one pass's broad tail: at its centre, not yet four to one
    assert _odds(fits, 2.0) < 4
    crossing = float(bulk._crossing(fits)[0])
    assert crossing > 2.0 and _odds(fits, crossing) == pytest.approx(4, rel=1e-3)


def test_a_tail_four_to_one_at_the_bulk_s_centre_is_flagged_from_there_and_one_never_so_from_its_centre():
    heavy = _fits(0.15, 0.5, 1.0)  # the "tail" outweighs the bulk four to one at its centre
    assert _odds(heavy, 0.0) >= 4 and float(bulk._crossing(heavy)[0]) == 0.0
    light = _fits(0.99, 1.0, 1.0)  # never four to one anywhere in the search
    assert float(bulk._crossing(light)[0]) == 1.0


def test_a_wide_tail_does_not_claim_the_questions_far_below_the_bulk():
    # A one-pass leak's tail is broad (1.7-1.9 times the bulk's width): two normals alone would give
    # a question far *below* the bulk to the tail, and every question above it would inherit that.
    fit = BulkFit(0.0, 1.0, 0.7, 2, crossing=2.5, tail_centre=2.5, tail_scale=1.8)
    values = np.array([-9.0, -1.0, 0.0, 1.0, 4.0])
    memorised = memorised_probability(values, fit)
    assert memorised is not None
    assert memorised[0] == memorised[1] == memorised[2] < 0.2  # below the centre: as at the centre
    assert memorised[3] < 0.5 < memorised[4]


def test_without_a_tail_no_question_is_given_a_probability_of_memorisation():
    values, _ = simulate(np.random.default_rng(9))
    assert memorised_probability(values, fit_bulk(values)) is None


def test_without_a_tail_the_threshold_is_the_95th_percentile():
    values, _ = simulate(np.random.default_rng(9))
    fit = fit_bulk(values)
    assert fit.components == 1 and fit.crossing is None
    assert threshold_of(fit) == pytest.approx(fit.centre + TAIL_Z * fit.scale)


def test_a_small_lower_component_is_not_taken_for_the_bulk():
    rng = np.random.default_rng(4)
    values = np.concatenate([rng.normal(0, 1, 180), rng.normal(-6, 0.3, 20)])  # a few hard questions
    fit = fit_bulk(values)
    assert fit.components == 1 or fit.bulk_share >= 0.3


def test_a_long_lower_tail_is_mostly_taken_for_the_bulk_s_shape_and_otherwise_marked():
    # A clean model's left-skewed scores, the shape measured on the tuning split (docs/METHODS.md):
    # a wide lower component (45%) and a narrow upper one (sd 0.4) 1.26 lower SDs up.
    def false_alarms(tail_beyond: float) -> tuple[int, int]:
        alarms = unmarked = 0
        for seed in range(40):
            rng = np.random.default_rng(seed)
            values = np.concatenate([rng.normal(0, 1, 59), rng.normal(1.26, 0.4, 73)])
            fit = fit_bulk(values, tail_beyond=tail_beyond)
            if (values > threshold_of(fit)).mean() > 0.1:
                alarms += 1
                unmarked += not minority(fit)
        return alarms, unmarked

    alarms, unmarked = false_alarms(TAIL_BEYOND)
    alarms_before, _ = false_alarms(-np.inf)  # the rule before: any upper component
    assert alarms <= alarms_before * 0.6, (alarms, alarms_before)
    assert unmarked <= 1  # what is left has a minority null, whose count and flags are withheld


def test_the_false_detections_of_a_skewed_clean_bulk_all_have_a_minority_null():
    """Why a minority null flags nothing (docs/METHODS.md, "A minority null is no null"): the
    left-skewed clean shape's tail counts that reach p < 0.001 all come with one, while benchmarks
    half memorised (4 SDs up), whose flags are right, keep a majority null."""
    clean_alarms = clean_minority = leak_minority = 0
    for seed in range(30):
        rng = np.random.default_rng(seed)
        clean = np.concatenate([rng.normal(0, 1, 59), rng.normal(1.26, 0.4, 73)])
        outcome = bulk_tail_test(clean, SIMULATIONS)
        if outcome.p_value < 0.001:
            clean_alarms += 1
            clean_minority += minority(outcome.fit)
        leak = rng.normal(0, 1, 200)
        leak[:100] += 4
        leak_minority += minority(fit_bulk(leak))
    assert clean_alarms >= 3, clean_alarms  # the shape does fool the count (33 of 100 draws measured)
    assert clean_minority == clean_alarms
    assert leak_minority == 0


def test_the_mixture_is_kept_exactly_when_its_gain_beats_bic_and_the_margin():
    rng = np.random.default_rng(5)
    cut = mixture_cut(150)
    samples = [
        simulate(rng, n=150, memorised=share, lift=lift)[0] for share, lift in [(0, 0), (0.3, 1.5), (0.3, 5)]
    ]
    gains = candidates(np.stack(samples)).gain
    assert gains[0] < cut < gains[2]  # a clean bulk gains little; a far tail a lot
    for values, gain in zip(samples, gains, strict=True):
        assert (fit_bulk(values).components == 2) == (gain > cut)
    # The measured left-skewed clean shape: without the tail rule its mixture gains more than BIC
    # asks; with it, a second component below the null's threshold counts for nothing.
    skewed = np.concatenate(
        [np.random.default_rng(0).normal(0, 1, 59), np.random.default_rng(1).normal(1.26, 0.4, 73)]
    )
    assert candidates(skewed, tail_beyond=-np.inf).gain[0] > mixture_cut(132)
    assert candidates(skewed).gain[0] == 0.0


def test_the_null_count_distribution_and_its_far_tail():
    counts = null_flag_counts(100, SIMULATIONS, 0.05, 0)
    assert counts.mean() == pytest.approx(5, abs=1.5)
    values = np.random.default_rng(5).normal(size=100)
    values[:60] += 8
    outcome = bulk_tail_test(values, SIMULATIONS)
    assert 0 < outcome.p_value < 1 / (SIMULATIONS + 1)  # beyond the simulations, from the fitted tail
    assert outcome.min_attainable_p <= outcome.p_value


def test_the_floor_of_a_large_audit_is_tiny_but_never_zero():
    # At a few hundred questions the far tail underflows; a floor of 0 once read as "no power" and
    # turned clean 600-question audits inconclusive.
    outcome = bulk_tail_test(np.random.default_rng(6).normal(size=600), SIMULATIONS)
    assert 0 < outcome.min_attainable_p < 1e-100
    assert outcome.p_value > 0.001


def test_a_small_tail_is_caught_though_its_flags_replace_the_chance_ones():
    # 10% of 200 or 5% of 1000 questions 4 SDs up: the crossing leaves almost no chance flags, so a
    # plain count equals the expected rate (p = 0.002-0.99 before flag_statistic); counted against
    # the bulk's own chance share, far beyond chance.
    for n, share in ((200, 0.10), (1000, 0.05)):
        for seed in range(3):
            values = np.random.default_rng(seed).normal(size=n)
            values[: int(share * n)] += 4
            outcome = bulk_tail_test(values, SIMULATIONS)
            assert outcome.fit.components == 2 and outcome.p_value < 1e-4, (n, seed)


def test_a_tail_must_hold_more_than_one_percent_of_the_questions(monkeypatch):
    # A bulk a little off normal puts 1% more of 1000 questions above the threshold: not a tail,
    # though without the margin the count alone would reach p < 0.05.
    values = np.random.default_rng(1).normal(size=1000)
    values[:12] = 2.3
    assert bulk_tail_test(values, SIMULATIONS).p_value > 0.3
    monkeypatch.setattr(bulk, "MIN_TAIL_SHARE", 0.0)
    assert bulk_tail_test(values, SIMULATIONS).p_value < 0.05


def test_the_null_table_is_kept_in_the_cache_folder_and_read_back(tmp_path):
    tables = tmp_path / "nulls"
    counts = null_flag_counts(37, 500, 0.05, 0, tables)
    [stored] = list(tables.glob("bulk-*-n37-s500-*.npy"))
    assert np.array_equal(np.load(stored), counts)
    assert not list(tables.glob(".*tmp"))  # written whole, then renamed

    other = np.arange(500) // 20  # what is stored is what a warm run uses: no simulation
    np.save(stored, other)
    assert np.array_equal(null_flag_counts(37, 500, 0.05, 0, tables), other)

    damaged = [
        b"damaged",
        stored.read_bytes()[:-8],  # cut short
        np.arange(500)[::-1],  # not sorted
        np.arange(500) / 20,  # not whole counts
        np.arange(500),  # counts 37 questions can't give
        np.arange(400) // 20,  # too few
    ]
    for table in damaged:  # each is simulated again and replaced
        if isinstance(table, bytes):
            stored.write_bytes(table)
        else:
            np.save(stored, table)
        assert np.array_equal(null_flag_counts(37, 500, 0.05, 0, tables), counts)
        assert np.array_equal(np.load(stored), counts)


def test_the_em_matches_the_textbook_layout():
    """Our layout (rows, component, value) fits what the obvious one (rows, value, component) fits."""
    from contamcheck.stats.bulk import EM_ITERATIONS, _em_from, normal_pdf

    rng = np.random.default_rng(5)
    x = np.concatenate([rng.normal(0, 1, (40, 90)), rng.normal(2.5, 0.5, (40, 30))], axis=1)
    rows, n = x.shape
    mu = np.stack([np.quantile(x, 0.25, axis=1), np.quantile(x, 0.85, axis=1)], axis=1)
    spread = x.std(axis=1) + 1e-12
    sd, w = np.stack([spread / 2] * 2, axis=1), np.full((rows, 2), 0.5)
    for _ in range(EM_ITERATIONS):
        dens = w[:, None, :] * normal_pdf(x[:, :, None], mu[:, None, :], sd[:, None, :])
        resp = dens / (dens.sum(axis=2, keepdims=True) + 1e-300)
        weight = resp.sum(axis=1) + 1e-12
        w = weight / n
        mu = (resp * x[:, :, None]).sum(axis=1) / weight
        sd = np.sqrt((resp * (x[:, :, None] - mu[:, None, :]) ** 2).sum(axis=1) / weight)
        sd = np.maximum(sd, spread[:, None] * 1e-3)
    ours = _em_from(x, 0.25, 0.85)
    np.testing.assert_allclose(ours[0], mu, rtol=1e-10)
    np.testing.assert_allclose(ours[1], sd, rtol=1e-10)
    np.testing.assert_allclose(ours[2], w, rtol=1e-10)


def test_a_tenth_of_the_questions_sharing_one_score_is_a_pile() -> None:
    rng = np.random.default_rng(0)
    spread = rng.normal(0, 1, 180)
    assert bulk.pile(np.concatenate([spread, np.full(20, -0.3)])) == (-0.3, 20)
    assert bulk.pile(np.concatenate([spread, np.full(19, -0.3)])) is None  # under a tenth
    assert bulk.pile(np.concatenate([spread, np.full(60, 4.0)])) == (4.0, 60)  # above the rest too
    assert bulk.pile(spread) is None and bulk.pile(np.array([])) is None
    # a pair among twenty is a tenth, and pairs occur: a pile needs five
    assert bulk.pile(np.concatenate([spread[:18], [1.5, 1.5]])) is None
    assert bulk.pile(np.concatenate([spread[:45], np.full(5, 1.5)])) == (1.5, 5)
    assert bulk.pile(np.concatenate([spread[:30], np.full(10, np.nan)])) is None  # no score, no pile

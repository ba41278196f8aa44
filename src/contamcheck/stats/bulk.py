"""The bulk null: questions the model never saw form one bulk; memorised ones form a tail above it.

Why (measured in docs/METHODS.md and docs/VALIDATION.md): a model that knows the *kind* of text
(domain training, or any model's preference for natural numbers over swapped ones) shifts every
question's likelihood a little; a model that memorised questions lifts *those* questions far
above the rest. Comparing each question with its own twin loses that lift (memorising a question
makes its twin familiar too), and the mirror image around zero counts the shift as contamination.
So likelihood tests compare each question's own score with the *bulk* of the benchmark's scores:

* fit one normal, and a mixture of two normals (EM); keep the mixture only when BIC prefers it by
  more than ``BIC_MARGIN``, its lower component, the null (memorisation only lifts scores),
  holds at least ``MIN_BULK_SHARE`` of the questions (a smaller "bulk" is a mis-fit of a skewed
  distribution), and the upper component's centre lies beyond the null's flag threshold (a
  second component the null would not flag is the bulk's shape, not a tail);
* flag a question above the null's (1 − expected rate) quantile: about 5% of the bulk is flagged
  by chance, wherever the bulk sits (its shift is reported as familiarity, not contamination);
  where a tail was found, only from where a question is at least four times as likely the
  tail's as the bulk's (Efron's local false discovery rate of 0.2, ``LOCAL_FDR``), if that lies
  higher (``BulkFit.crossing``);
* the p-value of the flag count comes from the same procedure run on samples from the fitted
  single normal (a parametric bootstrap, vectorised): how often does a benchmark with no tail
  produce as many flags? The count takes the bulk's own chance flags at the expected rate
  (``flag_statistic``: above a crossing they shrink, and a small tail's flags would only replace
  them), and only flags beyond 1% of the questions count (``MIN_TAIL_SHARE``).

The null assumes the bulk is roughly normal. A benchmark whose scores have two bumps for another
reason (two kinds of question) would look like a tail. The report counts the twins above the
threshold (``twin_check``) for a reader to weigh, but the verdict does not use it: measured, the
twins of memorised questions rise with them (they share most of their text), so twins above the
threshold cannot tell structure from memory (docs/METHODS.md).
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import special, stats

from .flags import EXPECTED_RATE, FlagOutcome
from .intervals import wilson_interval

BIC_MARGIN = 10.0  # log-likelihood units x 2: a second component must earn its three parameters
EM_ITERATIONS = 120
MIN_QUESTIONS = 20  # fewer, and one bell-shaped bulk can't be told from a tail: the test is skipped
MIN_BULK_SHARE = 0.3
# The tail's centre must lie beyond the null's flag threshold (its 95th percentile): measured on
# the tuning splits, the similar-text models' left-skewed Min-K%++ scores fitted a "tail" 1.3 null
# SDs up, flagging 11-21% of a benchmark they never saw; every real leak's tail sat 2.0-6.4 SDs up
# (docs/METHODS.md).
TAIL_BEYOND = float(stats.norm.ppf(1 - EXPECTED_RATE))
ENOUGH_HITS = 20  # simulated counts at least as large as the observed one, to trust their share
# The p-value counts only flags beyond 1% of the questions: no real bulk is exactly normal, and at
# a thousand questions the null's count is tight enough (SD 5 of 1294) that a shape a little off
# reads as a tail. Measured: a model fine-tuned on similar maths text, never GSM8K, audited on all
# 1294 GSM8K questions with the base as reference, flagged 6.6% with Min-K% (tail p = 0.008), and
# its twins lay above the same threshold at 6.3%: the shape, not memory (docs/VALIDATION.md, "How
# many questions"). At 200 questions the margin is 2 flags.
MIN_TAIL_SHARE = 0.01
# Where a tail was found, a flag says "this question was memorised" only where the tail's weighted
# density is at least (1 - LOCAL_FDR) / LOCAL_FDR = 4 times the bulk's: a local false discovery
# rate of 0.2, the level Efron reports at (Large-Scale Inference, 2010, ch. 5), not a value fitted
# here. At 0.5 (where the densities cross, the rule until 2026-12-04) a one-pass leak's tail
# overlapping the bulk flagged 10-11% of the questions never seen (seed 3, 588 and 1,294
# questions with the base as reference); at 0.2, 8% and 6%, with the same verdicts
# (docs/METHODS.md, "A flag needs four to one").
LOCAL_FDR = 0.2
# Efron's empirical null assumes the never-seen questions are the majority. Where the fitted null
# holds under 40% of the questions, either most of the benchmark stands out (a leak of 60-70% of
# it, whose flags would be mostly right) or a skewed clean bulk was split in the wrong place (whose
# flags and count are false), and the scores' shape alone can't tell which. Measured on simulated
# scores (experiments/minority_null.py): every false detection of the left-skewed clean shape
# measured on a tuning split's similar-code model came with such a null (33 of 100 draws at
# p < 0.001), and 2 of 300 draws of benchmarks half memorised (2-4 SDs up) did. So the count and
# the flags are withheld there (``minority``): at that share the test can't judge. The cost,
# measured on the same draws, is most majority leaks, left to completion (exact recall, which sees
# a benchmark seen many times) and a reference's spread test; on real one-pass audits with a
# reference, some right verdicts reached where 10-16% of the never-seen questions lay above the
# threshold (400-question subsets; 13-20% at 200; docs/METHODS.md, "A minority null is no null").
MINORITY_BULK = 0.4


# A bell-shaped bulk of never-seen questions has no two with the very same score, and a real model
# gives two questions' words the very same log-probs only where all that comes before them is the
# same: a tenth of the questions sharing one score exactly have it from words they share (an opening
# many questions have, where -k takes one or a few words, or a reference that scores them as the
# model does). A question memorised can't rise above that pile (Min-K%'s least likely word is then
# the shared one, however well the model knows the rest), and the fit puts a narrow bulk on it.
# Measured: SmolLM2 on HumanEval at -k 0.001, 48 of 132 questions shared one Min-K% score; at the
# default -k the largest share was 1% on the sample and HumanEval, and in every saved audit of
# the validation (docs/METHODS.md, "One score shared by many questions"). Pairs occur (2 of 200 at
# the default -k), so a pile is never under PILE_AT_LEAST questions: at 20 questions a tenth is two.
TIED_SHARE = 0.1
PILE_AT_LEAST = 5


def pile(values: np.ndarray) -> tuple[float, int] | None:
    """The score a ``TIED_SHARE`` or more of the finite ``values`` share exactly (and at least
    ``PILE_AT_LEAST`` of them), and how many share it; None where there is no such pile."""
    finite = np.asarray(values, dtype=np.float64)
    finite = finite[np.isfinite(finite)]
    scores, counts = np.unique(finite, return_counts=True)
    if not len(counts) or counts.max() < max(TIED_SHARE * len(finite), PILE_AT_LEAST):
        return None
    largest = int(np.argmax(counts))
    return float(scores[largest]), int(counts[largest])


@dataclass(frozen=True)
class BulkFit:
    centre: float  # where the bulk of never-seen questions sits
    scale: float
    bulk_share: float  # share of questions in the bulk (1 when one component fits best)
    components: int
    # With a tail: the score above which a question is at least four times as likely the tail's
    # as the bulk's (``LOCAL_FDR``), and the tail's own centre and scale.
    crossing: float | None = None
    tail_centre: float | None = None
    tail_scale: float | None = None


def minority(fit: BulkFit) -> bool:
    """Whether the fitted null holds under ``MINORITY_BULK`` of the questions: too few to be the null."""
    return fit.components == 2 and fit.bulk_share < MINORITY_BULK


START_QUANTILES = ((0.25, 0.85), (0.25, 0.75), (0.10, 0.60))  # EM starts; the best likelihood wins


def _em(x: np.ndarray) -> tuple[np.ndarray, ...]:
    """The best of a few EM runs from different starts, per row."""
    best: tuple[np.ndarray, ...] | None = None
    for low, high in START_QUANTILES:
        run = _em_from(x, low, high)
        if best is None:
            best = run
        else:
            better = run[3] > best[3]
            best = tuple(
                np.where(better[:, None] if a.ndim == 2 else better, a, b)
                for a, b in zip(run, best, strict=True)
            )
    assert best is not None
    return best


_SQRT_2PI = float(np.sqrt(2 * np.pi))


def normal_pdf(x: np.ndarray, mu: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """The normal density, in plain numpy (scipy's generic version costs most of the EM's time)."""
    z = (x - mu) / sd
    return np.exp(-0.5 * z * z) / (sd * _SQRT_2PI)


def _em_from(x: np.ndarray, low_q: float, high_q: float) -> tuple[np.ndarray, ...]:
    """Two-component normal mixtures fitted to each row of x; returns (means, sds, weights, loglik).

    Arrays are laid out (rows, component, value), so every sum over the values runs along
    contiguous memory: numpy's strided reductions over a middle axis took half the time.
    """
    rows, n = x.shape
    low, high = np.quantile(x, low_q, axis=1), np.quantile(x, high_q, axis=1)
    spread = x.std(axis=1) + 1e-12
    mu = np.stack([low, high], axis=1)
    sd = np.stack([spread / 2, spread / 2], axis=1)
    w = np.full((rows, 2), 0.5)
    floor = spread[:, None] * 1e-3
    values = x[:, None, :]
    for _ in range(EM_ITERATIONS):
        dens = w[:, :, None] * normal_pdf(values, mu[:, :, None], sd[:, :, None])
        resp = dens / (dens[:, :1] + dens[:, 1:] + 1e-300)
        weight = resp.sum(axis=2) + 1e-12
        w = weight / n
        mu = (resp * values).sum(axis=2) / weight
        sd = np.sqrt((resp * (values - mu[:, :, None]) ** 2).sum(axis=2) / weight)
        sd = np.maximum(sd, floor)
    dens = w[:, :, None] * normal_pdf(values, mu[:, :, None], sd[:, :, None])
    loglik = np.log(dens[:, 0] + dens[:, 1] + 1e-300).sum(axis=1)
    return mu, sd, w, loglik


@dataclass(frozen=True)
class Candidates:
    """One normal and the best two-normal mixture for each row of x, and the mixture's standing."""

    mean: np.ndarray
    sd: np.ndarray
    null_mean: np.ndarray  # the mixture's lower component
    null_sd: np.ndarray
    null_share: np.ndarray
    tail_mean: np.ndarray  # the mixture's upper component
    tail_sd: np.ndarray
    gain: np.ndarray  # 2 x (log-likelihood of the mixture - of one normal); 0 where the rules reject it


def candidates(
    x: np.ndarray, min_share: float = MIN_BULK_SHARE, tail_beyond: float = TAIL_BEYOND
) -> Candidates:
    """Both fits for each row of x; the product keeps the mixture where ``gain > mixture_cut(n)``.

    Public so experiments can compare other cuts on the same fits (experiments/mixture_test.py).
    """
    x = np.atleast_2d(np.asarray(x, dtype=np.float64))
    mean, sd = x.mean(axis=1), x.std(axis=1) + 1e-12
    one = stats.norm.logpdf(x, mean[:, None], sd[:, None]).sum(axis=1)
    mu, sds, w, two = _em(x)
    lower = np.argmin(mu, axis=1)
    pick = np.arange(len(x))
    # A "bulk" holding a small minority is a mis-fit of a skewed distribution, not the null; and
    # a second component whose centre the null would not flag is the shape of the bulk (a long
    # lower tail, say), not questions lifted beyond it.
    beyond = mu[pick, 1 - lower] - mu[pick, lower] >= tail_beyond * sds[pick, lower]
    allowed = (w[pick, lower] >= min_share) & beyond
    upper = 1 - lower
    return Candidates(
        mean,
        sd,
        mu[pick, lower],
        sds[pick, lower],
        w[pick, lower],
        mu[pick, upper],
        sds[pick, upper],
        np.where(allowed, 2 * (two - one), 0.0),
    )


def mixture_cut(n: int) -> float:
    """The gain a mixture must beat: BIC's price for its three more parameters, 3 log n, and the margin."""
    return float(3 * np.log(n) + BIC_MARGIN)


CROSSING_GRID = 512  # points from the bulk's centre up past the tail's where the densities are compared
CROSSING_REACH = 3.0  # how far past the tail's centre, in its SDs, the search goes (a wide tail's
# four-to-one point can lie above its centre: on the 1,294-question one-pass audit, 0.007 above)


def _log_normal_pdf(x: np.ndarray, mu: np.ndarray, sd: np.ndarray) -> np.ndarray:
    z = (x - mu) / sd
    return -0.5 * z * z - np.log(sd * _SQRT_2PI)


def _log_odds(
    x: np.ndarray,
    null_mean: np.ndarray,
    null_sd: np.ndarray,
    null_share: np.ndarray,
    tail_mean: np.ndarray,
    tail_sd: np.ndarray,
) -> np.ndarray:
    """Log of the tail's weighted density over the bulk's at x: the odds, under the fitted mixture,
    that a question scoring x is the tail's."""
    return (
        np.log(1 - null_share)
        + _log_normal_pdf(x, tail_mean, tail_sd)
        - np.log(null_share)
        - _log_normal_pdf(x, null_mean, null_sd)
    )


def _crossing(fits: Candidates) -> np.ndarray:
    """Per row, the lowest score above the bulk's centre where the tail's weighted density reaches
    (1 - ``LOCAL_FDR``) / ``LOCAL_FDR`` times the bulk's: above it a question is memorised with
    probability at least 1 - ``LOCAL_FDR`` under the fit.

    Searched from the bulk's centre to ``CROSSING_REACH`` tail SDs past the tail's centre (a tail
    wider than the bulk reaches four to one only above its centre); where it is never reached (a
    light tail that overlaps the bulk everywhere), the tail's centre. Found on a grid, then between
    the grid's last point below and first point above by the log ratio, a quadratic in the score,
    so a straight line between neighbours is exact to far below the scores' own noise.
    """
    steps = np.linspace(0.0, 1.0, CROSSING_GRID)
    top = fits.tail_mean + CROSSING_REACH * fits.tail_sd
    grid = fits.null_mean[:, None] + steps * (top - fits.null_mean)[:, None]
    parameters = (fits.null_mean, fits.null_sd, fits.null_share, fits.tail_mean, fits.tail_sd)
    column = [a[:, None] for a in parameters]
    with np.errstate(divide="ignore", invalid="ignore"):  # a degenerate candidate is never kept
        log_ratio = _log_odds(grid, *column) - np.log((1 - LOCAL_FDR) / LOCAL_FDR)
    reached = log_ratio >= 0
    rows = np.arange(len(grid))
    first = reached.argmax(axis=1)  # 0 where reached at the bulk's centre, or never
    before = np.maximum(first - 1, 0)
    below, above = log_ratio[rows, before], log_ratio[rows, first]
    # past the first point, below < 0 <= above: the straight line crosses zero between them
    between = np.where(first > 0, -below / np.where(first > 0, above - below, 1.0), 0.0)
    point = grid[rows, before] + between * (grid[rows, first] - grid[rows, before])
    return np.where(reached.any(axis=1), point, fits.tail_mean)


def _fit(
    x: np.ndarray, min_share: float = MIN_BULK_SHARE, tail_beyond: float = TAIL_BEYOND
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, Candidates]:
    """Null centre, scale, bulk share, component count and crossing (NaN: no tail) for each row of
    x, and the fits they were chosen from."""
    fits = candidates(x, min_share, tail_beyond)
    mixture = fits.gain > mixture_cut(x.shape[1])
    centre = np.where(mixture, fits.null_mean, fits.mean)
    scale = np.where(mixture, fits.null_sd, fits.sd)
    share = np.where(mixture, fits.null_share, 1.0)
    crossing = np.where(mixture, _crossing(fits), np.nan)
    return centre, scale, share, np.where(mixture, 2, 1), crossing, fits


def fit_bulk(
    values: np.ndarray, min_share: float = MIN_BULK_SHARE, tail_beyond: float = TAIL_BEYOND
) -> BulkFit:
    """The null; ``min_share`` and ``tail_beyond`` are the product's rules, other values for experiments."""
    x = np.asarray(values, dtype=np.float64)[None, :]
    centre, scale, share, components, crossing, fits = _fit(x, min_share, tail_beyond)
    tail = int(components[0]) == 2
    return BulkFit(
        float(centre[0]),
        float(scale[0]),
        float(share[0]),
        int(components[0]),
        float(crossing[0]) if tail else None,
        float(fits.tail_mean[0]) if tail else None,
        float(fits.tail_sd[0]) if tail else None,
    )


def memorised_probability(values: np.ndarray, fit: BulkFit) -> np.ndarray | None:
    """Per question, how likely it is the tail's rather than the bulk's under the fitted mixture (one
    less its local false discovery rate); None where no tail was found.

    Memorisation only lifts scores, so a question is never given more than one at the bulk's
    centre when it lies below it, nor less than any lower-scoring question above it. Two normals
    alone would say otherwise in their far tails: where the tail is wider than the bulk (one-pass
    leaks' are 1.7-1.9 times), its density wins back the scores far *below* both, and where it is
    narrower, the bulk's wins back those far above. A flag (above the crossing) sits at
    1 - ``LOCAL_FDR`` or more, unless the tail never reaches it (then flags start at its centre).
    """
    if fit.tail_centre is None or fit.tail_scale is None:
        return None
    x = np.maximum(np.asarray(values, dtype=np.float64), fit.centre)
    parameters = (fit.centre, fit.scale, fit.bulk_share, fit.tail_centre, fit.tail_scale)
    posterior = special.expit(_log_odds(x, *(np.asarray(v) for v in parameters)))
    order = np.argsort(x, kind="stable")
    lifted = np.empty_like(posterior)
    lifted[order] = np.maximum.accumulate(posterior[order])
    return lifted


def thresholds(
    centre: np.ndarray | float,
    scale: np.ndarray | float,
    crossing: np.ndarray | float,
    expected_rate: float = EXPECTED_RATE,
) -> np.ndarray:
    """Flag above this: the null's (1 - expected rate) quantile, or the crossing where it lies higher
    (a NaN crossing, no tail, is passed over). The one place of the rule, for fits and simulations."""
    return np.fmax(centre + float(stats.norm.ppf(1 - expected_rate)) * scale, crossing)


def threshold_of(fit: BulkFit, expected_rate: float = EXPECTED_RATE) -> float:
    crossing = np.nan if fit.crossing is None else fit.crossing
    return float(thresholds(fit.centre, fit.scale, crossing, expected_rate))


TABLE_VERSION = 6  # bump when the procedure changes, so stored tables are not reused


def chance_share(
    threshold: np.ndarray | float, centre: np.ndarray | float, scale: np.ndarray | float
) -> np.ndarray:
    """The bulk's own share above the threshold: the expected rate, or less above a higher crossing."""
    return np.asarray(stats.norm.sf((np.asarray(threshold) - centre) / scale))


def flag_statistic(
    flagged: np.ndarray | int,
    n: int,
    share: np.ndarray | float,
    by_chance: np.ndarray | float,
    expected_rate: float = EXPECTED_RATE,
) -> np.ndarray:
    """The flag count, with the bulk's own chance flags counted at the expected rate.

    Without a tail the threshold is the null's (1 - expected rate) quantile and this is the count.
    Where a tail was found, the threshold moves up to the crossing and the bulk above it shrinks
    (to under 1% of the questions, say): the tail's flags then stand in for the chance flags they
    displaced, and a plain count of a 5% tail reads like no tail at all (p = 0.95 on simulated
    benchmarks with 5% of the questions 4 SDs up). So the bulk's expected share above the threshold
    is swapped for the expected rate, on the observed and the simulated counts alike.
    """
    return np.asarray(flagged) + np.rint(n * (expected_rate - np.asarray(share) * by_chance)).astype(int)


def null_flag_counts(
    n: int, simulations: int, expected_rate: float, seed: int, tables: Path | None = None
) -> np.ndarray:
    """Sorted flag counts of the whole procedure on normal samples of size n (no tail).

    Kept in memory, and in ``tables`` (a folder) when given: a warm audit reads them back.
    """
    name = f"bulk-v{TABLE_VERSION}-n{n}-s{simulations}-r{expected_rate:g}-seed{seed}.npy"
    if tables is not None:
        try:
            stored = np.load(tables / name, allow_pickle=False)
            if isinstance(stored, np.ndarray) and _plausible(stored, n, simulations):
                return stored
        except (OSError, ValueError, EOFError):
            pass  # missing or damaged: simulate again and overwrite
    counts = _simulated_counts(n, simulations, expected_rate, seed)
    if tables is not None:
        try:
            tables.mkdir(parents=True, exist_ok=True)
            partial = tables / f".{name}.{os.getpid()}.tmp"
            with open(partial, "wb") as handle:
                np.save(handle, counts, allow_pickle=False)
            os.replace(partial, tables / name)
        except OSError:
            pass  # a read-only cache still gives the right answer, only slower next time
    return counts


def _plausible(table: np.ndarray, n: int, simulations: int) -> bool:
    """A stored table as the simulation makes it: ``simulations`` whole counts, sorted, each a flag
    count that ``flag_statistic`` can give for n questions. Damage, or an edit, that breaks this is
    simulated again; one that keeps it (a count moved within its neighbours) is not seen."""
    return (
        table.shape == (simulations,)
        and table.dtype.kind in "iu"
        and bool(np.all(table[:-1] <= table[1:]))
        and bool(table.size == 0 or (table[0] >= -n and table[-1] <= 2 * n))
    )


@functools.lru_cache(maxsize=32)
def _simulated_counts(n: int, simulations: int, expected_rate: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    chunk = max(1, 400_000 // max(1, n))
    counts = []
    for start in range(0, simulations, chunk):
        sample = rng.standard_normal((min(chunk, simulations - start), n))
        centre, scale, share, _, crossing, _ = _fit(sample)
        cut = thresholds(centre, scale, crossing, expected_rate)
        flagged = (sample > cut[:, None]).sum(axis=1)
        by_chance = chance_share(cut, centre, scale)
        counts.append(flag_statistic(flagged, n, share, by_chance, expected_rate))
    return np.sort(np.concatenate(counts))


@dataclass(frozen=True)
class BulkOutcome(FlagOutcome):
    fit: BulkFit = BulkFit(0.0, 1.0, 1.0, 1)
    tail_share_low: float = 0.0  # 95% lower bound on the share of questions beyond the bulk


def bulk_tail_test(
    values: np.ndarray,
    simulations: int,
    seed: int = 0,
    expected_rate: float = EXPECTED_RATE,
    tables: Path | None = None,
) -> BulkOutcome:
    """Flag questions above the bulk; p-value: how often a benchmark with no tail flags as many."""
    values = np.asarray(values, dtype=np.float64)
    fit = fit_bulk(values)
    threshold = threshold_of(fit, expected_rate)
    flags = values > threshold
    observed = int(flags.sum())
    counts = null_flag_counts(len(values), simulations, expected_rate, seed, tables)
    by_chance = float(chance_share(threshold, fit.centre, fit.scale))
    margin = int(MIN_TAIL_SHARE * len(values))
    statistic = int(flag_statistic(observed, len(values), fit.bulk_share, by_chance, expected_rate))
    p_value, min_p = _tail_probability(counts, statistic - margin, len(values), margin)
    low, _ = wilson_interval(observed, len(values))
    return BulkOutcome(
        threshold=threshold,
        flags=flags,
        p_value=p_value,
        min_attainable_p=min_p,
        permutations=len(counts),
        fit=fit,
        tail_share_low=max(0.0, (low - by_chance) / (1 - by_chance)),
    )


def _tail_probability(counts: np.ndarray, observed: int, n: int, margin: int = 0) -> tuple[float, float]:
    """P(count >= observed) under the simulated null, and the smallest p this n allows (all n
    flagged, less the margin taken off the observed count).

    Where the simulations have at least ``ENOUGH_HITS`` counts as large, their share is the
    p-value. Beyond them, a beta-binomial fitted to the simulated counts by moments (the flag count
    is binomial with extra spread from fitting the bulk) gives the far tail, so a p-value can fall
    below alpha / number of tests without millions of simulated fits.
    """
    hits = len(counts) - int(np.searchsorted(counts, observed, side="left"))
    law = _beta_binomial(counts, n)
    # floored at the smallest positive float: at a few hundred questions the far tail underflows,
    # and a floor of 0 would read as "no floor known"
    min_p = float(max(law.sf(n - margin - 1), np.finfo(float).tiny))
    if hits >= ENOUGH_HITS:
        return (hits + 1) / (len(counts) + 1), min_p
    return float(max(law.sf(observed - 1), np.finfo(float).tiny)), min_p


def _beta_binomial(counts: np.ndarray, n: int) -> stats.rv_discrete:
    """Binomial with the simulated mean, widened to a beta-binomial when the counts spread more."""
    mean = float(np.mean(counts))
    p = min(max(mean / n, 1e-9), 1 - 1e-9)
    ratio = float(np.var(counts)) / (n * p * (1 - p))  # variance over the binomial's
    if ratio <= 1.05:  # no wider than a binomial: the binomial tail is the conservative one
        return stats.binom(n, p)
    total = (n - ratio) / (ratio - 1)  # alpha + beta of the beta-binomial with this variance
    return stats.betabinom(n, p * total, (1 - p) * total)


def twin_check(original_flags: np.ndarray, twin_values: np.ndarray, threshold: float) -> tuple[int, int]:
    """(originals flagged, twins above the same threshold): a tail the twins share is structure."""
    return int(np.sum(original_flags)), int(np.sum(np.asarray(twin_values) > threshold))

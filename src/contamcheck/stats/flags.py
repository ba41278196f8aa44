"""Flagging questions and testing the flag count against chance.

**Paired** (number twins): each question's statistic is d = score(original) − score(twin). The
null hypothesis is that the model has no reason to prefer either version, so d is symmetric around
zero and its mirror image −d is a sample of what chance looks like. A question is flagged when d is
above the (1 − expected rate) quantile of −d, so about 5% of a clean model's questions are flagged.
The p-value is a sign-flip permutation test: flip each d's sign at random (equally likely under the
null) and count how often the flag count is at least the observed one.

**Unpaired** (control file): a question is flagged when its score is above the k-th lowest of the m
control questions' scores, k = ⌈(1 − expected rate)(m + 1)⌉ (at most m). The null hypothesis is
that benchmark and control questions are exchangeable, and then a benchmark question beats that
control with probability (m + 1 − k) / (m + 1) (exactly, for untied scores): at most 5% from 19
controls on, but 1 in m + 1 below that (a half with one control), which is the chance rate
reported. The p-value comes from permuting the labels, which also accounts for the threshold being
estimated from a finite control set. Two statistics are tested on the same permutations, because a
leak takes two shapes: a few questions far above the controls (the flag count sees them) or much of
the benchmark a little above them (a light exposure: the rank sum of the benchmark's scores,
Mann-Whitney's U, sees it where the flag count barely moves). The p-value is twice the smaller of
the two (Bonferroni), and the share of (benchmark, control) pairs the benchmark question wins is
reported as the AUROC against the controls (0.5 when exchangeable).

Both are vectorised over permutations in chunks, and a p-value is (hits + 1) / (permutations + 1),
so it is never 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

EXPECTED_RATE = 0.05  # share of a clean model's questions flagged by chance
CHUNK_ELEMENTS = 2_000_000  # permutation samples x questions held at once


@dataclass(frozen=True)
class FlagOutcome:
    threshold: float
    flags: np.ndarray  # bool per question
    p_value: float
    min_attainable_p: float  # the smallest p-value this test could have produced here
    permutations: int
    auroc: float | None = None  # unpaired: share of (benchmark, control) pairs the benchmark wins
    parts: tuple[float, float] | None = None  # unpaired: the flag count's and the rank sum's own p
    expected_rate: float = EXPECTED_RATE  # share of the questions flagged by chance under the null

    @property
    def flagged(self) -> int:
        return int(self.flags.sum())


def mirrored_threshold(diffs: np.ndarray, expected_rate: float = EXPECTED_RATE) -> float:
    """The (1 − expected_rate) quantile of the mirror image −d."""
    return float(np.quantile(-diffs, 1 - expected_rate))


def _mirrored_flag_counts(samples: np.ndarray, expected_rate: float) -> np.ndarray:
    """Flag counts of each row of ``samples`` against its own mirror image."""
    thresholds = np.quantile(-samples, 1 - expected_rate, axis=1, keepdims=True)
    return (samples > thresholds).sum(axis=1)


def sign_flip_test(
    diffs: np.ndarray, permutations: int, seed: int = 0, expected_rate: float = EXPECTED_RATE
) -> FlagOutcome:
    """Flag questions by the mirrored threshold; p-value by random sign flips (see module doc)."""
    diffs = np.asarray(diffs, dtype=np.float64)
    threshold = mirrored_threshold(diffs, expected_rate)
    flags = diffs > threshold
    observed = int(flags.sum())
    rng = np.random.default_rng(seed)
    hits = 0
    chunk = max(1, CHUNK_ELEMENTS // max(1, len(diffs)))
    for start in range(0, permutations, chunk):
        size = min(chunk, permutations - start)
        signs = rng.integers(0, 2, size=(size, len(diffs)), dtype=np.int8) * 2 - 1
        hits += int((_mirrored_flag_counts(signs * diffs, expected_rate) >= observed).sum())
    informative = int(np.count_nonzero(diffs))  # a zero difference flips to itself
    min_p = max(1 / (permutations + 1), 0.5**informative)
    return FlagOutcome(threshold, flags, (hits + 1) / (permutations + 1), min_p, permutations)


def control_rank(controls: int, expected_rate: float = EXPECTED_RATE) -> tuple[int, float]:
    """The rank k (1-based, from the lowest) of the control a question must beat, and the share of
    exchangeable questions that beat it: (m + 1 − k) / (m + 1) for m controls."""
    if controls < 1:
        raise ValueError("at least one control is needed")
    rank = min(controls, math.ceil(round((1 - expected_rate) * (controls + 1), 9)))
    return rank, (controls + 1 - rank) / (controls + 1)


def few_controls(rate: float) -> int | None:
    """The number of controls m behind a chance rate above 5% (below 19 the one to beat is the
    highest, so the rate is 1 / (m + 1)); None for a rate of 5% or less."""
    return round(1 / rate) - 1 if rate > EXPECTED_RATE + 1e-9 else None


def label_permutation_test(
    bench: np.ndarray,
    control: np.ndarray,
    permutations: int,
    seed: int = 0,
    expected_rate: float = EXPECTED_RATE,
) -> FlagOutcome:
    """Flag questions above the controls' quantile; p-value by permuting labels, for the flag
    count and the rank sum at once (see module doc)."""
    bench = np.asarray(bench, dtype=np.float64)
    control = np.asarray(control, dtype=np.float64)
    rank, chance = control_rank(len(control), expected_rate)
    threshold = float(np.sort(control)[rank - 1])
    flags = bench > threshold
    observed = int(flags.sum())
    pooled = np.concatenate([bench, control])
    n = len(bench)
    ranks = stats.rankdata(pooled)  # ties share their mean rank
    rank_sum = float(ranks[:n].sum())
    rng = np.random.default_rng(seed)
    tail_hits = shift_hits = 0
    chunk = max(1, CHUNK_ELEMENTS // max(1, len(pooled)))
    for start in range(0, permutations, chunk):
        size = min(chunk, permutations - start)
        order = np.argsort(rng.random((size, len(pooled))), axis=1)
        shuffled = pooled[order]
        thresholds = np.partition(shuffled[:, n:], rank - 1, axis=1)[:, rank - 1 : rank]
        tail_hits += int(((shuffled[:, :n] > thresholds).sum(axis=1) >= observed).sum())
        # rank sums are multiples of 1/2 (tied ranks are averaged): compare with room for rounding
        shift_hits += int((ranks[order[:, :n]].sum(axis=1) >= rank_sum - 0.25).sum())
    parts = ((tail_hits + 1) / (permutations + 1), (shift_hits + 1) / (permutations + 1))
    p_value = min(1.0, 2 * min(parts))
    min_p = min(1.0, 2 * max(1 / (permutations + 1), 1 / math.comb(len(pooled), n)))
    auroc = (rank_sum - n * (n + 1) / 2) / (n * len(control))
    return FlagOutcome(
        threshold, flags, p_value, min_p, permutations, auroc=float(auroc), parts=parts, expected_rate=chance
    )

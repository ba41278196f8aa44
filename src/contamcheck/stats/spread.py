"""Does the benchmark spread more than its twins? A whole-benchmark test of a partial leak.

A question and its number twin differ only in their numbers. The null hypothesis is that for a
model that never saw either, the two are exchangeable: which one is "the original" is a coin toss
as far as their scores go. A leak of part of the benchmark lifts the leaked questions more than
their twins (the twin shares the words, not the numbers), so the originals' scores x spread more
than the twins' y. Pitman and Morgan's test of equal variances in pairs asks exactly that:
var x = var y iff x + y and x − y are uncorrelated. A familiarity shift that moves every original
alike above its twin leaves the correlation at zero and the test calibrated; one that grows with
the score level does not, and that is what happens without a reference.

The statistic is the correlation of the ranks of x + y with x − y (a heavy tail in one pair can't
decide it), one-sided; its p-value comes from swapping original and twin within random pairs,
which leaves x + y as it is and turns the sign of x − y.

Measured (``experiments/spread_test.py``, tuning splits only, docs/METHODS.md "A spread test
against the twins"): exchangeability held for clean models' scores less a reference's (the base
or another family), which cancels the originals' own excess spread over their twins, and not
without one (Min-K% gave models that never saw HumanEval p = 0.0014-0.0026). So it runs only
where the scores are taken less a reference's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

CHUNK_ELEMENTS = 2_000_000  # swap samples x questions held at once
# The least rank correlation for the spread test to count as evidence of its own in the verdict:
# Cohen's "small" correlation, a convention, not a value fitted to our data. It binds only on
# large benchmarks: the swapped correlations spread with SD about 1 / sqrt(n), so p < 0.0002 needs
# a correlation above about 3.6 / sqrt(n), which is 0.1 at about 1,300 questions.
SMALL_EFFECT = 0.1


@dataclass(frozen=True)
class SpreadOutcome:
    correlation: float  # of the ranks of x + y with x - y: > 0 when the originals spread more
    p_value: float
    min_attainable_p: float
    swaps: int


def spread_test(x: np.ndarray, y: np.ndarray, swaps: int, seed: int = 0) -> SpreadOutcome:
    """One-sided swap test that originals ``x`` spread more than their twins ``y`` (see module doc)."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1 or len(x) < 3:
        raise ValueError("spread_test needs two equal-length 1-d arrays of at least 3 pairs")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise ValueError("spread_test needs finite scores: leave out the pairs without one")
    total = stats.rankdata(x + y)
    total = (total - total.mean()) / (total.std() or 1.0)
    diff = x - y
    # A swap turns the sign of a pair's difference; with the ranks of x + y standardised (mean 0),
    # corr(total, s * diff) = (s @ (diff * total)) / (n * sd(s * diff)), and
    # sd(s * diff)^2 = mean(diff^2) - (s @ diff / n)^2: two matrix-vector products per chunk.
    weighted, square = diff * total, float(np.mean(diff**2))
    observed = _correlations(np.ones((1, len(x))), diff, weighted, square)[0]
    rng = np.random.default_rng(seed)
    hits = 0
    chunk = max(1, CHUNK_ELEMENTS // len(x))
    for start in range(0, swaps, chunk):
        size = min(chunk, swaps - start)
        signs = (rng.integers(0, 2, size=(size, len(x)), dtype=np.int8) * 2 - 1).astype(np.float64)
        # rounding room: a swap that changes nothing must count as a hit
        hits += int((_correlations(signs, diff, weighted, square) >= observed - 1e-12).sum())
    informative = int(np.count_nonzero(diff))  # a pair with x = y swaps to itself
    min_p = max(1 / (swaps + 1), 0.5**informative)
    return SpreadOutcome(float(observed), (hits + 1) / (swaps + 1), float(min_p), swaps)


def _correlations(signs: np.ndarray, diff: np.ndarray, weighted: np.ndarray, square: float) -> np.ndarray:
    """Correlation of the standardised ranks with each row's signed differences (see above)."""
    n = len(diff)
    variance = square - (signs @ diff / n) ** 2
    spread = np.sqrt(np.where(variance > 1e-12 * square, variance, np.inf))  # all equal: no correlation
    return (signs @ weighted) / (n * spread)


def carries(
    tail_p: float | None, spread_p: float | None, correlation: float | None, count_withheld: bool = False
) -> bool:
    """Whether the spread test, not the tail count, gave a bulk test its p-value, with at least a
    small effect: the test's evidence is then a whole-benchmark statistic (as for an aggregate test),
    and its flag rate, which the tail count makes, says nothing about how strong it is. Where the
    count was withheld (a minority null, ``stats.bulk.minority``), the spread test is all there is."""
    if spread_p is None or correlation is None:
        return False
    if count_withheld:
        return correlation >= SMALL_EFFECT
    if tail_p is None:
        return False
    return spread_p <= tail_p and correlation >= SMALL_EFFECT


# The level at which the twins back a tail: where the tail count goes beyond chance (below it) and
# neither test of the twins does (twice the smaller of their p-values at or above it), the tail stands
# out with its twins. The verdict's "warn" level, a convention; see ``shared_with_twins``.
TWINS_BACK = 0.05


def tail_gain_test(x: np.ndarray, y: np.ndarray, top: int) -> float:
    """One-sided p-value that the ``top`` pairs whose higher score (question or twin) is highest gain
    over their twins: Wilcoxon's signed-rank test of x - y on those pairs. The spread test asks it of
    the whole benchmark, where a small tail barely moves it; this asks it where the tail is. The pairs
    are chosen by max(x, y), which a swap of question and twin leaves as it is, so under "never seen"
    (question and twin exchangeable) their differences stay symmetric and the test exact."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if top < 1 or x.shape != y.shape or x.ndim != 1:
        return 1.0
    chosen = np.argsort(-np.maximum(x, y), kind="stable")[:top]
    diff = (x - y)[chosen]
    if not np.any(diff):  # every chosen pair tied: no evidence either way
        return 1.0
    return float(stats.wilcoxon(diff, alternative="greater", zero_method="wilcox").pvalue)


def shared_with_twins(tail_p: float | None, spread: SpreadOutcome, gain_p: float = 1.0) -> bool:
    """Whether a tail beyond the bulk stands out with its twins: the tail count goes beyond chance,
    and neither the spread test (the whole benchmark) nor the tail's gain over its twins
    (``tail_gain_test``) does, twice the smaller of their p-values (Bonferroni). Memorising a
    question lifts it above its twin (the twin shares its words, not its numbers); knowing part of
    the benchmark's kind of text better than the reference does lifts question and twin alike, and
    makes a tail just the same (measured: docs/METHODS.md, "A tail its twins share"). Such a tail is
    familiarity, not memorised questions."""
    backed = min(1.0, 2 * min(spread.p_value, gain_p)) < TWINS_BACK
    return tail_p is not None and tail_p < TWINS_BACK and not backed


def twin_backing(
    tail_p: float | None, flagged: int, x: np.ndarray, y: np.ndarray, spread: SpreadOutcome
) -> tuple[float | None, bool]:
    """Ask the twins about a tail, where every question has one (``x`` the questions' scores, ``y``
    their first twins'): the tail's gain p (None where the tail count is not beyond chance, so there
    is nothing to ask) and whether the tail stands out with its twins (``shared_with_twins``)."""
    if tail_p is None or tail_p >= TWINS_BACK:
        return None, False
    gain_p = tail_gain_test(x, y, flagged)
    return gain_p, shared_with_twins(tail_p, spread, gain_p)


def with_spread(tail_p: float, tail_min_p: float, spread: SpreadOutcome) -> tuple[float, float]:
    """A bulk test's (p-value, smallest attainable) with the spread test beside its tail count:
    twice the smaller of the two (Bonferroni), as for a control file's count and rank sum."""
    return (
        min(1.0, 2 * min(tail_p, spread.p_value)),
        min(1.0, 2 * min(tail_min_p, spread.min_attainable_p)),
    )

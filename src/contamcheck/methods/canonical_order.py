"""Canonical order (Oren et al. 2023, "Proving Test Set Contamination in Black Box Language Models").

A model that saw a benchmark as a file has seen its questions in their published order. If it
never saw them, every order of a few consecutive questions is equally likely to it (the null of
exchangeability). We cut a contiguous block of the benchmark into shards; per shard, the statistic
is the log-probability of the questions in published order minus the mean over seeded random
reorderings of the same questions. Whether the published order is systematically preferred is
asked by a randomization test, exact under that null (``randomization_test``): in each shard the
published order is one of its orderings, each as likely as the others to be the best.

Oren et al. asked it with a one-sided t-test across shards, sound with their 50 shards; with ten,
the shard differences' skew made it anti-conservative. With shards filled until the next question
did not fit (also until 2026-12-07), the two gave p < 0.05 to 7.8% of 2,000 shuffles of HumanEval
on the stand-in model, which saw nothing; one size of shard and the randomization test, 5.5%
(``experiments/canonical_null.py``, METHODS).

The paper used 50 shards x 250 permutations with a 2048-token sliding window on GPUs; CPU defaults
are far smaller (10 shards x 5 reorderings, each shard scored whole), and the report states the
effect this leaves detectable. The test needs an order that means something: it is skipped for a benchmark
whose rows are not in their published order.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..benchmarks import Benchmark, Item
from ..evidence import Evidence, Request, ScoreRequest
from .base import Test, TestKind

SEPARATOR = "\n\n"
MIN_SHARDS = 5
MIN_ITEMS_PER_SHARD = 3  # 3! - 1 = 5 distinct reorderings at least
MAX_ITEMS_PER_SHARD = 8
# A block of questions longer than this many times a block of the median question is passed over:
# shards of one size have no cap on their length, and a block of a benchmark's few very long
# questions costs more to score than many others and is the first a model's context window cuts.
# The length of a block doesn't depend on the order of its questions, so passing over one leaves
# the test exact.
MAX_SHARD_FACTOR = 2
# Seeded draws of the randomization test's null: its smallest p-value is 1 / 100,001, far below
# alpha over the six tests (Holm) at the default alpha; a smaller alpha takes more
# (``randomization_draws``), up to MAX_RANDOMIZATION_DRAWS, drawn DRAWS_AT_ONCE at a time (each draw
# holds one value a shard)
RANDOMIZATION_DRAWS = 100_000
MAX_RANDOMIZATION_DRAWS = 10_000_000
DRAWS_AT_ONCE = 1_000_000


def randomization_draws(alpha: float) -> int:
    """Enough draws that the randomization test's p can fall a hundred times below ``alpha`` (ten
    below alpha over ten tests, Holm's first step): 100,000 down to alpha 0.001, up to ten
    million (a floor of 1e-7)."""
    if alpha <= 100 / MAX_RANDOMIZATION_DRAWS:  # and 100 / alpha can overflow (alpha 1e-310)
        return MAX_RANDOMIZATION_DRAWS
    return max(RANDOMIZATION_DRAWS, math.ceil(100 / alpha))


@dataclass(frozen=True)
class Shard:
    index: int
    items: tuple[Item, ...]
    orderings: tuple[tuple[int, ...], ...]  # reorderings of the items (never the published one)
    # why each block of the benchmark passed over since the shard before (and, on the last shard,
    # after it) was: "repeated" (one question throughout) or "long" (over
    # ``CanonicalOrder.longest_shard``), for the report's note
    passed_over: tuple[str, ...] = ()

    def text(self, order: tuple[int, ...]) -> str:
        return SEPARATOR.join(self.items[i].text for i in order)

    @property
    def canonical(self) -> str:
        return self.text(tuple(range(len(self.items))))

    @property
    def permuted(self) -> list[str]:
        return [self.text(order) for order in self.orderings]


@dataclass(frozen=True)
class ShardOutcome:
    shard: Shard
    canonical: float
    permuted: tuple[float, ...]  # each reordering's log-probability
    truncated: bool

    @property
    def permuted_mean(self) -> float:
        return float(np.mean(self.permuted))

    @property
    def permuted_std(self) -> float:
        return spread(self.permuted)

    @property
    def statistic(self) -> float:
        return self.canonical - self.permuted_mean

    @property
    def standardized(self) -> np.ndarray:
        return standardized([self.canonical, *self.permuted])


def spread(logprobs: Sequence[float]) -> float:
    """The reorderings' standard deviation (ddof = 1; 0 for one reordering, NaN where one scored
    -inf, without numpy's warning), as a report's shard holds it."""
    if not np.isfinite(logprobs).all():
        return math.nan
    return float(np.std(logprobs, ddof=1)) if len(logprobs) > 1 else 0.0


def standardized(logprobs: Sequence[float]) -> np.ndarray:
    """A shard's orderings' log-probabilities (the published one first) less their mean, over their
    standard deviation (ddof = 1): zeros where every ordering scores the same."""
    values = np.array(logprobs, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):  # an edited report's 1e308: no warning shown
        spread = float(values.std(ddof=1))
        return (values - values.mean()) / spread if spread > 0 else np.zeros_like(values)


def can_judge(logprobs: Sequence[float | None], truncated: bool) -> bool:
    """Whether a shard whose orderings scored ``logprobs`` (the published one first) enters the
    test: one the model's window cut, or with a log-prob not finite (an ordering the model calls
    impossible, which leaves no spread to judge by), is left out."""
    return not truncated and all(value is not None and math.isfinite(value) for value in logprobs)


@dataclass(frozen=True)
class RandomizationOutcome:
    z: float  # the published orders' standardized sum over the null's standard deviation
    p_value: float
    min_p: float  # the smallest p-value these shards and draws can give


def randomization_test(
    outcomes: Sequence[ShardOutcome] | Sequence[np.ndarray], seed: int, draws: int = RANDOMIZATION_DRAWS
) -> RandomizationOutcome:
    """Does the published order score above its reorderings across shards?

    The statistic is the sum over shards of the published order's standardized log-probability
    (``standardized``; shards given as outcomes or as their standardized log-probabilities, as a
    saved report's are checked). Under the null every ordering of a shard's questions is as
    likely to the model, so the published one is a draw among the shard's orderings scored: its
    null distribution is that of a sum of one value drawn at random from each shard, which
    ``draws`` seeded draws give (p = (1 + draws reaching it) / (1 + draws)). Exact under the null
    whatever the shape of the log-probabilities (over the seeded draw of the reorderings, which the
    data does not choose), which a t-test across ten shards is not.
    """
    shards = [o.standardized if isinstance(o, ShardOutcome) else o for o in outcomes]
    observed = float(sum(z[0] for z in shards))
    rng = np.random.default_rng(seed)
    reached = 0
    for start in range(0, draws, DRAWS_AT_ONCE):
        null = np.zeros(min(DRAWS_AT_ONCE, draws - start))
        for z in shards:
            null += z[rng.integers(0, len(z), null.size)]
        reached += int(np.count_nonzero(null >= observed - 1e-9 * max(1.0, abs(observed))))
    # the published order at the top of every shard: where a shard's orderings tie at the top (all
    # alike, at the least), so many draws reach it too
    fewest = math.prod(float(np.mean(z >= z.max() - 1e-9)) for z in shards)
    return RandomizationOutcome(
        z=randomization_z(shards),
        p_value=(1 + reached) / (1 + draws),
        min_p=max(fewest, 1 / (1 + draws)),
    )


def randomization_z(shards: Sequence[np.ndarray]) -> float:
    """The randomization test's statistic, the published orders' standardized sum (``standardized``,
    the published one first), over its null's standard deviation (each shard's mean is 0)."""
    observed = float(sum(z[0] for z in shards))
    variance = sum(float(np.mean(z**2)) for z in shards)
    return observed / math.sqrt(variance) if variance > 0 else 0.0


def said_passed_over(why: Sequence[str]) -> list[str]:
    """The blocks of the benchmark passed over (``Shard.passed_over``), in words."""

    def blocks(count: int) -> str:
        return f"{count} block{'s' if count != 1 else ''}"

    said = []
    if repeated := why.count("repeated"):
        said.append(f"{blocks(repeated)} of one question repeated left out, as no reordering changes them")
    if long := why.count("long"):
        times = "twice" if MAX_SHARD_FACTOR == 2 else f"{MAX_SHARD_FACTOR} times"
        said.append(
            f"{blocks(long)} left out as too long (over {times} the length of a shard of the median question)"
        )
    return said


def minimum_detectable_effect(outcomes: Sequence[ShardOutcome], alpha: float, power: float = 0.8) -> float:
    """About how far above its reorderings' mean the published order must score, on average over
    the shards and in standard deviations of the shard's orderings, for ``randomization_test`` to
    reach ``alpha`` with this power (a normal approximation of its null)."""
    from scipy import stats

    variance = sum(float(np.mean(o.standardized**2)) for o in outcomes)
    if variance == 0:  # no ordering scores other than the rest: no preference can show
        return math.inf
    need = float(stats.norm.ppf(1 - alpha) + stats.norm.ppf(power))
    effect = need * math.sqrt(variance) / len(outcomes)
    # one of m orderings stands at most (m - 1) / sqrt(m) standard deviations above their mean
    ceiling = float(np.mean([len(o.permuted) / math.sqrt(len(o.permuted) + 1) for o in outcomes]))
    return effect if effect <= ceiling else math.inf


class CanonicalOrder(Test):
    name = "canonical-order"
    kind: ClassVar[TestKind] = "aggregate"
    scores = True
    title = "The model prefers the benchmark's questions in their published order"
    measures = (
        "Per shard of consecutive questions: log-probability of the published order minus the mean over "
        "random reorderings; a randomization test across shards (the published order as one draw among "
        "each shard's orderings)."
    )
    null_hypothesis = (
        "The model never saw the benchmark in order, so the published order is no more likely than any "
        "reordering of the same questions (exchangeability)."
    )
    caveat = (
        "Needs an order that is the published one and a model that saw the benchmark as a file; "
        "neighbouring questions that belong together (a topic, a numbering) can favour the published "
        "order without contamination. CPU defaults detect only strong order memorisation."
    )
    citation = (
        "Oren et al. 2023, Proving Test Set Contamination in Black Box Language Models (arXiv:2310.17623)"
    )

    def plan(self, benchmark: Benchmark) -> list[Shard] | str:
        """Shards over the start of the benchmark in published order, or why the test can't run."""
        if not benchmark.ordered:
            return "the benchmark's rows are not in their published order (--no-order)"
        items = sorted(benchmark.items, key=lambda item: item.position)
        size = self.shard_size(items)
        longest = self.longest_shard(items)
        shards: list[Shard] = []
        passed: list[str] = []  # since the last shard
        for start in range(0, len(items) - size + 1, size):
            if len(shards) == self.settings.order_shards:
                break
            group = items[start : start + size]
            if len({item.text for item in group}) < 2:  # no reordering changes them: they say nothing
                passed.append("repeated")
            elif len(SEPARATOR.join(item.text for item in group)) > longest:
                passed.append("long")
            else:
                orderings = self._orderings(len(shards), size)
                shards.append(Shard(len(shards), tuple(group), orderings, tuple(passed)))
                passed = []
        if len(shards) < MIN_SHARDS:
            passed += [why for shard in shards for why in shard.passed_over]
            shard_word = "shard" if len(shards) == 1 else "shards"
            return (
                f"too few {'shards' if passed else 'questions'}: the benchmark's {len(items)} questions fill "
                f"{len(shards)} {shard_word} of "
                f"{size} consecutive questions, {MIN_SHARDS} needed (a shard takes about "
                f"{self.settings.shard_chars:,} characters of the benchmark's median question, at least "
                f"{MIN_ITEMS_PER_SHARD} and at most {MAX_ITEMS_PER_SHARD})"
                + "".join(f"; {said}" for said in said_passed_over(passed))
            )
        if passed:  # the blocks after the last shard, where the benchmark ran out first
            shards[-1] = dataclasses.replace(shards[-1], passed_over=shards[-1].passed_over + tuple(passed))
        return shards

    def longest_shard(self, items: Sequence[Item]) -> int:
        """The most characters a shard's questions may take, joined: ``MAX_SHARD_FACTOR`` times a
        shard of the benchmark's median question."""
        if not items:
            return 0
        median = statistics.median(len(item.text) for item in items)
        return int(MAX_SHARD_FACTOR * self.shard_size(items) * (median + len(SEPARATOR)))

    def shard_size(self, items: Sequence[Item]) -> int:
        """Questions to a shard, the same for every shard: as many of the benchmark's median question
        as fill about ``shard_chars``, from 3 to 8.

        Not filled question by question until the next does not fit, as before 2026-12-07: that
        began each shard after the first with a question too long for the one before, so the
        published order was no random draw among its shard's orderings (a long question first),
        and a model that scores long questions first better preferred it without having seen
        anything (METHODS). Which questions make a shard must not depend on how they are ordered
        within it."""
        if not items:
            return MIN_ITEMS_PER_SHARD
        median = statistics.median(len(item.text) for item in items)
        fits = int(self.settings.shard_chars // (median + len(SEPARATOR)))
        return max(MIN_ITEMS_PER_SHARD, min(MAX_ITEMS_PER_SHARD, fits))

    def _orderings(self, index: int, size: int) -> tuple[tuple[int, ...], ...]:
        rng = random.Random(f"{self.settings.seed}|canonical-order|{index}")
        identity = tuple(range(size))
        others = math.factorial(size) - 1
        wanted = min(self.settings.order_permutations, others)
        if others > 1000 and 2 * wanted > others:
            # most of them: drawing until each turns up would take ever longer (coupon collector)
            every = [order for order in itertools.permutations(identity) if order != identity]
            return tuple(rng.sample(every, wanted))
        seen: dict[tuple[int, ...], None] = {}  # in the order drawn, looked up in constant time
        while len(seen) < wanted:
            order = list(identity)
            rng.shuffle(order)
            candidate = tuple(order)
            if candidate != identity:
                seen.setdefault(candidate)
        return tuple(seen)

    def requests(self, shards: list[Shard]) -> list[Request]:
        return [ScoreRequest(text) for shard in shards for text in (shard.canonical, *shard.permuted)]

    def outcomes(self, shards: list[Shard], evidence: Evidence) -> list[ShardOutcome]:
        results = []
        for shard in shards:
            canonical = evidence.stats(shard.canonical)
            permuted = [evidence.stats(text) for text in shard.permuted]
            results.append(
                ShardOutcome(
                    shard,
                    float(canonical.logprobs.sum()),
                    tuple(float(p.logprobs.sum()) for p in permuted),
                    canonical.truncated or any(p.truncated for p in permuted),
                )
            )
        return results

"""Canonical order (Oren et al. 2023, "Proving Test Set Contamination in Black Box Language Models").

A model that saw a benchmark as a file has seen its questions in their published order. If it
never saw them, every order of a few consecutive questions is equally likely to it (the null of
exchangeability). We cut a contiguous block of the benchmark into shards; per shard, the statistic
is the log-probability of the questions in published order minus the mean over seeded random
reorderings of the same questions; a one-sided t-test across shards asks whether the published
order is systematically preferred.

The paper used 50 shards x 250 permutations with a 2048-token sliding window on GPUs; CPU defaults
are far smaller (10 x 10, shards that fit the context whole), and the report states the effect this
leaves detectable. The test needs an order that means something: it is skipped for a benchmark
whose rows are not in their published order.
"""

from __future__ import annotations

import itertools
import math
import random
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


@dataclass(frozen=True)
class Shard:
    index: int
    items: tuple[Item, ...]
    orderings: tuple[tuple[int, ...], ...]  # reorderings of the items (never the published one)

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
    permuted_mean: float
    permuted_std: float
    truncated: bool

    @property
    def statistic(self) -> float:
        return self.canonical - self.permuted_mean


def minimum_detectable_effect(shards: int, alpha: float, power: float = 0.8) -> float:
    """Smallest mean/sd of the shard statistics a one-sided t-test detects with this power."""
    from scipy import stats

    df = shards - 1
    return float((stats.t.ppf(1 - alpha, df) + stats.t.ppf(power, df)) / math.sqrt(shards))


def one_sided_t(values: np.ndarray) -> tuple[float, float]:
    """t statistic and p-value of H1: mean > 0 (scipy's ttest_1samp, ddof = 1)."""
    from scipy import stats

    if len(values) < 2 or float(np.std(values)) == 0.0:
        return (math.inf, 1 / 2 ** len(values)) if np.all(values > 0) else (0.0, 1.0)
    result = stats.ttest_1samp(values, 0.0, alternative="greater")
    return float(result.statistic), float(result.pvalue)


class CanonicalOrder(Test):
    name = "canonical-order"
    kind: ClassVar[TestKind] = "aggregate"
    scores = True
    title = "The model prefers the benchmark's questions in their published order"
    measures = (
        "Per shard of consecutive questions: log-probability of the published order minus the mean over "
        "random reorderings; one-sided t-test across shards."
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
        shards: list[Shard] = []
        start = 0
        repeated = 0  # blocks of one text repeated: no reordering changes them, so they say nothing
        while len(shards) < self.settings.order_shards and start < len(items):
            group: list[Item] = []
            length = 0
            while start + len(group) < len(items) and len(group) < MAX_ITEMS_PER_SHARD:
                nxt = items[start + len(group)]
                if len(group) >= MIN_ITEMS_PER_SHARD and length + len(nxt.text) > self.settings.shard_chars:
                    break
                group.append(nxt)
                length += len(nxt.text) + len(SEPARATOR)
            if len(group) < MIN_ITEMS_PER_SHARD:
                break
            start += len(group)
            if len({item.text for item in group}) < 2:
                repeated += 1
                continue
            shards.append(Shard(len(shards), tuple(group), self._orderings(len(shards), len(group))))
        if len(shards) < MIN_SHARDS:
            shard_word = "shard" if len(shards) == 1 else "shards"
            left_out = (
                f"; {repeated} block{'s' if repeated != 1 else ''} of one question repeated left out, as "
                "no reordering changes them"
                if repeated
                else ""
            )
            return (
                f"too few questions: the benchmark's {len(items)} fill {len(shards)} {shard_word} of "
                f"consecutive questions, {MIN_SHARDS} needed (a shard takes up to {MAX_ITEMS_PER_SHARD} "
                f"questions or about {self.settings.shard_chars:,} characters, and at least "
                f"{MIN_ITEMS_PER_SHARD}){left_out}"
            )
        return shards

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
            totals = np.array([float(p.logprobs.sum()) for p in permuted])
            results.append(
                ShardOutcome(
                    shard,
                    float(canonical.logprobs.sum()),
                    float(totals.mean()),
                    float(totals.std(ddof=1)) if len(totals) > 1 else 0.0,
                    canonical.truncated or any(p.truncated for p in permuted),
                )
            )
        return results

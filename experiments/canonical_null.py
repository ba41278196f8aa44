"""Does canonical-order hold its chance rate on a model that saw nothing? Its null, measured.

The stand-in model (``fake:clean``) has seen nothing, so no order of a benchmark's questions is
special to it. Shuffle a benchmark, call the shuffle its published order, and the test should
flag it at its chance rate: p < 0.05 in 5% of shuffles, p < 0.01 in 1%. Each shuffle is judged
four ways, on the very same scores:

* shards **filled** question by question until the next one does not fit (the rule before
  2026-12-07), or of one **fixed** size set by the median question (the rule since);
* a one-sided **t**-test across shards (Oren et al.'s, used before 2026-12-07), or the
  **randomization** test (``canonical_order.randomization_test``, used since).

    python experiments/canonical_null.py --benchmark humaneval --shuffles 2000

With ``--memorised LOGPROB`` the stand-in model has seen each shuffle's shards as files, in their
published order (it memorised the shards' texts, with that log-prob for a memorised token, so a
question's tokens are as likely in every order and only the joins between questions tell): the
shares are then the power of each way.

    python experiments/canonical_null.py --benchmark sample --shuffles 200 --memorised -1
    python experiments/canonical_null.py --benchmark sample --shuffles 200 --memorised -2.5

Prints, per way, the share of shuffles under each level and a binomial 95% interval; ``--out``
also writes them as JSON.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import time
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from contamcheck.backends.fake import FakeModel
from contamcheck.benchmarks import Item, load_benchmark
from contamcheck.methods import MethodSettings, create_test
from contamcheck.methods.canonical_order import (
    MAX_ITEMS_PER_SHARD,
    MIN_ITEMS_PER_SHARD,
    SEPARATOR,
    CanonicalOrder,
    Shard,
    ShardOutcome,
    randomization_test,
)
from contamcheck.stats import wilson_interval

LEVELS = (0.05, 0.01, 0.001)
DRAWS = 20_000  # the randomization test's draws here (the audit's 100,000 change no rate)


def filled_shards(test: CanonicalOrder, items: list[Item], count: int) -> list[Shard]:
    """The rule before 2026-12-07: at least three questions, then more while the next one fits
    in ``shard_chars`` (at most eight); the next shard begins with the one that did not fit."""
    shards: list[Shard] = []
    start = 0
    while len(shards) < count and start < len(items):
        group: list[Item] = []
        length = 0
        while start + len(group) < len(items) and len(group) < MAX_ITEMS_PER_SHARD:
            nxt = items[start + len(group)]
            if len(group) >= MIN_ITEMS_PER_SHARD and length + len(nxt.text) > test.settings.shard_chars:
                break
            group.append(nxt)
            length += len(nxt.text) + len(SEPARATOR)
        if len(group) < MIN_ITEMS_PER_SHARD:
            break
        start += len(group)
        shards.append(Shard(len(shards), tuple(group), test._orderings(len(shards), len(group))))
    return shards


def judged(shards: list[Shard], model: FakeModel, seed: int) -> dict[str, float]:
    scores: dict[str, float] = {}
    outcomes = []
    for shard in shards:
        texts = [shard.canonical, *shard.permuted]
        missing = [t for t in texts if t not in scores]
        for text, stat in zip(missing, model.score(missing), strict=True):
            scores[text] = float(stat.logprobs.sum())
        outcomes.append(ShardOutcome(shard, scores[texts[0]], tuple(scores[t] for t in texts[1:]), False))
    differences = [o.statistic for o in outcomes]
    return {
        "t": float(stats.ttest_1samp(differences, 0.0, alternative="greater").pvalue),
        "randomization": randomization_test(outcomes, seed, DRAWS).p_value,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--benchmark", default="humaneval")
    parser.add_argument("--shuffles", type=int, default=2000)
    parser.add_argument("--shards", type=int, default=10)
    parser.add_argument(
        "--permutations",
        type=int,
        default=10,
        help="reorderings a shard (the runs in docs: 10; an audit's: 5)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--memorised", type=float, help="the log-prob of a memorised token (default: none)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)

    benchmark = load_benchmark(args.benchmark)
    items = sorted(benchmark.items, key=lambda item: item.position)
    clean = FakeModel()
    rng = random.Random(args.seed)
    p_values: dict[str, list[float]] = {}
    started = time.perf_counter()
    for run in range(args.shuffles):
        order = items[:]
        rng.shuffle(order)
        shuffled = [dataclasses.replace(item, position=i) for i, item in enumerate(order)]
        test = create_test(
            "canonical-order",
            MethodSettings(seed=run, order_shards=args.shards, order_permutations=args.permutations),
        )
        assert isinstance(test, CanonicalOrder)
        fixed = test.plan(dataclasses.replace(benchmark, items=tuple(shuffled)))
        assert isinstance(fixed, list)
        for rule, shards in (("filled", filled_shards(test, shuffled, args.shards)), ("fixed", fixed)):
            model = clean
            if args.memorised is not None:  # these shards seen in their published order
                model = FakeModel([shard.canonical for shard in shards], strength=args.memorised)
            for name, p in judged(shards, model, run).items():
                p_values.setdefault(f"{rule} shards, {name}", []).append(p)
    rows: dict[str, Any] = {}
    for way, found in p_values.items():
        values = np.array(found)
        rows[way] = {}
        cells = []
        for level in LEVELS:
            hits = int(np.sum(values < level))
            low, high = wilson_interval(hits, len(values))
            rows[way][str(level)] = {"hits": hits, "rate": hits / len(values), "interval": [low, high]}
            cells.append(f"p < {level:g}: {hits / len(values):.2%} ({low:.1%}-{high:.1%})")
        print(f"{way:30s} " + "  ".join(cells))
    print(f"{args.shuffles} shuffles of {args.benchmark}, {time.perf_counter() - started:.0f} s")
    if args.out is not None:
        settings = {
            "benchmark": args.benchmark,
            "shuffles": args.shuffles,
            "shards": args.shards,
            "permutations": args.permutations,
            "draws": DRAWS,
            "memorised": args.memorised,
        }
        args.out.write_text(json.dumps({"settings": settings, "rates": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()

"""How often do the twins back a tail? Simulated pairs, the product's bulk test and rule.

With a reference, a likelihood test withholds a tail beyond the bulk that stands out with its twins
(``stats.spread.shared_with_twins``, docs/METHODS.md "A tail its twins share"). Two errors are
possible: a tail of a *kind* the model knows better than its reference (question and twin lifted
alike) let through, and a tail of memorised questions (the twin lifted less) withheld. This draws
pairs as ``tests/stats/test_spread.py`` does (a shared part, the words, and a little noise each),
lifts a share of them, runs the product's bulk test on the originals, and where its tail count goes
beyond chance asks the rule, with the spread test alone (the first version of the rule) and with
the spread test and the tail's own gain (the rule as kept).

    python experiments/twin_backing.py --draws 200
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from contamcheck.stats.bulk import bulk_tail_test
from contamcheck.stats.spread import TWINS_BACK, shared_with_twins, spread_test, tail_gain_test

SHAPES = [  # (share of pairs lifted, lift of the question in SDs of the shared part, twin's share of it)
    (0.30, 3.0, 1.0),
    (0.10, 3.0, 1.0),
    (0.05, 3.0, 1.0),
    (0.30, 3.0, 0.8),
    (0.10, 3.0, 0.8),
    (0.05, 3.0, 0.8),
    (0.10, 3.0, 0.6),
    (0.05, 3.0, 0.6),
]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--tables", type=Path, default=Path("experiments/runs/bulk-tables"))
    args = parser.parse_args()
    args.tables.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(2026_12_06)
    n = args.questions
    print(f"{args.draws} draws of {n} pairs per row; 'withheld': of the draws whose tail count went beyond")
    print(
        f"chance (p < {TWINS_BACK}), those the rule withholds. Twins lifted alike: a kind, not memorised.\n"
    )
    print(
        "| lifted | lift (SD) | twins lifted | tail beyond chance | withheld, spread alone "
        "| withheld, as kept |"
    )
    print("|---|---|---|---|---|---|")
    for share, lift, twin in SHAPES:
        tails = alone = kept = 0
        for _ in range(args.draws):
            common = rng.normal(0, 1, n)
            x, y = common + rng.normal(0, 0.3, n), common + rng.normal(0, 0.3, n)
            lifted = rng.random(n) < share
            x, y = x + lift * lifted, y + twin * lift * lifted
            outcome = bulk_tail_test(x, 2000, tables=args.tables)
            if outcome.p_value is None or outcome.p_value >= TWINS_BACK:
                continue
            tails += 1
            spread = spread_test(x, y, 2000, seed=1)
            alone += shared_with_twins(outcome.p_value, spread)
            kept += shared_with_twins(outcome.p_value, spread, tail_gain_test(x, y, int(outcome.flags.sum())))

        def rate(k: int, tails: int = tails) -> str:
            return f"{k}/{tails} ({k / tails:.0%})" if tails else "–"

        print(
            f"| {share:.0%} | {lift:g} | {twin:.0%} | {tails}/{args.draws} | {rate(alone)} | {rate(kept)} |"
        )


if __name__ == "__main__":
    main()

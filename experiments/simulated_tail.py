"""The bulk null on simulated benchmarks with a memorised tail: how much of the tail it flags, how
much of the rest, and the tail count's p-value, over many draws.

Each draw: ``--n`` questions from a normal shifted ``--shift`` SDs (familiarity: the whole bulk
moves), of which a share ``--memorised`` is lifted ``--lift`` SDs more (memorised).

    python experiments/simulated_tail.py --draws 20
"""

from __future__ import annotations

import argparse

import numpy as np

from contamcheck.pipeline.runners import BULK_SIMULATIONS
from contamcheck.stats.bulk import bulk_tail_test


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--draws", type=int, default=20)
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--shift", type=float, default=1.5)
    parser.add_argument("--memorised", type=float, default=0.2)
    parser.add_argument("--lift", type=float, default=4.0)
    args = parser.parse_args(argv)
    tail_flagged, rest_flagged, p_values = [], [], []
    for seed in range(args.draws):
        values = np.random.default_rng(seed).normal(args.shift, 1.0, args.n)
        tail = np.arange(args.n) < int(args.memorised * args.n)
        values[tail] += args.lift
        outcome = bulk_tail_test(values, BULK_SIMULATIONS)
        tail_flagged.append(outcome.flags[tail].mean())
        rest_flagged.append(outcome.flags[~tail].mean())
        p_values.append(outcome.p_value)
    print(
        f"{args.draws} draws of {args.n} questions, shift {args.shift}, {args.memorised:.0%} lifted "
        f"{args.lift} SDs more: memorised flagged {min(tail_flagged):.1%}-{max(tail_flagged):.1%} "
        f"(median {np.median(tail_flagged):.1%}), the rest {min(rest_flagged):.1%}-"
        f"{max(rest_flagged):.1%} (median {np.median(rest_flagged):.1%}), largest p {max(p_values):.2g}"
    )


if __name__ == "__main__":
    main()

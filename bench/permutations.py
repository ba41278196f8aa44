"""What a permutation test costs: the sign-flip test on one test's paired differences.

Times ``sign_flip_test`` on N seeded normal differences at the given permutation counts, as one
test's analysis does; the cap on --permutations (``config.MAX_PERMUTATIONS``) is chosen from it:

    python bench/permutations.py --questions 200 --permutations 1000000 10000000
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from contamcheck.stats import sign_flip_test


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--permutations", type=int, nargs="+", default=[1_000_000, 10_000_000])
    args = parser.parse_args()
    diffs = np.random.default_rng(0).normal(size=args.questions)
    for permutations in args.permutations:
        started = time.perf_counter()
        sign_flip_test(diffs, permutations, seed=0)
        seconds = time.perf_counter() - started
        print(f"{args.questions} questions, {permutations:,} permutations: {seconds:.1f} s")


if __name__ == "__main__":
    main()

"""Would the twins help where the bulk is one normal? A fallback null, with its own p-value.

On HumanEval's first tuning split (seed 1) the 3-pass model without a reference stayed one bulk
(the product flags 3-9% of its leaked half), while the twins as the null saw 22-29% of the leaked
half and 0-2% of the held-out. This measures the test that idea implies, on any split's .npz from
familiarity.py:

* ``bulk``: the product's null (``bulk_tail_test``), its flag rate and p-value;
* ``twins``: flag a question whose score x lies above the 95th percentile of its twins' scores y
  shifted by the median of x - y (the shift is familiarity, as in the bulk null); the p-value of
  the flag count comes from swapping original and twin within random pairs (under "the model never
  saw the questions", a question and its shifted twin are exchangeable), 20,000 swaps;
* ``fallback``: the bulk where it finds a tail, else the twins; p = 2 x the smaller of the two
  (Bonferroni for choosing between two nulls).

A rate is "leaked / held-out" for contaminated models. The bars: clean models' p stays above 0.05
and their flags at or under 10%; a leak's p reaches 0.001.

    python experiments/twin_fallback.py experiments/runs/familiarity-{gsm8k,humaneval}-seed{1,2}.npz \\
        > docs/validation/twin-fallback-tuning.md
"""

from __future__ import annotations

import numpy as np
from nulls import STATISTICS, paired_scores, per_split

from contamcheck.stats.bulk import bulk_tail_test

Q = 0.95
SWAPS = 20_000
MODELS = ("base", "clean-similar", "leak-1", "leak-3", "leak-10")


def twin_flags(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """x above the 95th percentile of the twins shifted by the median difference; rows of x and y."""
    shift = np.median(x - y, axis=-1, keepdims=True)
    return x > np.quantile(y + shift, Q, axis=-1, keepdims=True)


def twin_test(x: np.ndarray, y: np.ndarray, seed: int = 0) -> tuple[np.ndarray, float]:
    flags = twin_flags(x, y)
    swap = np.random.default_rng(seed).random((SWAPS, len(x))) < 0.5
    counts = twin_flags(np.where(swap, y, x), np.where(swap, x, y)).sum(axis=1)
    return flags, float((np.sum(counts >= flags.sum()) + 1) / (SWAPS + 1))


def rate(flags: np.ndarray, leaked: np.ndarray, model: str) -> str:
    if model.startswith("leak"):
        return f"{flags[leaked].mean():.0%} / {flags[~leaked].mean():.0%}"
    return f"{flags.mean():.0%}"


def main() -> None:
    per_split("twin_fallback.py", table)


def table(data: np.lib.npyio.NpzFile) -> None:
    leaked = data["is_leaked"].astype(bool)
    print("| statistic | reference | model | bulk | p | twins | p | fallback | p |")
    print("|---|---|---|---|---|---|---|---|---|")
    for key, label in STATISTICS.items():
        for reference in (None, "base"):
            for model in MODELS:
                if model == reference or f"{model}|{key}" not in data.files:
                    continue
                x, y = paired_scores(data, model, key, reference)
                bulk = bulk_tail_test(x, 2000)
                twins, twin_p = twin_test(x, y)
                tail = bulk.fit.components == 2
                chosen = bulk.flags if tail else twins
                fallback_p = min(1.0, 2 * min(bulk.p_value, twin_p))
                print(
                    f"| {label} | {reference or 'none'} | {model} | {rate(bulk.flags, leaked, model)} | "
                    f"{bulk.p_value:.2g} | {rate(twins, leaked, model)} | {twin_p:.2g} | "
                    f"{rate(chosen, leaked, model)} | {fallback_p:.2g} |"
                )


if __name__ == "__main__":
    main()

"""Does a leak widen the benchmark's scores more than their twins'? A spread test, with its p-value.

Proposed after the other-family runs: at one pass the leaked questions rank well (AUROC 0.85-0.93
with a reference) but the flag count is not significant, because the bulk null estimates its own
spread from the same scores. The twins carry a spread the model cannot have memorised: a question
and its twin differ only in their numbers, so under "the model never saw the questions" the two are
exchangeable, and a leak that lifts some questions more than their twins makes the originals'
scores x spread more than the twins' y. The Pitman-Morgan test of equal variances in pairs asks
exactly that: var(x) = var(y) iff corr(x + y, x - y) = 0. A uniform familiarity shift (x - y
constant) leaves it at zero and only widens the permutation null, so it cannot flag domain training
that moves every question alike.

* ``pearson``: corr(x + y, x - y), one-sided (a leak makes it positive);
* ``ranks``: the same with x + y replaced by its ranks (a heavy tail in one pair cannot decide it);
* p-values from swapping original and twin within random pairs (20,000 swaps: x + y is unchanged,
  x - y changes sign), set beside the product's bulk test (``bulk_tail_test``) on the same scores.

Questions without a twin are left out. A rate is "leaked / held-out" for contaminated models.
The bars: clean models' p stays above 0.05 (at most one in twenty below it by chance); one pass
reaches p < 0.001 on both splits of a benchmark with the same statistic and setting.

    python experiments/spread_test.py \\
        experiments/runs/with-gemma/familiarity-{gsm8k,humaneval}-seed{1,2}.npz \\
        > docs/validation/spread-test-tuning.md

The .npz files come from ``familiarity.py`` without ``--no-gemma`` (docs/METHODS.md gives the commands).
"""

from __future__ import annotations

import numpy as np
from nulls import STATISTICS, paired_scores, per_split
from scipy.stats import rankdata

from contamcheck.stats.bulk import bulk_tail_test

SWAPS = 20_000
MODELS = ("base", "other-family", "clean-similar", "leak-1", "leak-3", "leak-10")
REFERENCES = (None, "other-family", "base")


def spread_p(x: np.ndarray, y: np.ndarray, ranks: bool, seed: int = 0) -> float:
    """One-sided swap-permutation p-value of corr(x + y, x - y) > 0."""
    total = x + y
    if ranks:
        total = rankdata(total)
    total = (total - total.mean()) / total.std()
    signs = np.where(np.random.default_rng(seed).random((SWAPS, len(x))) < 0.5, -1.0, 1.0)
    diffs = np.vstack([x - y, signs * (x - y)])
    diffs = diffs - diffs.mean(axis=1, keepdims=True)
    corr = (diffs @ total) / (len(x) * diffs.std(axis=1))
    return float((np.sum(corr[1:] >= corr[0]) + 1) / (SWAPS + 1))


def main() -> None:
    per_split("spread_test.py", table)


def table(data: np.lib.npyio.NpzFile) -> None:
    leaked = data["is_leaked"].astype(bool)
    print("| statistic | reference | model | bulk flags | bulk p | spread p (pearson) | spread p (ranks) |")
    print("|---|---|---|---|---|---|---|")
    for key, label in STATISTICS.items():
        for reference in REFERENCES:
            for model in MODELS:
                needed = [f"{model}|{key}"] + ([f"{reference}|{key}"] if reference else [])
                if model == reference or any(name not in data.files for name in needed):
                    continue
                x, y = paired_scores(data, model, key, reference)
                kept = np.isfinite(x) & np.isfinite(y)
                x, y, half = x[kept], y[kept], leaked[kept]
                bulk = bulk_tail_test(x, 2000)
                flags = bulk.flags
                rate = (
                    f"{flags[half].mean():.0%} / {flags[~half].mean():.0%}"
                    if model.startswith("leak")
                    else f"{flags.mean():.0%}"
                )
                print(
                    f"| {label} | {reference or 'none'} | {model} | {rate} | {bulk.p_value:.2g} | "
                    f"{spread_p(x, y, ranks=False):.2g} | {spread_p(x, y, ranks=True):.2g} |"
                )


if __name__ == "__main__":
    main()

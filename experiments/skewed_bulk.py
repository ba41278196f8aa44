"""How often does a clean but left-skewed bulk look like a tail? The bulk null on simulated scores.

The shape measured on HumanEval's tuning split (a model fine-tuned on similar code, Min-K%++): a
wide lower component and a narrow upper one just above it. For each draw, the flags under the
rule before 2026-12-03 (any upper component), under the rule now (its centre beyond the null's
flag threshold), and how many of the draws still flagging over 10% carry the report's caveat (a
null under 40% of the questions).

    python experiments/skewed_bulk.py
"""

from __future__ import annotations

import numpy as np

from contamcheck.stats import bulk
from contamcheck.stats.bulk import minority

DRAWS = 200
SHAPES = ((59, 73, 1.26, 0.4), (90, 110, 1.0, 0.4))  # lower count, upper count, upper centre, upper sd


def flag_share(values: np.ndarray, tail_beyond: float) -> tuple[float, bulk.BulkFit]:
    fit = bulk.fit_bulk(values, tail_beyond=tail_beyond)
    return float((values > bulk.threshold_of(fit)).mean()), fit


def main() -> None:
    print("| clean scores | draws flagging > 10%, rule before | rule now | rule now, without the caveat |")
    print("|---|---|---|---|")
    for low, high, centre, sd in SHAPES:
        before = now = unmarked = 0
        for seed in range(DRAWS):
            rng = np.random.default_rng(seed)
            values = np.concatenate([rng.normal(0, 1, low), rng.normal(centre, sd, high)])
            share_before, _ = flag_share(values, -np.inf)
            share_now, fit = flag_share(values, bulk.TAIL_BEYOND)
            before += share_before > 0.1
            now += share_now > 0.1
            unmarked += share_now > 0.1 and not minority(fit)
        shape = f"{low} from N(0, 1) + {high} from N({centre}, {sd})"
        print(f"| {shape} | {before}/{DRAWS} | {now}/{DRAWS} | {unmarked}/{DRAWS} |")


if __name__ == "__main__":
    main()

"""Would several twins per question give the spread test the power one pass needs? Measure.

With one twin the spread test (``stats/spread.py``) compares each original with a single other
draw; with K twins the original is compared with their mean, which is less noisy, and under "never
seen" the original and its K twins are exchangeable, so the null permutes which of the K + 1 texts
is the original. The statistic generalises the one-twin test: the correlation of the ranks of each
question's mean over its K + 1 texts with (the original's score - that mean); its p-value comes
from choosing the original at random among the K + 1 in every question. With K = 1 it is the
product's test.

Scores every model of a tuning split on the originals and K twins (the evidence cache keeps what
is computed), less the untouched base's (the reference), for zlib, Min-K% and Min-K%++, and
prints the p-value with 1 and with K twins. Tuning splits only.

    python experiments/spread_twins.py --benchmark gsm8k --seed 1 --twins 3
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from familiarity import evidence, statistics_for
from nulls import signed_log
from scipy.stats import rankdata
from validate import BASE

SWAPS = 20_000
MODELS = ("clean-similar", "leak-1", "leak-3")
STATISTICS = {"zlib": "zlib", "min_k": "Min-K%", "min_k_pp": "Min-K%++"}


def spread_p(values: np.ndarray, seed: int = 0) -> float:
    """values: questions x (original, twin 1..K). One-sided p of corr(rank(row mean), original - mean)."""
    n, texts = values.shape
    centre = values.mean(axis=1)
    total = rankdata(centre)
    total = (total - total.mean()) / total.std()
    deviation = values - centre[:, None]  # (K + 1) / K times "this text less the mean of the others"

    def corr(picked: np.ndarray) -> np.ndarray:
        d = picked - picked.mean(axis=-1, keepdims=True)
        return (d @ total) / (n * d.std(axis=-1))

    observed = corr(deviation[:, 0])
    choice = np.random.default_rng(seed).integers(0, texts, size=(SWAPS, n))
    null = corr(deviation[np.arange(n), choice])
    return float((np.sum(null >= observed - 1e-12) + 1) / (SWAPS + 1))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--benchmark", default="gsm8k")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--twins", type=int, default=3)
    parser.add_argument("--models", type=Path, default=Path("experiments/models"))
    parser.add_argument("--cache", type=Path, default=Path("experiments/runs/cache"))
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    if args.seed == 0:
        parser.error("seed 0 is the reported split: measure on a tuning split")

    from contamcheck.benchmarks import load_benchmark
    from contamcheck.controls import build_controls

    folder = args.models / f"{args.benchmark}-seed{args.seed}"
    split = json.loads((folder / "split.json").read_text())
    leaked = set(split["leaked"])
    controls = build_controls(load_benchmark(str(folder / "questions.jsonl")), 10_000, 0, None, args.twins)
    items = [i for i in controls.items if len(controls.twins[i.id]) == args.twins]
    texts = [[i.text, *controls.twins[i.id]] for i in items]
    flat = [t for row in texts for t in row]
    is_leaked = np.array([i.id in leaked for i in items])

    scores: dict[str, dict[str, np.ndarray]] = {}
    for name, spec in {"base": BASE, **{m: str(folder / m) for m in MODELS}}.items():
        print(f"scoring {name}", flush=True)
        ev = evidence(spec, flat, args.cache, args.threads)
        per_text = [statistics_for(ev.stats(t), t) for t in flat]
        scores[name] = {
            key: np.array([row[key] for row in per_text]).reshape(len(items), args.twins + 1)
            for key in STATISTICS
        }
    print(
        f"\n{args.benchmark}, seed {args.seed}: {len(items)} questions with {args.twins} twins "
        f"({is_leaked.sum()} leaked), base as reference; spread p with 1 twin / with {args.twins}\n"
    )
    print(f"| statistic | model | 1 twin | {args.twins} twins |")
    print("|---|---|---|---|")
    for key, label in STATISTICS.items():
        scale = signed_log if key == "min_k_pp" else (lambda v: v)
        for model in MODELS:
            values = scale(scores[model][key]) - scale(scores["base"][key])
            one, many = spread_p(values[:, :2]), spread_p(values)
            print(f"| {label} | {model} | {one:.2g} | {many:.2g} |")


if __name__ == "__main__":
    main()

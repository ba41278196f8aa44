"""Compare nulls for the likelihood tests on the tuning split (reads familiarity.py's output).

For each per-question statistic and each candidate null, the share of questions flagged on clean
models (base, other family, similar-text) and on the leaked and held-out halves of contaminated
ones, and the p-value of the flag count.

Candidates, with x = original's score, y = its twin's score, d = x - y:

* ``mirror0``: the earlier design: flag d above the 95th percentile of -d (centre 0);
* ``mirror_median``: the same, centred on the median of d (SPEC §11: halves detection);
* ``twin_null``: flag x above the 95th percentile of the twins' scores shifted by the bulk offset
  delta (the median of d); p-value by swapping x - delta and y within random pairs.

    python experiments/nulls.py experiments/runs/familiarity-seed1.npz
"""

from __future__ import annotations

import sys

import numpy as np

Q = 0.95
PERMUTATIONS = 2000


def mirror(d: np.ndarray, centre: float) -> np.ndarray:
    c = d - centre
    return c > np.quantile(-c, Q)


def twin_null(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    delta = float(np.median(x - y))
    return x > np.quantile(y + delta, Q), delta


def swap_p(x: np.ndarray, y: np.ndarray, rng: np.random.Generator) -> float:
    flags, delta = twin_null(x, y)
    observed = flags.sum()
    a, b = x - delta, y
    hits = 0
    for _ in range(PERMUTATIONS):
        swap = rng.random(len(a)) < 0.5
        xa, yb = np.where(swap, b, a), np.where(swap, a, b)
        hits += (xa > np.quantile(yb, Q)).sum() >= observed
    return (hits + 1) / (PERMUTATIONS + 1)


def main() -> None:
    data = np.load(sys.argv[1])
    leaked = data["is_leaked"]
    models = sorted({k.split("|")[0] for k in data.files if "|" in k})
    keys = sorted(
        {
            k.split("|")[1]
            for k in data.files
            if "|" in k and ":" not in k and k.split("|")[1] != "context_gain"
        }
    )
    rng = np.random.default_rng(0)
    for key in keys:
        print(f"\n== {key}")
        for reference in (None, "base", "other-family"):
            label = "no reference" if reference is None else f"minus {reference}"
            print(f"  -- {label}")
            for model in models:
                if model == reference or (reference and f"{reference}|{key}" not in data.files):
                    continue
                x = data[f"{model}|{key}"]
                y = x - data[f"{model}|{key}:twin_diff"]
                if reference:
                    rx = data[f"{reference}|{key}"]
                    ry = rx - data[f"{reference}|{key}:twin_diff"]
                    x, y = x - rx, y - ry
                ok = np.isfinite(x) & np.isfinite(y)
                x, y, lk = x[ok], y[ok], leaked[ok]
                d = x - y
                rows = {
                    "mirror0": mirror(d, 0.0),
                    "mirror_median": mirror(d, float(np.median(d))),
                    "twin_null": twin_null(x, y)[0],
                }
                cells = []
                for name, flags in rows.items():
                    if model.startswith("leak"):
                        cells.append(f"{name} {flags[lk].mean():4.0%}/{flags[~lk].mean():4.0%}")
                    else:
                        cells.append(f"{name} {flags.mean():4.0%}")
                p = swap_p(x, y, rng)
                print(f"    {model:14s} " + "  ".join(cells) + f"  twin_null p={p:.3g}")


if __name__ == "__main__":
    main()

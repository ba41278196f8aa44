"""Compare nulls for the likelihood tests on one split (reads familiarity.py's .npz output).

For each statistic (zlib, Min-K%, Min-K%++ on a signed-log scale), with no reference, minus a model
of another family, and minus the exact base model (privileged), the share of questions each null
flags: on clean models (the base, another family, the similar-text model) and on the leaked /
held-out halves of contaminated ones; and each per-question score's AUROC for leaked vs held-out.

Nulls, with x = a question's score, y = its twin's, d = x - y:

* ``mirror0``: the earlier design: flag d above the 95th percentile of -d;
* ``twins``: flag x above the 95th percentile of the twins' scores shifted by the median of d;
* ``bulk``: flag x above the 95th percentile of the never-seen bulk (``contamcheck.stats.bulk``).

    python experiments/nulls.py experiments/runs/familiarity-seed1.npz \\
        > docs/validation/nulls-gsm8k-seed1-tuning.md
"""

from __future__ import annotations

import sys
import warnings

import numpy as np
from validate import auroc

from contamcheck.stats.bulk import bulk_tail_test

Q = 0.95
STATISTICS = {"zlib": "zlib", "min_k": "Min-K%", "min_k_pp": "Min-K%++"}
MODELS = ("base", "other-family", "clean-similar", "leak-1", "leak-3", "leak-10")


def signed_log(x: np.ndarray) -> np.ndarray:
    return np.sign(x) * np.log1p(np.abs(x))


def flags_of(x: np.ndarray, y: np.ndarray) -> dict[str, np.ndarray]:
    d = x - y
    return {
        "mirror0": d > np.quantile(-d, Q),
        "twins": x > np.quantile(y + np.median(d), Q),
        "bulk": bulk_tail_test(x, 2000).flags,
    }


def main() -> None:
    warnings.simplefilter("ignore")
    data = np.load(sys.argv[1])
    leaked = data["is_leaked"]
    print("| statistic | reference | model | AUROC | mirror0 | twins | bulk |")
    print("|---|---|---|---|---|---|---|")
    for key, label in STATISTICS.items():
        for reference in (None, "other-family", "base"):
            for model in MODELS:
                needed = [f"{model}|{key}"] + ([f"{reference}|{key}"] if reference else [])
                missing = any(name not in data.files for name in needed)
                if model == reference or missing:
                    continue
                x = data[f"{model}|{key}"]
                y = x - data[f"{model}|{key}:twin_diff"]
                if key == "min_k_pp":
                    x, y = signed_log(x), signed_log(y)
                if reference:
                    rx = data[f"{reference}|{key}"]
                    ry = rx - data[f"{reference}|{key}:twin_diff"]
                    if key == "min_k_pp":
                        rx, ry = signed_log(rx), signed_log(ry)
                    x, y = x - rx, y - ry
                cells = []
                for flags in flags_of(x, y).values():
                    if model.startswith("leak"):
                        cells.append(f"{flags[leaked].mean():.0%} / {flags[~leaked].mean():.0%}")
                    else:
                        cells.append(f"{flags.mean():.0%}")
                area = f"{auroc(list(x[leaked]), list(x[~leaked])):.2f}" if model.startswith("leak") else ""
                print(f"| {label} | {reference or 'none'} | {model} | {area} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()

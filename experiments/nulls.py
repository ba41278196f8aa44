"""Compare nulls for the likelihood tests on one split (reads familiarity.py's .npz output).

For each statistic (zlib, Min-K%, Min-K%++ on a signed-log scale), with no reference, minus a model
of another family, and minus the exact base model (privileged), the share of questions each null
flags: on clean models (the base, another family, the similar-text model) and on the leaked /
held-out halves of contaminated ones; and each per-question score's AUROC for leaked vs held-out.

The "bulk share" column is the share of questions the product's null holds (1.00: one normal fits
best, so nothing stands out as a tail). Nulls, with x = a question's score, y = its twin's, d = x - y:

* ``mirror0``: the earlier design: flag d above the 95th percentile of -d;
* ``twins``: flag x above the 95th percentile of the twins' scores shifted by the median of d;
* ``bulk``: flag x above the 95th percentile of the never-seen bulk (``contamcheck.stats.bulk``);
* ``bulk>=0.4``, ``bulk>=0.5``: the same, but the null must hold at least 40% or half of the
  questions (the product's ``MIN_BULK_SHARE`` is 0.3; Efron's empirical null assumes the
  never-seen questions are the majority);
* ``bulk_len`` (when the .npz has token counts): the same on x less a robust (Theil-Sen) line in
  log token count, for benchmarks whose scores depend on length.

    python experiments/nulls.py experiments/runs/familiarity-gsm8k-seed1.npz \\
        > docs/validation/nulls-gsm8k-seed1-tuning.md
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import theilslopes
from validate import auroc

from contamcheck.stats.bulk import bulk_tail_test, fit_bulk, threshold_of

Q = 0.95
STATISTICS = {"zlib": "zlib", "min_k": "Min-K%", "min_k_pp": "Min-K%++"}
SHARES = (0.4, 0.5)
MODELS = ("base", "other-family", "clean-similar", "leak-1", "leak-3", "leak-10")


def signed_log(x: np.ndarray) -> np.ndarray:
    return np.sign(x) * np.log1p(np.abs(x))


def paired_scores(data: Any, model: str, key: str, reference: str | None) -> tuple[np.ndarray, np.ndarray]:
    """A model's per-question scores and its twins', on the product's scale, less the reference's."""
    x = data[f"{model}|{key}"]
    y = x - data[f"{model}|{key}:twin_diff"]
    if key == "min_k_pp":
        x, y = signed_log(x), signed_log(y)
    if reference:
        rx, ry = paired_scores(data, reference, key, None)
        x, y = x - rx, y - ry
    return x, y


def per_split(script: str, table: Callable[[Any], None]) -> None:
    """Print ``table`` for each tuning split's .npz named on the command line, with the command."""
    warnings.simplefilter("ignore")
    paths = [Path(arg) for arg in sys.argv[1:]]
    print("Tuning splits only (never seed 0, the reported one). Made by:\n")
    print(f"```bash\npython experiments/{script} " + " ".join(map(str, paths)) + "\n```")
    for path in paths:
        name, seed = path.stem.removeprefix("familiarity-").rsplit("-seed", 1)
        print(f"\n{name}, seed {seed}\n")
        table(np.load(path))


def length_adjusted(x: np.ndarray, tokens: np.ndarray) -> np.ndarray:
    """x less a robust line in log token count (Theil-Sen: a leaked half does not tilt it)."""
    slope, _, _, _ = theilslopes(x, np.log(tokens))
    return x - slope * np.log(tokens)


def flags_of(x: np.ndarray, y: np.ndarray, tokens: np.ndarray | None) -> dict[str, np.ndarray]:
    d = x - y
    flags = {
        "mirror0": d > np.quantile(-d, Q),
        "twins": x > np.quantile(y + np.median(d), Q),
        "bulk": bulk_tail_test(x, 2000).flags,
    }
    for share in SHARES:
        flags[f"bulk>={share}"] = x > threshold_of(fit_bulk(x, min_share=share))
    if tokens is not None:
        flags["bulk_len"] = bulk_tail_test(length_adjusted(x, tokens), 2000).flags
    return flags


def main() -> None:
    warnings.simplefilter("ignore")
    data = np.load(sys.argv[1])
    leaked = data["is_leaked"]
    tokens = data["base|num_tokens"] if "base|num_tokens" in data.files else None
    extra = " bulk_len |" if tokens is not None else ""
    shares = "".join(f" bulk>={share} |" for share in SHARES)
    print("| statistic | reference | model | AUROC | bulk share | mirror0 | twins | bulk |" + shares + extra)
    print("|---|---|---|---|---|---|---|---|" + "---|" * (len(SHARES) + bool(extra)))
    for key, label in STATISTICS.items():
        for reference in (None, "other-family", "base"):
            for model in MODELS:
                needed = [f"{model}|{key}"] + ([f"{reference}|{key}"] if reference else [])
                missing = any(name not in data.files for name in needed)
                if model == reference or missing:
                    continue
                x, y = paired_scores(data, model, key, reference)
                cells = []
                for flags in flags_of(x, y, tokens).values():
                    if model.startswith("leak"):
                        cells.append(f"{flags[leaked].mean():.0%} / {flags[~leaked].mean():.0%}")
                    else:
                        cells.append(f"{flags.mean():.0%}")
                area = f"{auroc(list(x[leaked]), list(x[~leaked])):.2f}" if model.startswith("leak") else ""
                share = f"{fit_bulk(x).bulk_share:.2f}"  # the null's share of the questions (1: one normal)
                row = [label, reference or "none", model, area, share, *cells]
                print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()

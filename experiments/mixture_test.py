"""Is BIC's margin too strict? The bulk null's mixture rule against a calibrated likelihood-ratio test.

The product keeps a two-normal mixture (a tail above the bulk) when its gain, twice the
log-likelihood it adds to one normal's (``bulk.candidates``, with the share and tail rules),
exceeds ``bulk.mixture_cut``: BIC's penalty 3 log n plus a margin of 10, about 25 at the sizes
here. Under a normal bulk with no tail the gain's 99th percentile is about 10, so a mixture that a
calibrated test at 1% would accept can be missed.
This measures, on tuning splits (seeds 1 and 2; familiarity.py's .npz), what a parametric-bootstrap
likelihood-ratio test at 1% and 0.1% would change, and, on normal samples, what it would cost: how
often a clean benchmark would then be read as a tail, and how many of its questions that tail flags
(which bounds the smallest p-value a flag count can reach).

    python experiments/mixture_test.py experiments/runs/familiarity-{gsm8k,humaneval}-seed{1,2}.npz \\
        > docs/validation/mixture-test-tuning.md
"""

from __future__ import annotations

import functools
import sys
import warnings
from pathlib import Path

import numpy as np
from nulls import STATISTICS, paired_scores

from contamcheck.stats import bulk

DRAWS = 10_000
SIZES = {"gsm8k": 195, "humaneval": 132}
MODELS = ("base", "clean-similar", "leak-1", "leak-3")
RULES = ("BIC + margin", "LRT at 1%", "LRT at 0.1%")


def flags_for(values: np.ndarray, fits: bulk.Candidates, cut: float) -> np.ndarray:
    """Flags when the mixture is kept above ``cut`` (rows of values, fitted once by ``bulk.candidates``)."""
    mixture = fits.gain > cut
    centre = np.where(mixture, fits.null_mean, fits.mean)
    scale = np.where(mixture, fits.null_sd, fits.sd)
    return values > (centre + bulk.TAIL_BEYOND * scale)[:, None]


@functools.cache
def calibrate(n: int) -> tuple[np.ndarray, dict[str, float]]:
    """The gains of DRAWS normal samples of size n, and each rule's cut (printed once per n)."""
    sample = np.random.default_rng(0).standard_normal((DRAWS, n))
    fits = bulk.candidates(sample)
    gain = fits.gain
    cuts = {
        RULES[0]: bulk.mixture_cut(n),
        RULES[1]: float(np.quantile(gain, 0.99)),
        RULES[2]: float(np.quantile(gain, 0.999)),
    }
    print(f"\n**n = {n}** ({DRAWS:,} normal samples, no tail)\n")
    print("| rule | mixture kept above a gain of | clean samples read as a tail | flagging ≥ 25% | ≥ 40% |")
    print("|---|---|---|---|---|")
    for rule, cut in cuts.items():
        share = flags_for(sample, fits, cut).mean(axis=1)
        print(
            f"| {rule} | {cut:.1f} | {np.mean(gain > cut):.2%} | {np.mean(share >= 0.25):.2%} | "
            f"{np.mean(share >= 0.4):.2%} |"
        )
    return np.sort(gain), cuts


def main() -> None:
    warnings.simplefilter("ignore")
    paths = [Path(arg) for arg in sys.argv[1:]]
    print(
        "The bulk null's mixture rule (BIC + margin, the product's) against a parametric-bootstrap "
        "likelihood-ratio test, on tuning splits only (never seed 0, the reported one). Made by:\n"
    )
    print("```bash\npython experiments/mixture_test.py " + " ".join(map(str, paths)) + "\n```")
    for path in paths:
        name, seed = path.stem.removeprefix("familiarity-").rsplit("-seed", 1)
        data = np.load(path)
        leaked = data["is_leaked"].astype(bool)
        gains, cuts = calibrate(SIZES[name])
        print(f"\n{name}, seed {seed}: the mixture's gain, its bootstrap p-value, and the flags under")
        print("each rule (leaked / held-out for contaminated models)\n")
        print("| statistic | reference | model | gain | p of the gain | " + " | ".join(RULES) + " |")
        print("|---|---|---|---|---|" + "---|" * len(RULES))
        for key, label in STATISTICS.items():
            for reference in (None, "base"):
                for model in MODELS:
                    if model == reference:
                        continue
                    values, _ = paired_scores(data, model, key, reference)
                    row = values[None, :].astype(np.float64)
                    fits = bulk.candidates(row)
                    gain = float(fits.gain[0])
                    above = len(gains) - int(np.searchsorted(gains, gain, side="left"))
                    p = f"{above / len(gains):.2g}" if above else f"< {1 / len(gains):.2g}"
                    p = p if gain else ""
                    cells = []
                    for cut in cuts.values():
                        flags = flags_for(row, fits, cut)[0]
                        cells.append(
                            f"{flags[leaked].mean():.0%} / {flags[~leaked].mean():.0%}"
                            if model.startswith("leak")
                            else f"{flags.mean():.0%}"
                        )
                    row_label = f"| {label} | {reference or 'none'} | {model} | {gain:.1f} | {p} |"
                    print(row_label + " " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()

"""Where the bulk null kept a tail: how far up it sits, how wide it is, how much it gained.

For every likelihood test of every saved audit (``validate.py``'s or ``contamcheck -o``'s JSON
reports) whose scores the product's fit splits into a bulk and a tail, it prints the tail's centre
above the bulk's in the bulk's SDs, its width over the bulk's, the bulk's share, and the mixture's
gain over one normal against the cut it had to beat (BIC's price and the margin). Where the
folder's split is saved beside it, also the mean of the report's per-question probability of
memorisation (``stats.bulk.memorised_probability``) over the leaked and the held-out questions:
how well that probability is calibrated where the truth is known.

With ``--rejected``, instead: where the product fits one normal, the best mixture it turned down
and which rule turned it down (its gain short of the cut, a bulk under ``MIN_BULK_SHARE``, or an
upper centre short of the bulk's flag threshold, ``TAIL_BEYOND`` SDs up).

    python experiments/tail_shapes.py docs/validation/*/ docs/validation/other-reference/*/
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from reanalyse import saved_audits, scores_of

from contamcheck.stats.bulk import (
    MIN_BULK_SHARE,
    TAIL_BEYOND,
    candidates,
    fit_bulk,
    memorised_probability,
    mixture_cut,
)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--rejected", action="store_true", help="the mixtures turned down, and why")
    args = parser.parse_args(argv)
    if args.rejected:
        rejected(args.folders)
        return
    print(
        "| audit | test | questions | tail above the bulk (SDs) | tail width / bulk's | "
        "bulk share | gain / cut | mean P(memorised), leaked / held-out |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for folder, path, report, leaked in saved_audits(args.folders):
        for result in report.tests:
            if result.kind != "bulk" or result.null is None:
                continue
            ids, _, x, _ = scores_of(report, result)
            fits = candidates(x)
            cut = mixture_cut(len(x))
            if fits.gain[0] <= cut:
                continue
            above = (fits.tail_mean[0] - fits.null_mean[0]) / fits.null_sd[0]
            memorised = memorised_probability(x, fit_bulk(x))
            seen = np.array([i in leaked for i in ids])
            calibration = (
                f"{memorised[seen].mean():.2f} / {memorised[~seen].mean():.2f}"
                if memorised is not None and "leak" in path.stem and seen.any() and (~seen).any()
                else ""
            )
            print(
                f"| {folder.name}/{path.stem} | {result.name} | {len(x)} | {above:.1f} | "
                f"{fits.tail_sd[0] / fits.null_sd[0]:.2f} | {fits.null_share[0]:.2f} | "
                f"{fits.gain[0]:.0f} / {cut:.0f} | {calibration} |"
            )


def rejected(folders: list[Path]) -> None:
    print(
        "| audit | test | questions | upper centre above the bulk (SDs) | bulk share | gain / cut "
        "| turned down by |"
    )
    print("|---|---|---|---|---|---|---|")
    for folder, path, report, _ in saved_audits(folders):
        for result in report.tests:
            if result.kind != "bulk" or result.null is None or result.null.components != 1:
                continue
            _, _, x, _ = scores_of(report, result)
            best = candidates(x, min_share=0.0, tail_beyond=-np.inf)  # the EM's mixture, no rule applied
            above = (best.tail_mean[0] - best.null_mean[0]) / best.null_sd[0]
            cut = mixture_cut(len(x))
            reasons = [
                reason
                for reason, applies in (
                    ("gain", best.gain[0] <= cut),
                    (f"bulk share < {MIN_BULK_SHARE:g}", best.null_share[0] < MIN_BULK_SHARE),
                    (f"centre < {TAIL_BEYOND:.3f} SDs", above < TAIL_BEYOND),
                )
                if applies
            ]
            shown = f"{above:.2f}" if abs(above) < 100 else "(degenerate)"  # a lower part of a few points
            print(
                f"| {folder.name}/{path.stem} | {result.name} | {len(x)} | {shown} | "
                f"{best.null_share[0]:.2f} | {best.gain[0]:.0f} / {cut:.0f} | {', '.join(reasons)} |"
            )


if __name__ == "__main__":
    main()

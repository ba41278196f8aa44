"""How many leaked questions can any flag rule catch at a given ranking quality? A bound, no model.

The issue "Memorised questions, not domain familiarity" asks, without a reference, for at least 30%
of a once-seen half to be flagged while at most 10% of the never-seen half is. The best score
without a second model ranks the one-pass leak at AUROC 0.76-0.79 (zlib; docs/METHODS.md). This
asks what that ranking allows in the best case: scores of the two halves normal with one spread
(the binormal model, whose AUROC is Phi(d / sqrt 2) for a separation of d spreads), and the
never-seen half's distribution known exactly, which no audit has (the bulk null estimates it from a
benchmark of which half may be leaked). Printed per AUROC: the share of the leaked half flagged
when 5% or 10% of the never-seen half is; and under the audit's rule that a flag needs the question
to be four times as likely memorised as not (with half the questions leaked, the likelihood ratio
at least 4), what that rule flags of each half; and how much of the never-seen half must be
flagged to catch 30% of the leaked one, with the odds that a question at that threshold was seen.

    python experiments/one_pass_bound.py --out docs/validation/one-pass-bound.md
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from scipy.stats import norm

ODDS = 4.0  # a flag needs four to one (docs/METHODS.md, "A flag needs four to one")


def bound(auroc: float) -> dict[str, float]:
    separation = math.sqrt(2) * norm.ppf(auroc)
    # equal halves: the posterior odds are the likelihood ratio exp(d x - d^2 / 2)
    threshold = (math.log(ODDS) + separation**2 / 2) / separation
    return {
        "separation": separation,
        "at 5%": float(norm.cdf(separation - norm.ppf(0.95))),
        "at 10%": float(norm.cdf(separation - norm.ppf(0.90))),
        "rule held-out": float(norm.sf(threshold)),
        "rule leaked": float(norm.sf(threshold - separation)),
        "held-out for 30%": float(norm.sf(separation - norm.ppf(0.30))),
        # the odds that a question at that threshold was memorised (equal halves)
        "odds for 30%": math.exp(separation * (separation - norm.ppf(0.30)) - separation**2 / 2),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, help="write the table here (Markdown)")
    args = parser.parse_args(argv)
    lines = [
        "| AUROC | separation (spreads) | leaked flagged at 5% held-out | at 10% held-out | "
        "four-to-one rule: held-out / leaked | held-out flagged for 30% of the leaked | "
        "odds at that threshold |",
        "|---|---|---|---|---|---|---|",
    ]
    for auroc in (0.72, 0.76, 0.79, 0.85, 0.90):
        row = bound(auroc)
        lines.append(
            f"| {auroc:.2f} | {row['separation']:.2f} | {row['at 5%']:.0%} | {row['at 10%']:.0%} | "
            f"{row['rule held-out']:.0%} / {row['rule leaked']:.0%} | {row['held-out for 30%']:.1%} | "
            f"{row['odds for 30%']:.1f} to 1 |"
        )
    table = "\n".join(lines)
    print(table)
    if args.out:
        command = f"python experiments/one_pass_bound.py --out {args.out}"
        heading = "# What a ranking allows: flags at a known null (binormal, equal halves)"
        args.out.write_text(f"{heading}\n\n`{command}`\n\n{table}\n", encoding="utf-8")


if __name__ == "__main__":
    main()

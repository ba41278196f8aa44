"""Where the bulk null kept a tail: how far up it sits, how wide it is, how much it gained.

For every likelihood test of every saved audit (``validate.py``'s or ``contamcheck -o``'s JSON
reports) whose scores the product's fit splits into a bulk and a tail, it prints the tail's centre
above the bulk's in the bulk's SDs, its width over the bulk's, the bulk's share, and the mixture's
gain over one normal against the cut it had to beat (BIC's price and the margin).

    python experiments/tail_shapes.py docs/validation/*/ docs/validation/other-reference/*/
"""

from __future__ import annotations

import argparse
from pathlib import Path

from reanalyse import scores_of

from contamcheck import Report
from contamcheck.stats.bulk import candidates, mixture_cut


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("folders", nargs="+", type=Path)
    args = parser.parse_args(argv)
    print(
        "| audit | test | questions | tail above the bulk (SDs) | tail width / bulk's | "
        "bulk share | gain / cut |"
    )
    print("|---|---|---|---|---|---|---|")
    for folder in args.folders:
        for path in sorted(folder.glob("*.json")):
            report = Report.model_validate_json(path.read_text())
            for result in report.tests:
                if result.kind != "bulk" or result.null is None:
                    continue
                x = scores_of(report, result)[2]
                fits = candidates(x)
                cut = mixture_cut(len(x))
                if fits.gain[0] <= cut:
                    continue
                above = (fits.tail_mean[0] - fits.null_mean[0]) / fits.null_sd[0]
                print(
                    f"| {folder.name}/{path.stem} | {result.name} | {len(x)} | {above:.1f} | "
                    f"{fits.tail_sd[0] / fits.null_sd[0]:.2f} | {fits.null_share[0]:.2f} | "
                    f"{fits.gain[0]:.0f} / {cut:.0f} |"
                )


if __name__ == "__main__":
    main()

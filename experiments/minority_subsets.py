"""In random subsets of saved audits: how often a test's fitted null is a minority, and what it flagged.

For each saved audit with a split (leaked / held-out), per likelihood test and subset size: how
many of the draws fit a tail, how many of those a null under 40% of the questions (whose flags the
product withholds, ``stats.bulk.minority``), the fitted null's share (range and median), and the
median share of held-out questions above the threshold in the minority fits (the flags withheld)
and, to compare, in the majority fits, and the leaked questions' in the minority fits. The draws
are this script's own (not ``sample_size.py``'s), drawn the same way: random subsets of the size.

    python experiments/minority_subsets.py docs/validation/sample-size/gsm8k-seed3 \\
        docs/validation/sample-size/gsm8k-seed6 --pattern 'reference-leak-1.json'
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from reanalyse import saved_audits, scores_of

from contamcheck.stats.bulk import fit_bulk, minority, threshold_of


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--pattern", default="*.json", help="which saved audits in the folders")
    parser.add_argument("--sizes", nargs="+", type=int, default=[200, 400])
    parser.add_argument("--draws", type=int, default=100)
    args = parser.parse_args(argv)
    print(
        "| audit | test | questions | tail fitted | minority null | null's share: range (median) "
        "| held-out above the threshold: minority fits (median) | majority fits "
        "| leaked above, minority fits |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for folder, path, report, leaked in saved_audits(args.folders, args.pattern):
        if not leaked:
            continue
        for result in report.tests:
            if result.kind != "bulk" or result.null is None:
                continue
            ids, _, values, _ = scores_of(report, result)
            never_seen = np.array([i not in leaked for i in ids])
            rng = np.random.default_rng(0)
            for size in [s for s in args.sizes if s < len(values)]:
                shares: list[float] = []
                withheld: list[float] = []
                kept: list[float] = []
                leaked_above: list[float] = []
                for _ in range(args.draws):
                    pick = rng.choice(len(values), size, replace=False)
                    fit = fit_bulk(values[pick])
                    if fit.components < 2:
                        continue
                    shares.append(fit.bulk_share)
                    unseen = values[pick][never_seen[pick]]
                    above = float(np.mean(unseen > threshold_of(fit)))
                    if minority(fit):
                        withheld.append(above)
                        seen = values[pick][~never_seen[pick]]
                        leaked_above.append(float(np.mean(seen > threshold_of(fit))))
                    else:
                        kept.append(above)
                spread = f"{min(shares):.2f}–{max(shares):.2f} ({np.median(shares):.2f})" if shares else ""

                def median(rates: list[float]) -> str:
                    return f"{np.median(rates):.0%}" if rates else ""

                print(
                    f"| {folder.name}/{path.stem} | {result.name} | {size} | {len(shares)}/{args.draws} | "
                    f"{len(withheld)}/{args.draws} | {spread} | {median(withheld)} | {median(kept)} | "
                    f"{median(leaked_above)} |"
                )


if __name__ == "__main__":
    main()

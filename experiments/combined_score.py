"""Would one score from all three likelihood tests rank a light leak better than the best of them?

For every saved audit of a contaminated model whose split is saved beside its folder: the AUROC of
leaked vs held-out questions for each likelihood test's per-question score, and for their mean
after each is put on a common robust scale (less its median, over 1.4826 times its median absolute
deviation; fixed before the run, not chosen among others), over the questions all of them scored
(where an audit ran two of the three tests, those two). Also the tests' rank correlations: three
views of the same token log-probabilities, so averaging them can only take out the part of their
noise they do not share.

    python experiments/combined_score.py docs/validation/gsm8k-seed0 docs/validation/humaneval-seed0 \\
        docs/validation/other-reference/* docs/validation/sample-size/gsm8k-* docs/validation/gemma-tested/*
"""

from __future__ import annotations

import sys
from itertools import combinations
from pathlib import Path

import numpy as np
from null_skew import BULK_TESTS as TESTS
from reanalyse import saved_audits, scores_of
from scipy.stats import spearmanr
from validate import auroc


def area(scores: np.ndarray, seen: np.ndarray) -> str:
    """The AUROC of the leaked questions' scores against the held-out ones', as the table prints it."""
    return f"{auroc(list(scores[seen]), list(scores[~seen])):.2f}"


def robust_z(x: np.ndarray) -> np.ndarray:
    """Less the median, over the scaled median absolute deviation (the SD where half the scores tie)."""
    median = np.median(x)
    scale = 1.4826 * np.median(np.abs(x - median)) or x.std()
    return (x - median) / scale if scale > 0 else np.zeros_like(x)


def main(argv: list[str] | None = None) -> None:
    folders = [Path(p) for p in (sys.argv[1:] if argv is None else argv) if Path(p).is_dir()]
    print("| audit | questions | " + " | ".join(TESTS) + " | combined | rank correlations |")
    print("|---|---|" + "---|" * len(TESTS) + "---|---|")
    done: set[str] = set()
    for folder, path, report, leaked in saved_audits(folders, "*leak-*.json"):
        audit = f"{folder.name}/{path.stem}"
        # By folder and file name: other-reference/gsm8k-seed0's default and reference audits are of
        # models rebuilt from gsm8k-seed0's recipe, nearly the same, and the first folder given wins.
        if not leaked or audit in done:
            continue
        done.add(audit)
        per_test: dict[str, dict[str, float]] = {}
        for result in report.tests:
            if result.name in TESTS and result.status != "skipped" and result.null is not None:
                ids, _, values, _ = scores_of(report, result)
                per_test[result.name] = dict(zip(ids, values.tolist(), strict=True))
        names = [name for name in TESTS if name in per_test]
        if len(names) < 2:  # a control-setting audit judges against its controls: no bulk null
            continue
        common = sorted(set.intersection(*(set(per_test[name]) for name in names)))
        seen = np.array([i in leaked for i in common])
        if seen.all() or not seen.any():
            continue
        columns = {name: np.array([per_test[name][i] for i in common]) for name in names}
        combined = np.mean([robust_z(x) for x in columns.values()], axis=0)
        correlations = ", ".join(
            f"{a}·{b} {spearmanr(columns[a], columns[b])[0]:.2f}" for a, b in combinations(names, 2)
        )

        aurocs = " | ".join(area(columns[n], seen) if n in columns else "" for n in TESTS)
        print(f"| {audit} | {len(common)} | {aurocs} | {area(combined, seen)} | {correlations} |")


if __name__ == "__main__":
    main()

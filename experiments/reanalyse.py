"""Re-apply the current bulk null to the per-question scores of saved reports: no model needed.

When the null's rule changes after the reported split was run (``stats/bulk.py``), this shows what
the change does to every saved audit: the rule then (the report as saved) against the rule now,
on the same scores, per likelihood test. Flags and p-values are recomputed the way the pipeline
computes them (``bulk_tail_test`` on each question's score, less the reference's where the
audit had one, as the report stores it).

    python experiments/reanalyse.py docs/validation/gsm8k-seed0 docs/validation/humaneval-seed0
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from contamcheck import Report
from contamcheck.pipeline.runners import BULK_SIMULATIONS
from contamcheck.stats.bulk import bulk_tail_test


def scores_of(report: Report, test: str) -> np.ndarray:
    values = []
    for item in report.items:
        entry = item.tests.get(test)
        if item.is_control or entry is None or entry.flagged is None or entry.score is None:
            continue
        values.append(entry.score)  # already less the reference's, where there is one
    return np.array(values)


def main() -> None:
    print("| audit | test | flagged then | flagged now | p then | p now | null's share then / now |")
    print("|---|---|---|---|---|---|---|")
    for folder in map(Path, sys.argv[1:]):
        for path in sorted(folder.glob("*.json")):
            report = Report.model_validate_json(path.read_text())
            for result in report.tests:
                if result.kind != "bulk" or result.null is None:
                    continue
                x = scores_of(report, result.name)
                now = bulk_tail_test(x, BULK_SIMULATIONS)
                then = result.n_flagged
                changed = "" if int(now.flags.sum()) == then else " **changed**"
                print(
                    f"| {folder.name}/{path.stem} | {result.name} | {then}/{result.n} | "
                    f"{int(now.flags.sum())}/{len(x)}{changed} | {result.p_value:.2g} | {now.p_value:.2g} | "
                    f"{result.null.bulk_share:.2f} / {now.fit.bulk_share:.2f} |"
                )


if __name__ == "__main__":
    main()

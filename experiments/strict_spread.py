"""The stricter design, measured and not built: with a reference, let the spread test alone decide.

Since 2026-12-06 a likelihood test with a reference withholds a tail that stands out with its twins
(``stats.spread.shared_with_twins``: tail count p < 0.05, spread test p >= 0.05). A kind-lifted tail
still counts whenever the twins lean the same way by chance. The stricter design gives every such
test the spread test's p-value alone (the tail only names questions), which no kind-lifted tail can
pass more often than alpha. This re-judges every saved audit with a reference both ways, on the
saved per-question scores (as ``reanalyse.py``), and prints the audits whose verdict would differ,
with each likelihood test's tail and spread p-values.

    python experiments/strict_spread.py docs/validation/gsm8k-seed0 docs/validation/humaneval-seed0 ...
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from reanalyse import apply, rejudged, saved_audits, scores_of

from contamcheck.stats import judge


def main() -> None:
    print("| audit | verdict (current rule) | verdict (spread alone) | tail p / spread p per test |")
    print("|---|---|---|---|")
    for folder, path, report, _ in saved_audits(map(Path, sys.argv[1:])):
        if report.reference.status != "used":
            continue
        current = report.model_copy(deep=True)
        strict = report.model_copy(deep=True)
        pairs = []
        for now, alone in zip(current.tests, strict.tests, strict=True):
            if now.kind != "bulk" or now.null is None:
                continue
            _, _, x, twins = scores_of(report, now)
            if not len(x):
                continue
            again = rejudged(report, x, twins)
            apply(now, again, len(x))
            apply(alone, again, len(x))
            if again.spread is not None:
                # the spread alone (not doubled); the tail still names questions where the current
                # rule keeps it, and decides nothing: its p is set to 1, so the verdict reads the
                # test's p-value as the spread test's (``carries``)
                alone.p_value, alone.min_attainable_p = again.spread.p_value, again.spread.min_attainable_p
                assert alone.null is not None
                alone.null.tail_p_value = 1.0
                pairs.append(f"{now.name} {again.tail.p_value:.2g} / {again.spread.p_value:.2g}")
        before = judge(current.tests, report.settings.alpha)
        after = judge(strict.tests, report.settings.alpha)
        if before.code != after.code:
            audit = f"{folder.parent.name}/{folder.name}/{path.stem}".removeprefix("validation/")
            print(f"| {audit} | {before.label} | {after.label} | {'; '.join(pairs)} |")


if __name__ == "__main__":
    main()

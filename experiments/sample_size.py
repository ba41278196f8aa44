"""How does a likelihood test's p-value grow with the number of questions audited? Measure.

One pass over half a benchmark lifts the leaked questions a little (AUROC 0.85-0.93 against the
held-out half with a reference) but leaves no tail apart from the bulk, so at 200 questions no test
reaches p < 0.001 (docs/VALIDATION.md). The spread test against the twins gains power with the
number of questions; whether enough, and from how many, is what this measures.

It reads saved audits (``validate.py``'s JSON reports, one folder per split) of a split with many
questions, and for every likelihood test and every size in ``--sizes`` draws ``--draws`` random
subsets of the questions and computes the test's p-value on each as the product does: the bulk
null's tail count, and with a reference also the spread test against the first twins, twice the
smaller. The last row of each audit is all its questions, one draw: the audit as run. No model is
needed.

Per audit and size it prints, for each test, the median p over the draws (and, where the bulk's
fit found a second component, a tail, in how many draws), and for the audit the share of draws in
which its best test is significant after Holm's correction for the tests run (p x tests < alpha:
"caught") and, for a model that never saw the questions, at 0.05 ("a false alarm at the 5% level").

    python experiments/sample_size.py docs/validation/sample-size/gsm8k-seed3 --sizes 100 200 300 400
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from reanalyse import scores_of, split_of

from contamcheck import Report
from contamcheck.pipeline.runners import BULK_SIMULATIONS
from contamcheck.stats.bulk import bulk_tail_test
from contamcheck.stats.spread import spread_test, with_spread


def p_value(
    x: np.ndarray, twins: np.ndarray | None, swaps: int, seed: int, tables: Path
) -> tuple[float, bool]:
    """The product's p-value for a likelihood test on these scores (see ``pipeline/runners.py``),
    and whether the bulk's fit found a tail (a second component)."""
    tail = bulk_tail_test(x, BULK_SIMULATIONS, tables=tables)
    found = tail.fit.components > 1
    if twins is None:
        return tail.p_value, found
    paired = np.isfinite(twins)
    spread = spread_test(x[paired], twins[paired], swaps, seed)
    return with_spread(tail.p_value, tail.min_attainable_p, spread)[0], found


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--sizes", nargs="+", type=int, default=[100, 200, 300, 400])
    parser.add_argument("--draws", type=int, default=20)
    parser.add_argument("--tables", type=Path, default=Path("experiments/runs/cache/tables"))
    args = parser.parse_args(argv)
    print("| audit | questions | median p per test | best test significant after Holm, share of draws |")
    print("|---|---|---|---|")
    for folder in args.folders:
        split = split_of(folder)
        leaked = set(split["leaked"]) if split else set()
        for path in sorted(folder.glob("*.json")):
            report = Report.model_validate_json(path.read_text())
            tests = [r for r in report.tests if r.kind == "bulk" and r.null is not None]
            if not tests:
                continue
            alpha, swaps = report.settings.alpha, report.settings.permutations
            with_reference = report.reference.status == "used"
            scored = [scores_of(report, result) for result in tests]
            ids = sorted(set.intersection(*(set(s[0]) for s in scored)))
            # never seen: a model with no leaked question among these, or the base itself
            seen_any = any(i in leaked for i in ids) and "leak" in path.stem
            bar = alpha if seen_any else 0.05
            rng = np.random.default_rng(0)
            for size in [s for s in args.sizes if s < len(ids)] + [len(ids)]:
                draws = 1 if size == len(ids) else args.draws
                ps = np.empty((draws, len(tests)))
                tails = np.zeros((draws, len(tests)), dtype=bool)
                for d in range(draws):
                    chosen = set(rng.choice(ids, size, replace=False)) if draws > 1 else set(ids)
                    for t, (test_ids, _, x, twins) in enumerate(scored):
                        keep = np.array([i in chosen for i in test_ids])
                        ps[d, t], tails[d, t] = p_value(
                            x[keep],
                            twins[keep] if with_reference else None,
                            swaps,
                            report.settings.seed,
                            args.tables,
                        )
                medians = ", ".join(
                    f"{r.name} {np.median(ps[:, t]):.2g}"
                    + (f" (tail fitted in {np.mean(tails[:, t]):.0%})" if tails[:, t].any() else "")
                    for t, r in enumerate(tests)
                )
                hits = float(np.mean(ps.min(axis=1) * len(report.tests) < bar))
                what = f"caught at {alpha:g}" if seen_any else "false alarm at 0.05"
                print(
                    f"| {folder.name}/{path.stem} | {size}{'' if draws > 1 else ' (all)'} | "
                    f"{medians} | {hits:.0%} {what} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()

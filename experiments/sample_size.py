"""How do an audit's likelihood tests and verdict change with the number of questions? Measure.

One pass over half a benchmark lifts the leaked questions a little (AUROC 0.85-0.93 against the
held-out half with a reference), and at 200 questions no test reaches p < 0.001
(docs/VALIDATION.md). Tests gain power with the number of questions, and so does any small flaw in
their nulls; how much of each, and from how many questions, is what this measures.

It reads saved audits (``validate.py``'s JSON reports, one folder per split, the split's file
beside it) and for every size in ``--sizes`` draws ``--draws`` random subsets of the questions and
computes each likelihood test's result on each as the product does (the bulk null's tail count,
and with a reference also the spread test against the first twins, twice the smaller p), then the
verdict by the product's rule, the audit's other tests (completion, ...) as they were run. The
last row of each audit is all its questions, one draw: the audit as run. No model is needed.

Per audit and size it prints, for each likelihood test, the median p over the draws (and, where
the bulk's fit found a second component, a tail, in how many draws), and the share of draws for
each verdict. "(saw)" marks a model that saw some of these questions.

    python experiments/sample_size.py docs/validation/sample-size/gsm8k-seed3 --sizes 100 200 300 400
"""

from __future__ import annotations

import argparse
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from reanalyse import Rejudged, rejudged, saved_audits, scores_of

from contamcheck import Report
from contamcheck.stats import judge
from contamcheck.stats.flags import EXPECTED_RATE
from contamcheck.stats.verdict import VERDICT_LABELS


@dataclass(frozen=True)
class Outcome:
    """A likelihood test on a subset of the questions, as the verdict rule reads it."""

    name: str
    p_value: float | None  # None: a minority null's count withheld, and no spread test
    min_attainable_p: float | None
    flag_rate: float | None
    tail_fitted: bool
    aggregate_evidence: bool  # the spread test against the twins gave the p-value
    kind: str = "bulk"
    count_withheld: bool = False
    shared_with_twins: bool = False  # the count withheld because the tail stood out with its twins
    calibrated: bool = True
    expected_rate: float = EXPECTED_RATE


def outcome(name: str, report: Report, x: np.ndarray, twins: np.ndarray, tables: Path) -> Outcome:
    """The product's result for a likelihood test on these scores (``reanalyse.rejudged``)."""
    return outcome_of(name, rejudged(report, x, twins, tables))


def outcome_of(name: str, judged: Rejudged) -> Outcome:
    tail = judged.tail
    return Outcome(
        name,
        judged.p_value,
        judged.min_attainable_p,
        None if judged.withheld else float(np.mean(tail.flags)),
        tail.fit.components > 1,
        judged.carried,
        count_withheld=judged.withheld,
        shared_with_twins=judged.because == "twins",
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--sizes", nargs="+", type=int, default=[100, 200, 300, 400])
    parser.add_argument("--draws", type=int, default=20)
    parser.add_argument("--tables", type=Path, default=Path("experiments/runs/cache/tables"))
    args = parser.parse_args(argv)
    print("| audit | questions | median p per test | verdict, share of draws |")
    print("|---|---|---|---|")
    for folder, path, report, leaked in saved_audits(args.folders):
        tests = [r for r in report.tests if r.kind == "bulk" and r.null is not None]
        if not tests:
            continue
        others = [r for r in report.tests if r not in tests]  # as run: completion, guided, ...
        scored = [scores_of(report, result) for result in tests]
        ids = sorted(set.intersection(*(set(s[0]) for s in scored)))
        rng = np.random.default_rng(0)
        for size in [s for s in args.sizes if s < len(ids)] + [len(ids)]:
            draws = 1 if size == len(ids) else args.draws
            results: list[list[Outcome]] = []
            verdicts: Counter[str] = Counter()
            for _ in range(draws):
                chosen = set(rng.choice(ids, size, replace=False)) if draws > 1 else set(ids)
                drawn = []
                for result, (test_ids, _, x, twins) in zip(tests, scored, strict=True):
                    keep = np.array([i in chosen for i in test_ids])
                    drawn.append(outcome(result.name, report, x[keep], twins[keep], args.tables))
                results.append(drawn)
                verdicts[judge([*drawn, *others], report.settings.alpha).code] += 1
            medians = []
            for t, result in enumerate(tests):
                ps = [r[t].p_value for r in results if r[t].p_value is not None]
                withheld = np.mean([r[t].p_value is None for r in results])  # a minority null, no reference
                fitted = np.mean([r[t].tail_fitted for r in results])
                medians.append(
                    f"{result.name} {np.median(ps) if ps else float('nan'):.2g}"
                    + (f" (tail fitted in {fitted:.0%})" if fitted else "")
                    + (f" (could not judge in {withheld:.0%})" if withheld else "")
                )
            shares = ", ".join(
                f"{VERDICT_LABELS[code].lower()} {verdicts[code] / draws:.0%}"
                for code in ("likely", "evidence", "clean", "inconclusive")
                if verdicts[code]
            )
            seen = "leak" in path.stem and any(i in leaked for i in ids)
            print(
                f"| {folder.name}/{path.stem}{' (saw)' if seen else ''} | "
                f"{size}{'' if draws > 1 else ' (all)'} | {', '.join(medians)} | {shares} |",
                flush=True,
            )


if __name__ == "__main__":
    main()

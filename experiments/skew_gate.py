"""Should a tail have to beat a skewed bulk, not only a normal one? Measured on saved audits.

In a few random subsets of one similar-text model's audit with a reference (docs/VALIDATION.md,
"How many questions?"), Min-K%'s fit kept a broad shoulder of a right-skewed bulk as a tail, and
the verdict read "likely contaminated". The bulk null keeps a second component when the mixture
of two normals beats *one normal* by BIC's margin; a skewed bulk beats one normal too. The
candidate here: also ask the mixture to beat the best *skew-normal* (three parameters; the
mixture has five) by the same margin, 2 log n + ``BIC_MARGIN``, and judge the questions against
one normal where it does not. The verdict is the product's (the spread test beside the tail
count, with a reference); an approximation: the one-normal count's p-value is read from the same
simulated tables as the product's, made with its mixture rule.

For each audit with a reference, in ``--draws`` random subsets of each size and on all its
questions: the share of each verdict with the product's rule and with the gate, and on all the
questions the highest held-out flag rate of any test.

    python experiments/skew_gate.py docs/validation/sample-size/gsm8k-seed3 \\
        docs/validation/sample-size/gsm8k-1319 --sizes 400 --draws 100
"""

from __future__ import annotations

import argparse
import warnings
from collections import Counter
from pathlib import Path

import numpy as np
from reanalyse import saved_audits, scores_of
from sample_size import Outcome
from scipy import stats

from contamcheck import Report
from contamcheck.pipeline.runners import BULK_SIMULATIONS
from contamcheck.stats import bulk, judge
from contamcheck.stats.flags import EXPECTED_RATE
from contamcheck.stats.spread import carries, spread_test, with_spread


def mixture_beats_skew_normal(x: np.ndarray) -> bool:
    """Whether the best two-normal mixture beats the best skew-normal by BIC's price and margin."""
    fits = bulk.candidates(x)
    share = fits.null_share[0]
    density = share * bulk.normal_pdf(x, fits.null_mean[0], fits.null_sd[0]) + (1 - share) * bulk.normal_pdf(
        x, fits.tail_mean[0], fits.tail_sd[0]
    )
    mixture = float(np.log(density + 1e-300).sum())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy's optimiser warns on flat shapes; the fit stands
        shape, loc, scale = stats.skewnorm.fit(x)
    skewed = float(stats.skewnorm.logpdf(x, shape, loc, scale).sum())
    return 2 * (mixture - skewed) > 2 * np.log(len(x)) + bulk.BIC_MARGIN


def gated(x: np.ndarray, tables: Path) -> bulk.BulkOutcome:
    """The product's tail count, or one normal's where the tail does not beat a skewed bulk."""
    outcome = bulk.bulk_tail_test(x, BULK_SIMULATIONS, tables=tables)
    if outcome.fit.components == 1 or mixture_beats_skew_normal(x):
        return outcome
    fit = bulk.fit_bulk(x, min_share=1.01)  # no bulk can hold over all the questions: one normal
    threshold = bulk.threshold_of(fit)
    flags = x > threshold
    counts = bulk.null_flag_counts(len(x), BULK_SIMULATIONS, EXPECTED_RATE, 0, tables)
    margin = int(bulk.MIN_TAIL_SHARE * len(x))
    p, floor = bulk._tail_probability(counts, int(flags.sum()) - margin, len(x), margin)
    return bulk.BulkOutcome(threshold, flags, p, floor, len(counts), fit=fit)


def judged(
    report: Report, name: str, x: np.ndarray, twins: np.ndarray, gate: bool, tables: Path
) -> tuple[Outcome, np.ndarray]:
    """The test as the verdict reads it, under either rule, and its flags."""
    tail = gated(x, tables) if gate else bulk.bulk_tail_test(x, BULK_SIMULATIONS, tables=tables)
    paired = np.isfinite(twins)
    spread = spread_test(x[paired], twins[paired], report.settings.permutations, report.settings.seed)
    p, floor = with_spread(tail.p_value, tail.min_attainable_p, spread)
    carried = carries(tail.p_value, spread.p_value, spread.correlation)
    return Outcome(name, p, floor, float(np.mean(tail.flags)), tail.fit.components > 1, carried), tail.flags


def verdicts(
    report: Report,
    scored: list[tuple[str, tuple[list[str], list[bool], np.ndarray, np.ndarray]]],
    chosen: list[set[str]],
    leaked: set[str],
    gate: bool,
    tables: Path,
) -> tuple[Counter[str], float]:
    """The verdict on each set of chosen questions, and the highest held-out flag rate of any test
    on the last (reported for the audit on all its questions)."""
    counts: Counter[str] = Counter()
    held_out = 0.0
    for questions in chosen:
        drawn, held_out = [], 0.0
        for name, (test_ids, _, x, twins) in scored:
            keep = np.array([i in questions for i in test_ids])
            outcome, flags = judged(report, name, x[keep], twins[keep], gate, tables)
            drawn.append(outcome)
            unseen = np.array([i not in leaked for i in np.array(test_ids)[keep]])
            if leaked and unseen.any():
                held_out = max(held_out, float(np.mean(flags[unseen])))
        counts[judge(drawn, report.settings.alpha).code] += 1
    return counts, held_out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--sizes", nargs="+", type=int, default=[400])
    parser.add_argument("--draws", type=int, default=100)
    parser.add_argument("--tables", type=Path, default=Path("experiments/runs/cache/tables"))
    args = parser.parse_args(argv)
    print("| audit | questions | rule | verdict, share of draws | held-out flagged (all questions) |")
    print("|---|---|---|---|---|")
    for folder, path, report, leaked in saved_audits(args.folders, "reference-*.json"):
        scored = [(r.name, scores_of(report, r)) for r in report.tests if r.kind == "bulk" and r.null]
        ids = sorted(set.intersection(*(set(s[0]) for _, s in scored)))
        for gate in (False, True):
            rng = np.random.default_rng(0)  # the same subsets for both rules
            for size in [s for s in args.sizes if s < len(ids)] + [len(ids)]:
                whole = size == len(ids)
                chosen = (
                    [set(ids)]
                    if whole
                    else [set(rng.choice(ids, size, replace=False)) for _ in range(args.draws)]
                )
                counts, held_out = verdicts(report, scored, chosen, leaked, gate, args.tables)
                shares = ", ".join(f"{code} {n / len(chosen):.0%}" for code, n in counts.most_common())
                unseen = f"{held_out:.0%}" if whole and leaked and "leak" in path.stem else ""
                rule = "skew gate" if gate else "product"
                audit = f"{folder.name}/{path.stem}"
                print(f"| {audit} | {size}{' (all)' if whole else ''} | {rule} | {shares} | {unseen} |")


if __name__ == "__main__":
    main()

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
from reanalyse import Rejudged, rejudged, saved_audits, scores_of
from sample_size import Outcome, outcome_of
from scipy import stats

from contamcheck import Report
from contamcheck.pipeline.runners import BULK_SIMULATIONS
from contamcheck.stats import bulk, judge
from contamcheck.stats.flags import EXPECTED_RATE
from contamcheck.stats.spread import with_spread


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


def gated(x: np.ndarray, product: bulk.BulkOutcome, tables: Path) -> bulk.BulkOutcome:
    """The product's tail count, or one normal's where its tail does not beat a skewed bulk."""
    if product.fit.components == 1 or mixture_beats_skew_normal(x):
        return product
    fit = bulk.fit_bulk(x, min_share=1.01)  # no bulk can hold over all the questions: one normal
    threshold = bulk.threshold_of(fit)
    flags = x > threshold
    counts = bulk.null_flag_counts(len(x), BULK_SIMULATIONS, EXPECTED_RATE, 0, tables)
    margin = int(bulk.MIN_TAIL_SHARE * len(x))
    p, floor = bulk._tail_probability(counts, int(flags.sum()) - margin, len(x), margin)
    return bulk.BulkOutcome(threshold, flags, p, floor, len(counts), fit=fit)


def both_rules(report: Report, x: np.ndarray, twins: np.ndarray, tables: Path) -> tuple[Rejudged, Rejudged]:
    """The product's result and the gated one, sharing the spread test (the gate does not touch it)."""
    product = rejudged(report, x, twins, tables)
    tail = gated(x, product.tail, tables)
    if tail is product.tail:
        return product, product
    if product.spread is None:  # the base as its own reference: an audit without one
        return product, Rejudged(tail, tail.p_value, tail.min_attainable_p, None)
    return product, Rejudged(
        tail, *with_spread(tail.p_value, tail.min_attainable_p, product.spread), product.spread
    )


def verdicts(
    report: Report,
    scored: list[tuple[str, tuple[list[str], list[bool], np.ndarray, np.ndarray]]],
    chosen: list[set[str]],
    leaked: set[str],
    tables: Path,
) -> list[tuple[Counter[str], float]]:
    """Per rule (the product's, the gate), the verdict on each set of chosen questions, and the
    highest held-out flag rate of any test on the last (reported for the audit on all its questions)."""
    counts: list[Counter[str]] = [Counter(), Counter()]
    held_out = [0.0, 0.0]
    for questions in chosen:
        drawn: list[list[Outcome]] = [[], []]
        held_out = [0.0, 0.0]
        for name, (test_ids, _, x, twins) in scored:
            keep = np.array([i in questions for i in test_ids])
            unseen = np.array([i not in leaked for i in np.array(test_ids)[keep]])
            for rule, judged in enumerate(both_rules(report, x[keep], twins[keep], tables)):
                drawn[rule].append(outcome_of(name, judged))
                if leaked and unseen.any():
                    held_out[rule] = max(held_out[rule], float(np.mean(judged.flags[unseen])))
        for rule in (0, 1):
            counts[rule][judge(drawn[rule], report.settings.alpha).code] += 1
    return list(zip(counts, held_out, strict=True))


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
        rng = np.random.default_rng(0)
        for size in [s for s in args.sizes if s < len(ids)] + [len(ids)]:
            whole = size == len(ids)
            chosen = (
                [set(ids)]
                if whole
                else [set(rng.choice(ids, size, replace=False)) for _ in range(args.draws)]
            )
            for rule, (counts, held_out) in zip(
                ("product", "skew gate"), verdicts(report, scored, chosen, leaked, args.tables), strict=True
            ):
                shares = ", ".join(f"{code} {n / len(chosen):.0%}" for code, n in counts.most_common())
                unseen = f"{held_out:.0%}" if whole and leaked and "leak" in path.stem else ""
                audit = f"{folder.name}/{path.stem}"
                print(f"| {audit} | {size}{' (all)' if whole else ''} | {rule} | {shares} | {unseen} |")


if __name__ == "__main__":
    main()

"""How bell-shaped are the scores of questions a model never saw? Skewness per test, saved audits.

The bulk null assumes the never-seen questions' scores are one normal. For every saved audit in
the folders: a clean model's scores over all questions, a contaminated model's over its held-out
half (the split beside the folder says which), each likelihood test's skewness (the moment
estimate, standard error about sqrt(6 / n)) and Bowley's quartile skewness (robust to a few
outliers), then per test and setting the median and range over the audits; and every never-seen
set of which more than 10% lie above a test's threshold under the current rule (the audit's scores
fitted again; "withheld" where the fitted null holds under 40% of the questions and flags nothing),
with its skewness and the fitted null. An audit counts once: a base model in a reference setting
(its own reference, so no reference) and a rebuilt model whose scores repeat another audit's
(within a hundredth of their SD, in any order: the seed-0 models built twice, the untouched
Gemma-3 on HumanEval's 164 prompts for seeds 7 and 8) are left out.

    python experiments/null_skew.py docs/validation/gsm8k-seed0 docs/validation/humaneval-seed0 \\
        docs/validation/other-reference/* docs/validation/sample-size/gsm8k-* docs/validation/gemma-tested/*
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
from reanalyse import saved_audits, scores_of
from scipy.stats import skew
from validate import SETTINGS as VALIDATE_SETTINGS

from contamcheck.stats.bulk import fit_bulk, minority, threshold_of

BULK_TESTS = ("min-k", "min-k++", "zlib")
# the control setting judges against the controls, not the bulk
SETTINGS = tuple(s for s in VALIDATE_SETTINGS if s != "control")
# a file name's "other-reference-" is tried before "reference-"
LONGEST_FIRST = sorted(SETTINGS, key=len, reverse=True)


def bowley(values: np.ndarray) -> float:
    q1, q2, q3 = np.percentile(values, [25, 50, 75])
    return float((q3 + q1 - 2 * q2) / (q3 - q1)) if q3 > q1 else 0.0


def main(argv: list[str] | None = None) -> None:
    folders = [Path(p) for p in (sys.argv[1:] if argv is None else argv) if Path(p).is_dir()]
    rows: dict[tuple[str, str], list[tuple[float, float, str]]] = defaultdict(list)
    overflagged: list[str] = []
    counted: dict[tuple[str, str], list[np.ndarray]] = defaultdict(list)
    for folder, path, report, leaked in saved_audits(folders):
        setting = next((s for s in LONGEST_FIRST if path.stem.startswith(s + "-")), None)
        if setting is None:
            continue
        contaminated = path.stem.removeprefix(setting + "-").startswith("leak-")
        if contaminated and not leaked:
            continue  # a leak without its split: which questions it never saw is unknown
        if setting != "default" and report.reference.status != "used":
            continue  # the base as its own reference: its default audit again
        for result in report.tests:
            if result.name not in BULK_TESTS or result.status == "skipped":
                continue
            ids, _, values, _ = scores_of(report, result)
            seen = [contaminated and i in leaked for i in ids]
            never_seen = values[~np.array(seen, dtype=bool)]
            before = counted[(result.name, setting)]
            tolerance = 1e-2 * float(np.std(never_seen))
            ordered = np.sort(never_seen)  # the same questions drawn in another order repeat an audit too
            repeats = any(
                len(b) == len(ordered) and np.allclose(b, ordered, rtol=0, atol=tolerance) for b in before
            )
            if len(never_seen) < 20 or repeats:
                continue
            before.append(ordered)
            nested = folder.parent.name != "validation"  # other-reference/, sample-size/, ...
            where = f"{folder.parent.name}/{folder.name}" if nested else folder.name
            label = f"{where}/{path.stem}" + (" (held-out half)" if contaminated else "")
            moment = float(skew(never_seen))
            rows[(result.name, setting)].append((moment, bowley(never_seen), label))
            fit = fit_bulk(values)
            flagged = float(np.mean(never_seen > threshold_of(fit)))
            if flagged > 0.1:
                shown = "withheld" if minority(fit) else f"{flagged:.0%}"  # a minority null flags nothing
                overflagged.append(
                    f"| {label} | {result.name} | {shown} (above the threshold: {flagged:.0%}) | "
                    f"{moment:+.2f} | {fit.components} | {fit.bulk_share:.2f} |"
                )
    print("| test | setting | audits | skewness: median (range) | Bowley: median (range) | most skewed |")
    print("|---|---|---|---|---|---|")
    for test in BULK_TESTS:
        for setting in SETTINGS:
            found = rows.get((test, setting))
            if not found:
                continue
            moments = np.array([m for m, _, _ in found])
            quartiles = np.array([b for _, b, _ in found])
            worst = max(found, key=lambda row: row[0])
            print(
                f"| {test} | {setting} | {len(found)} | {np.median(moments):+.2f} "
                f"({moments.min():+.2f} to {moments.max():+.2f}) | {np.median(quartiles):+.2f} "
                f"({quartiles.min():+.2f} to {quartiles.max():+.2f}) | {worst[2]}: {worst[0]:+.2f} |"
            )
    print()
    print(
        "Never-seen sets of which more than 10% lie above a test's threshold under the current rule "
        "(withheld: the fitted null holds under 40% of the questions, so nothing is flagged):"
    )
    print()
    print("| audit | test | flagged | skewness | components | bulk share |")
    print("|---|---|---|---|---|---|")
    print("\n".join(overflagged))


if __name__ == "__main__":
    main()

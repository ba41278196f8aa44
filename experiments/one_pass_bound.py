"""What a one-pass ranking allows without a reference: a known null, and the null the audit can fit.

The issue "Memorised questions, not domain familiarity" asks, without a reference, for at least 30%
of a once-seen half to be flagged while at most 10% of the never-seen half is. Without a second
model SmolLM2's best single test ranks the one-pass leak at AUROC 0.72-0.79 (zlib up to 0.76,
Min-K%++ 0.79 on GSM8K seed 0; docs/METHODS.md). Two questions:

1. **With the never-seen half's distribution known exactly** (what a control file of the same kind
   approaches), how much of the leaked half lies above its 95th / 90th percentile? Under the
   binormal model (both halves normal with one spread, the leaked one d spreads higher, AUROC =
   Phi(d / sqrt 2)), and on the saved per-question scores of the one-pass audits without a reference
   (the oracle threshold set on the held-out half itself), which can beat the binormal model.
2. **With the null fitted to the benchmark** as the audit fits it where no tail stands apart (at
   these separations the two halves make one bell, and the bulk holds every question): one normal
   fitted to the half-leaked whole, flags above its 95th percentile. Under the binormal model its
   centre is d / 2 and its spread sqrt(1 + d^2 / 4), so it flags a share of each half that the
   table prints beside what the audits flagged.

    python experiments/one_pass_bound.py --out docs/validation/one-pass-bound.md
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np
from scipy.stats import norm

VALIDATION = Path(__file__).resolve().parents[1] / "docs" / "validation"
# the one-pass audits without a reference, with the split that says which half leaked
AUDITS = [
    ("GSM8K seed 0", "gsm8k-seed0/default-leak-1.json", "gsm8k-seed0.split.json"),
    ("GSM8K seed 3", "sample-size/gsm8k-seed3/default-leak-1.json", "sample-size/gsm8k-seed3.split.json"),
    ("GSM8K seed 5", "sample-size/gsm8k-seed5/default-leak-1.json", "sample-size/gsm8k-seed5.split.json"),
    ("HumanEval seed 0", "humaneval-seed0/default-leak-1.json", "humaneval-seed0.split.json"),
]
TESTS = ("min-k", "min-k++", "zlib")


def binormal(auroc: float) -> dict[str, float]:
    """The binormal model at this AUROC: the leaked half above the known null's 95th and 90th
    percentiles; and each half above the 95th percentile of one normal fitted to the whole."""
    d = math.sqrt(2) * norm.ppf(auroc)
    fitted = d / 2 + norm.ppf(0.95) * math.sqrt(1 + d**2 / 4)
    return {
        "separation": d,
        "known 5%": float(norm.sf(norm.ppf(0.95) - d)),
        "known 10%": float(norm.sf(norm.ppf(0.90) - d)),
        "fitted leaked": float(norm.sf(fitted - d)),
        "fitted held-out": float(norm.sf(fitted)),
    }


def auroc(positive: np.ndarray, negative: np.ndarray) -> float:
    greater = (positive[:, None] > negative[None, :]).mean()
    ties = (positive[:, None] == negative[None, :]).mean()
    return float(greater + ties / 2)


def saved(report_path: Path, split_path: Path) -> list[dict[str, float | str]]:
    """Per test of a saved audit: the AUROC of leaked vs held-out, the leaked half above the held-out
    half's own 95th and 90th percentiles, and what the audit flagged of each half."""
    report = json.loads(report_path.read_text(encoding="utf-8"))
    leaked = set(json.loads(split_path.read_text(encoding="utf-8"))["leaked"])
    rows: list[dict[str, float | str]] = []
    for test in TESTS:
        scores: dict[bool, list[float]] = {True: [], False: []}
        flags: dict[bool, list[bool]] = {True: [], False: []}
        for item in report["items"]:
            entry = (item.get("tests") or {}).get(test) or {}
            if item.get("is_control") or entry.get("score") is None:
                continue
            seen = item["id"] in leaked
            scores[seen].append(float(entry["score"]))
            flags[seen].append(bool(entry.get("flagged")))
        if not scores[True] or not scores[False]:
            continue
        seen_scores, unseen = np.array(scores[True]), np.array(scores[False])
        rows.append(
            {
                "test": test,
                "auroc": auroc(seen_scores, unseen),
                "known 5%": float((seen_scores > np.quantile(unseen, 0.95)).mean()),
                "known 10%": float((seen_scores > np.quantile(unseen, 0.90)).mean()),
                "flagged leaked": float(np.mean(flags[True])),
                "flagged held-out": float(np.mean(flags[False])),
            }
        )
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, help="write the tables here (Markdown)")
    args = parser.parse_args(argv)
    lines = [
        "Binormal model (both halves normal with one spread, half the questions leaked):",
        "",
        "| AUROC | separation (spreads) | known null: leaked above its 95th / 90th percentile | "
        "one normal fitted to the whole: leaked / held-out above its 95th percentile |",
        "|---|---|---|---|",
    ]
    for value in (0.72, 0.76, 0.79, 0.85, 0.90):
        row = binormal(value)
        lines.append(
            f"| {value:.2f} | {row['separation']:.2f} | {row['known 5%']:.0%} / {row['known 10%']:.0%} | "
            f"{row['fitted leaked']:.1%} / {row['fitted held-out']:.1%} |"
        )
    lines += [
        "",
        "The saved one-pass audits without a reference (scores as saved; flags as saved, under the",
        "rule of their day):",
        "",
        "| audit | test | AUROC | held-out half as the null: leaked above its 95th / 90th percentile | "
        "the audit flagged: leaked / held-out |",
        "|---|---|---|---|---|",
    ]
    for name, report, split in AUDITS:
        if not (VALIDATION / report).is_file():
            continue
        for row in saved(VALIDATION / report, VALIDATION / split):
            lines.append(
                f"| {name} | {row['test']} | {row['auroc']:.2f} | {row['known 5%']:.0%} / "
                f"{row['known 10%']:.0%} | {row['flagged leaked']:.0%} / {row['flagged held-out']:.0%} |"
            )
    table = "\n".join(lines)
    print(table)
    if args.out:
        command = f"python experiments/one_pass_bound.py --out {args.out}"
        heading = "# What a one-pass ranking allows: a known null, and the null the audit fits"
        args.out.write_text(f"{heading}\n\n`{command}`\n\n{table}\n", encoding="utf-8")


if __name__ == "__main__":
    main()

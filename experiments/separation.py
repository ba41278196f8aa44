"""How far a leaked half sits above the held-out half, in the held-out half's standard deviations.

For each saved audit report and each likelihood test: the held-out half's SD of the score the bulk
null judges (the tested model's, less the reference's with one) and the leaked half's mean above
the held-out half's mean in those SDs. A ranking (AUROC) can be good while this stays near one or
two: then the leaked half lifts the bulk's upper side instead of making a tail apart from it.

    cd docs/validation && python ../../experiments/separation.py mmlu-seed11.split.json \\
        mmlu-seed11/default-leak-3.json mmlu-seed11/other-reference-leak-3.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

TESTS = ("min-k", "min-k++", "zlib")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("split", type=Path, help="split.json with the leaked and held_out ids")
    parser.add_argument("reports", type=Path, nargs="+")
    args = parser.parse_args(argv)
    split = json.loads(args.split.read_text())
    leaked, held_out = set(split["leaked"]), set(split["held_out"])
    print("| report | test | held-out SD | leaked mean above held-out (SDs) |")
    print("|---|---|---|---|")
    for path in args.reports:
        report = json.loads(path.read_text())
        for name in TESTS:
            scores: dict[str, list[float]] = {"leaked": [], "held_out": []}
            for item in report["items"]:
                entry = item["tests"].get(name)
                if entry is None or entry["score"] is None:
                    continue
                half = "leaked" if item["id"] in leaked else "held_out" if item["id"] in held_out else None
                if half is not None:
                    scores[half].append(entry["score"])  # already less the reference's, with one
            if not scores["leaked"] or len(scores["held_out"]) < 2:
                continue
            spread = float(np.std(scores["held_out"], ddof=1))
            lift = (np.mean(scores["leaked"]) - np.mean(scores["held_out"])) / spread
            print(f"| {path.name} | {name} | {spread:.3f} | {lift:.2f} |")


if __name__ == "__main__":
    main()

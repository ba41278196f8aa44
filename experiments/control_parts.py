"""Which of the unpaired test's two statistics carries each result of the control setting.

The unpaired test's p-value is twice the smaller of two permutation p-values on the same label
permutations: the flag count's and the rank sum's (``stats.flags.label_permutation_test``). This
reads the saved reports of ``validate.py --settings control`` and prints both parts per model and
test, with the permutations and seed the audit used:

    python experiments/control_parts.py docs/validation/gsm8k-seed0
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from contamcheck.stats import label_permutation_test


def scores(report: dict[str, Any], test: str, control: bool) -> np.ndarray:
    """One test's scores of the benchmark's questions (or the controls), in the report's order."""
    entries = [item["tests"].get(test) for item in report["items"] if item["is_control"] == control]
    return np.array([e["score"] for e in entries if e and e["score"] is not None])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("reports", type=Path, help="folder with control-<model>.json reports")
    args = parser.parse_args(argv)
    print("| model | test | p (reported) | flag count alone | rank sum alone |")
    print("|---|---|---|---|---|")
    for path in sorted(args.reports.glob("control-*.json")):
        report = json.loads(path.read_text())
        for test in report["tests"]:
            if test["kind"] != "unpaired" or test["status"] == "skipped":
                continue
            bench, controls = scores(report, test["name"], False), scores(report, test["name"], True)
            outcome = label_permutation_test(
                bench, controls, test["permutations"], report["settings"]["seed"]
            )
            assert outcome.parts is not None
            tail, shift = outcome.parts
            model = path.stem.removeprefix("control-")
            print(f"| {model} | {test['name']} | {test['p_value']:.2g} | {tail:.2g} | {shift:.2g} |")


if __name__ == "__main__":
    main()

"""Which of the unpaired test's two statistics carries each result of the control setting.

The unpaired test's p-value is twice the smaller of two permutation p-values on the same label
permutations: the flag count's and the rank sum's (``stats.flags.label_permutation_test``). This
reads the saved reports of ``validate.py --settings control`` and prints both parts per model and
test, with the permutations and seed the audit used:

    python experiments/control_parts.py docs/validation/gsm8k-seed0

Both parts are recomputed under the current rule, so where the rule changed since the audit ran
(2026-12-05: a question must beat the ⌈0.95 (m + 1)⌉-th of m controls, where it beat their
interpolated 95th percentile before) the table also gives the flag rate as saved and now, with the
leaked / held-out halves' where the split is saved beside the folder (``<folder>.split.json``).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from contamcheck.stats import label_permutation_test


def statistic(test: dict[str, Any]) -> str:
    """What the test compares with the controls: the score, or guided's guided − general difference."""
    return "diff" if test["kind"] == "self-paired" else "score"


def scored(report: dict[str, Any], test: dict[str, Any], control: bool) -> list[tuple[str, dict[str, Any]]]:
    """One test's scored entries of the benchmark's questions (or the controls), in the report's order."""
    entries = [
        (item["id"], item["tests"].get(test["name"]))
        for item in report["items"]
        if item["is_control"] == control
    ]
    return [(i, e) for i, e in entries if e and e[statistic(test)] is not None]


def scores(report: dict[str, Any], test: dict[str, Any], control: bool) -> np.ndarray:
    """One test's statistics of the benchmark's questions (or the controls), in the report's order."""
    return np.array([e[statistic(test)] for _, e in scored(report, test, control)])


def rates(ids: list[str], flags: np.ndarray, leaked: set[str] | None) -> str:
    """The flag rate, and the leaked / held-out halves' where the split is known."""
    text = f"{flags.mean():.0%}"
    if leaked is not None:
        inside = np.array([i in leaked for i in ids])
        halves = [f"{flags[side].mean():.0%}" if side.any() else "–" for side in (inside, ~inside)]
        text += f" ({' / '.join(halves)})"
    return text


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("reports", type=Path, help="folder with control-<model>.json reports")
    args = parser.parse_args(argv)
    split = args.reports.with_name(args.reports.name + ".split.json")
    leaked = set(json.loads(split.read_text())["leaked"]) if split.exists() else None
    print(
        "| model | test | p (reported) | p now | flag count alone | rank sum alone "
        "| flagged as saved (leaked / held-out) | flagged now |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for path in sorted(args.reports.glob("control-*.json")):
        report = json.loads(path.read_text())
        for test in report["tests"]:
            against_controls = test["kind"] == "unpaired" or (
                test["kind"] == "self-paired" and report["control"]["kind"] == "file"
            )
            if not against_controls or test["status"] == "skipped":
                continue
            entries = scored(report, test, False)
            ids = [i for i, _ in entries]
            bench, controls = scores(report, test, False), scores(report, test, True)
            outcome = label_permutation_test(
                bench, controls, test["permutations"], report["settings"]["seed"]
            )
            assert outcome.parts is not None
            tail, shift = outcome.parts
            saved = np.array([bool(e["flagged"]) for _, e in entries])
            model = path.stem.removeprefix("control-")
            print(
                f"| {model} | {test['name']} | {test['p_value']:.2g} | {outcome.p_value:.2g} | {tail:.2g} "
                f"| {shift:.2g} | {rates(ids, saved, leaked)} | {rates(ids, outcome.flags, leaked)} |"
            )


if __name__ == "__main__":
    main()

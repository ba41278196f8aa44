"""Which of the Chinese problems' templates do a report's flags fall in? Per likelihood test and template.

``zh_problems.py`` writes every problem from one of eight templates. A model that memorised some
problems should be flagged on them whatever their template; one that learned some templates better
than its reference did (familiarity with part of the benchmark's kind of text) is flagged by
template, on problems it never saw as much as on those it did. Per saved report (``validate.py
--benchmark zh``): the flags as saved and the mean score (less the reference's, with one) per
template; with ``--split``, flags on the leaked / held-out problems.

    python experiments/by_template.py docs/validation/zh-seed1/default-*.json \
        docs/validation/zh-seed1/reference-*.json --split docs/validation/zh-seed1.split.json
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from zh_problems import TEMPLATES

TESTS = ("min-k", "min-k++", "zlib")


def template_patterns() -> list[re.Pattern[str]]:
    patterns = []
    for template in TEMPLATES:
        pattern = re.escape(template)
        for field in "abtuxyz":
            pattern = pattern.replace(re.escape("{" + field + "}"), ".+?")
        patterns.append(re.compile(f"^{pattern}$"))
    return patterns


def template_of(text: str, patterns: list[re.Pattern[str]]) -> int:
    """The template's number (1-8), or 0 where none or several match."""
    matches = [number for number, pattern in enumerate(patterns, 1) if pattern.match(text)]
    return matches[0] if len(matches) == 1 else 0


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("reports", nargs="+", type=Path)
    parser.add_argument("--split", type=Path, help="the split saved beside the reports (leaked ids)")
    args = parser.parse_args(argv)
    leaked = set(json.loads(args.split.read_text())["leaked"]) if args.split else None
    patterns = template_patterns()
    numbers = range(1, len(TEMPLATES) + 1)
    print("Flagged / problems per template (mean score); leaked / held-out flagged where a split is given.\n")
    print("| report | test | " + " | ".join(f"template {n}" for n in numbers) + " |")
    print("|---|---|" + "---|" * len(TEMPLATES))
    for path in args.reports:
        report = json.loads(path.read_text(encoding="utf-8"))
        for test in TESTS:
            cells = {n: ([], [], []) for n in numbers}  # type: dict[int, tuple[list[bool], list[float], list[bool]]]
            for item in report["items"]:
                entry = item["tests"].get(test)
                if item["is_control"] or not entry or entry.get("score") is None:
                    continue
                number = template_of(item["text"], patterns)
                if number == 0:
                    continue
                flags, scores, seen = cells[number]
                flags.append(bool(entry.get("flagged")))
                scores.append(entry["score"])
                seen.append(leaked is not None and item["id"] in leaked)
            row = []
            for n in numbers:
                flags, scores, seen = cells[n]
                text = f"{sum(flags)}/{len(flags)} ({np.mean(scores):.2f})" if flags else "–"
                if leaked is not None and flags:
                    on = sum(f for f, s in zip(flags, seen, strict=True) if s)
                    off = sum(f for f, s in zip(flags, seen, strict=True) if not s)
                    text += f" {on}/{off}"
                row.append(text)
            print(f"| {path.stem} | {test} | " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()

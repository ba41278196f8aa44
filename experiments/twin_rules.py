"""How many questions the twins' two context rules touch: a day beside a month's name (drawn as a
day every month has) and a version named without a dot (left alone), both added 2026-12-05.

A question neither rule touches gets the twin it got before them, so this count is the number of
questions whose twins the rules can have changed (docs/METHODS.md, "Questions and controls"):

    python experiments/twin_rules.py humaneval sample ../shared/data/gsm8k/test.jsonl
"""

from __future__ import annotations

import sys

from contamcheck.benchmarks import load_benchmark
from contamcheck.controls import NUMBER, is_changeable
from contamcheck.controls.numbers import ascii_digits, is_version
from contamcheck.controls.twins import is_day_of_month


def touched(texts: list[str]) -> tuple[int, int]:
    """(questions with a day beside a month's name, questions with a version without a dot)."""
    days = versions = 0
    for text in texts:
        matches = [m for m in NUMBER.finditer(ascii_digits(text)) if is_changeable(m.group(0))]
        days += any(is_day_of_month(text, m.start(), m.end()) for m in matches)
        versions += any(is_version(text, m.start()) for m in matches)
    return days, versions


def main(specs: list[str]) -> None:
    print("| benchmark | questions | a day beside a month | a version without a dot |")
    print("|---|---|---|---|")
    for spec in specs:
        texts = [item.text for item in load_benchmark(spec).items]
        days, versions = touched(texts)
        print(f"| {spec} | {len(texts)} | {days} | {versions} |")


if __name__ == "__main__":
    main(sys.argv[1:] or ["humaneval", "sample"])

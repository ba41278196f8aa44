"""Preparing the controls (number twins) of a large question file: seconds before any model work.

Builds a seeded synthetic file of N maths questions (each with three numbers) and times
``build_controls`` on it, as an audit with ``-n 200 --twins 2`` does before it loads a model:

    python bench/controls.py --rows 40000

Run it at two commits to compare them; the twins it makes are printed as a digest, so two
versions can be checked to make the very same twins.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import tempfile
import time
from pathlib import Path

from contamcheck.benchmarks import load_benchmark
from contamcheck.controls import build_controls


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=40_000)
    args = parser.parse_args()
    rng = random.Random(1)
    rows = [
        {
            "question": f"Tom has {rng.randint(10, 99999)} apples and buys {rng.randint(10, 9999)} more at "
            f"{rng.randint(2, 999)} cents each. How many apples does he have now?"
        }
        for _ in range(args.rows)
    ]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "questions.jsonl"
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
        benchmark = load_benchmark(str(path))
        started = time.perf_counter()
        controls = build_controls(benchmark, 200, 0, None, 2)
        seconds = time.perf_counter() - started
    digest = hashlib.sha256(json.dumps(controls.twins, sort_keys=True).encode()).hexdigest()[:16]
    print(f"{args.rows} rows: build_controls {seconds:.1f} s, {controls.testable} testable, twins {digest}")


if __name__ == "__main__":
    main()

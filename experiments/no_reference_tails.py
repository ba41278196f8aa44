"""Every saved audit without a reference: for each likelihood test whose tail count went beyond
chance (p < 0.05) with every question twinned, whether the twins back the tail (the spread test and
the tail's gain over its twins, ``stats.spread.twin_backing``) or it stands out with them, as the
rule applied without a reference since 2026-12-06 (evening) reads it. No model needed.

    python experiments/no_reference_tails.py            # from the repository's root
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from reanalyse import halves, scores_of, split_of

from contamcheck.errors import InputError
from contamcheck.report import Report, read_report
from contamcheck.stats.spread import TWINS_BACK, spread_test, twin_backing


def saved_reports(root: Path) -> Iterator[tuple[Path, Report, set[str]]]:
    """Each report under ``root`` (other JSON files, the schema, are passed over) with its split's
    leaked ids (none without a split)."""
    for path in sorted(root.rglob("*.json")):
        try:
            report = read_report(path)
        except InputError:
            continue
        split = split_of(path.parent)
        yield path, report, set(split["leaked"]) if split else set()


def main() -> None:
    audits = tests = 0
    for path, report, leaked in saved_reports(Path("docs")):
        if report.reference.status == "used":
            continue
        audits += 1
        for result in report.tests:
            if result.kind != "bulk" or result.null is None or result.null.count_withheld:
                continue
            ids, flags, x, twins = scores_of(report, result)
            if not len(x) or not np.isfinite(twins).all():
                continue
            tests += 1
            tail_p = result.null.tail_p_value
            if tail_p is None or tail_p >= TWINS_BACK:
                continue
            spread = spread_test(x, twins, report.settings.permutations, report.settings.seed)
            gain, shared = twin_backing(tail_p, int(sum(flags)), x, twins, spread)
            print(
                f"{'stands out with its twins' if shared else 'backed'} | {path} | {result.name} | "
                f"{result.status} | {result.n_flagged}/{result.n} | {halves(ids, flags, leaked)} | "
                f"tail p {tail_p:.2g} | spread p {spread.p_value:.2g} | gain p {gain:.2g} | "
                f"verdict {report.verdict.code}"
            )
    print(f"{audits} audits without a reference; {tests} likelihood tests with every question twinned")


if __name__ == "__main__":
    main()

"""Re-apply the current bulk null to the per-question scores of saved reports: no model needed.

When the null's rule changes after the reported split was run (``stats/bulk.py``), this shows what
the change does to every saved audit: the rule then (the report as saved) against the rule now, on
the same scores (since 2026-12-06, a tail its twins share is withheld as the product withholds it).
Per likelihood test: the flag count, and the leaked / held-out flag rates where
the folder's split is saved beside it (``<folder>.split.json``, as ``contaminate.py`` writes it);
per audit: the verdict and evidence index, judged again by the product's own ``judge`` and
``evidence_index`` from the recomputed p-values (the other tests' results as saved). Where the
audit had a reference, the p-value now is the product's: the tail count's and the spread test's
against the first twins (``stats/spread.py``), twice the smaller.

    python experiments/reanalyse.py docs/validation/gsm8k-seed0 docs/validation/humaneval-seed0
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import NamedTuple

import numpy as np

from contamcheck import Report
from contamcheck.pipeline.runners import BULK_SIMULATIONS, MIN_QUESTIONS
from contamcheck.report.model import TestResult
from contamcheck.stats import judge
from contamcheck.stats.bulk import BulkOutcome, bulk_tail_test, minority
from contamcheck.stats.index import evidence_index
from contamcheck.stats.spread import (
    TWINS_BACK,
    SpreadOutcome,
    carries,
    spread_test,
    twin_backing,
    with_spread,
)


def scores_of(report: Report, result: TestResult) -> tuple[list[str], list[bool], np.ndarray, np.ndarray]:
    """The questions the test flagged on: ids, flags as saved, scores and their first twins' (less
    the reference's, if any)."""
    ids, flags, values, twins = [], [], [], []
    for item in report.items:
        entry = item.tests.get(result.name)
        # as the product: a question counts where its score and its twins' gave a difference
        if item.is_control or entry is None or entry.score is None or entry.diff is None:
            continue
        ids.append(item.id)
        flags.append(bool(entry.flagged))  # None: not flagged, or withheld (a minority null)
        values.append(entry.score)
        twins.append(
            entry.twin_scores[0] if entry.twin_scores and entry.twin_scores[0] is not None else np.nan
        )
    return ids, flags, np.array(values), np.array(twins)


class Rejudged(NamedTuple):
    tail: BulkOutcome  # the tail count
    # the test's: with a reference, the tail count's and the spread test's; None where the count is
    # withheld and there is no spread test
    p_value: float | None
    min_attainable_p: float | None
    spread: SpreadOutcome | None  # with a reference
    withheld: bool = False  # no flags, no tail count: a minority null (``stats.bulk.minority``) or
    because: str | None = None  # "twins": a tail its twins share (``stats.spread.shared_with_twins``)
    gain_p: float | None = None  # the tail's gain over its twins (``stats.spread.tail_gain_test``)

    @property
    def carried(self) -> bool:
        """The spread test gave the p-value, with at least a small effect (``stats.spread.carries``)."""
        spread = self.spread
        return spread is not None and carries(
            self.tail.p_value, spread.p_value, spread.correlation, self.withheld
        )

    @property
    def flags(self) -> np.ndarray:
        return np.zeros_like(self.tail.flags) if self.withheld else self.tail.flags


def rejudged(report: Report, x: np.ndarray, twins: np.ndarray, tables: Path | None = None) -> Rejudged:
    """The product's bulk test on these scores, its p-value and the smallest it allows: with a
    reference, the spread test against the first twins beside the tail count (``pipeline/runners.py``)."""
    now = bulk_tail_test(x, BULK_SIMULATIONS, tables=tables)
    withheld = minority(now.fit)
    if report.reference.status != "used":
        if withheld:
            return Rejudged(now, None, None, None, True, "minority")
        # since 2026-12-06 (evening), as the product: a tail beyond chance that the twins don't back
        # is withheld without a reference too, the spread test clearing it (it leans toward a gain)
        paired = np.isfinite(twins)
        if paired.all() and len(x) >= MIN_QUESTIONS and now.p_value < TWINS_BACK:
            backing = spread_test(x, twins, report.settings.permutations, report.settings.seed)
            gain, shared = twin_backing(now.p_value, int(np.sum(now.flags)), x, twins, backing)
            if shared:  # the larger p-value: it can clear the tail, never condemn one
                p = max(backing.p_value, now.p_value)
                floor = max(backing.min_attainable_p, now.min_attainable_p)
                return Rejudged(now, p, floor, None, True, "twins", gain)
        return Rejudged(now, now.p_value, now.min_attainable_p, None)
    paired = np.isfinite(twins)  # as the product: the questions with a scored twin
    spread = spread_test(x[paired], twins[paired], report.settings.permutations, report.settings.seed)
    if withheld:
        return Rejudged(now, spread.p_value, spread.min_attainable_p, spread, True, "minority")
    # as the product: only where every question has a twin, from both tests of the twins
    if paired.all():
        gain, shared = twin_backing(now.p_value, int(np.sum(now.flags)), x, twins, spread)
        if shared:
            return Rejudged(now, spread.p_value, spread.min_attainable_p, spread, True, "twins", gain)
    return Rejudged(now, *with_spread(now.p_value, now.min_attainable_p, spread), spread)


def apply(result: TestResult, again: Rejudged, n: int) -> None:
    """Write a re-judged result into the saved test, as the verdict's rule reads it."""
    assert result.null is not None
    result.n_flagged = int(again.flags.sum())  # none where withheld
    result.flag_rate = None if again.withheld else result.n_flagged / n
    result.p_value, result.min_attainable_p = again.p_value, again.min_attainable_p
    result.null.tail_p_value = again.tail.p_value
    result.null.spread_p_value = None if again.spread is None else again.spread.p_value
    result.null.spread_correlation = None if again.spread is None else again.spread.correlation
    result.null.count_withheld = again.withheld
    result.null.withheld_because = again.because  # type: ignore[assignment]


def halves(ids: list[str], flags: list[bool], leaked: set[str]) -> str:
    """Flag rates of the leaked and the held-out questions ("" without a split)."""
    if not leaked:
        return ""
    seen = [f for i, f in zip(ids, flags, strict=True) if i in leaked]
    unseen = [f for i, f in zip(ids, flags, strict=True) if i not in leaked]
    return f"{np.mean(seen):.0%} / {np.mean(unseen):.0%}"


def main() -> None:
    tests_table = [
        "| audit | test | flagged then | now | leaked / held-out then | now | p then | p now |",
        "|---|---|---|---|---|---|---|---|",
    ]
    audits_table = [
        "| audit | verdict then | verdict now | index then | index now |",
        "|---|---|---|---|---|",
    ]
    for folder, path, report, leaked in saved_audits(map(Path, sys.argv[1:])):
        audit = f"{folder.parent.name}/{folder.name}/{path.stem}".removeprefix("validation/")
        for result in report.tests:
            if result.kind != "bulk" or result.null is None:
                continue
            ids, flags_then, x, twins = scores_of(report, result)
            if not len(x):  # --twinless (no question has a twin): not re-judged here
                continue
            again = rejudged(report, x, twins)
            flagged = int(again.flags.sum())
            changed = flagged != result.n_flagged or again.withheld
            mark = " **changed**" if changed else ""
            because = (
                f"twins; tail's gain p = {again.gain_p:.2g}" if again.because == "twins" else again.because
            )
            count = f"withheld ({because})" if again.withheld else f"{flagged}/{len(x)}"
            rates = "withheld" if again.withheld and leaked else halves(ids, list(again.flags), leaked)
            tests_table.append(
                f"| {audit} | {result.name} | {result.n_flagged}/{result.n} | {count}{mark} | "
                f"{halves(ids, flags_then, leaked)} | {rates} | "
                f"{p_text(result.p_value)} | {p_text(again.p_value)} |"
            )
            apply(result, again, len(x))
        judgement = judge(report.tests, report.settings.alpha)
        for result in report.tests:
            result.status = judgement.statuses[result.name]
        index = evidence_index(report.tests, judgement.code)
        audits_table.append(
            f"| {audit} | {report.verdict.label} | {judgement.label} | "
            f"{value(report.index.value)} ({report.index.band}) | {value(index.value)} ({index.band}) |"
        )
    print("\n".join(tests_table))
    print()
    print("\n".join(audits_table))


def split_of(folder: Path) -> dict[str, list[str]] | None:
    """The split saved beside the folder, or beside its parent (other-reference/gsm8k-seed0 is run on
    gsm8k-seed0's split)."""
    for place in (folder.parent, folder.parent.parent):
        path = place / f"{folder.name}.split.json"
        if path.exists():
            return json.loads(path.read_text())
    return None


Audit = tuple[Path, Path, Report, set[str]]  # folder, file, report, the split's leaked ids


def saved_audits(folders: Iterable[Path], pattern: str = "*.json") -> Iterator[Audit]:
    """Each saved audit in the folders (folder, file, report) with its split's leaked ids (none
    without a split)."""
    for folder in folders:
        split = split_of(folder)
        leaked = set(split["leaked"]) if split else set()
        for path in sorted(folder.glob(pattern)):
            yield folder, path, Report.model_validate_json(path.read_text()), leaked


def p_text(p: float | None) -> str:
    return "none" if p is None else f"{p:.2g}"


def value(index: float | None) -> str:
    return "n/a" if index is None else f"{index:.2f}"


if __name__ == "__main__":
    main()

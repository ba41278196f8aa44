"""The evidence index follows the verdict's direction, and its weights renormalise."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from contamcheck.stats.index import BASE_WEIGHTS, HIGH, MODERATE, evidence_index


@dataclass
class Result:
    name: str
    status: str = "pass"
    calibrated: bool = True
    flag_rate: float | None = 0.05
    kind: str = "paired"
    expected_rate: float = 0.05
    spread_carried: bool = False  # a bulk test whose p-value the spread test against the twins gave

    @property
    def aggregate_evidence(self) -> bool:
        return self.kind == "aggregate" or self.spread_carried


def test_clean_is_zero_and_low():
    index = evidence_index([Result("completion"), Result("guided")], "clean")
    assert index.value == 0 and index.band == "low"


def test_weights_renormalise_over_contributing_calibrated_tests():
    results = [
        Result("completion", "fail", flag_rate=0.35),
        Result("min-k", calibrated=False),
        Result("guided", "skipped"),
    ]
    index = evidence_index(results, "likely")
    weights = {c.test: c.weight for c in index.components}
    assert weights == {"completion": 1.0, "min-k": 0.0, "guided": 0.0}
    assert index.value == pytest.approx(1.0) and index.band == "high"


def test_some_evidence_is_never_high():
    index = evidence_index([Result(name, "warn") for name in BASE_WEIGHTS], "evidence")
    assert index.value == pytest.approx(0.35) and index.band == "moderate"
    assert index.value < HIGH


def test_likely_is_at_least_moderate():
    results = [Result("zlib", "fail", flag_rate=0.12), *(Result(n) for n in BASE_WEIGHTS if n != "zlib")]
    index = evidence_index(results, "likely")
    assert index.value == MODERATE and index.band == "moderate" and "floor" in index.explanation


def test_inconclusive_has_no_index():
    index = evidence_index([Result("completion")], "inconclusive")
    assert index.value is None and index.band == "n/a"


def test_a_failing_whole_benchmark_statistic_counts_as_an_aggregate_test():
    spread = Result("min-k", "fail", flag_rate=0.045, kind="bulk", spread_carried=True)
    carried = evidence_index([spread], "likely")
    counted = evidence_index([Result("min-k", "fail", flag_rate=0.045, kind="bulk")], "likely")
    assert carried.value == pytest.approx(0.8)  # not read off a flag rate the tail count made
    assert counted.value == pytest.approx(0.6)

"""The evidence index: one number in [0, 1] with a band, from the calibrated tests that ran.

Each test has a fixed base weight; weights are renormalised over the calibrated tests that
produced usable evidence (ran, not skipped). Each contributes a *strength* in [0, 1] read off its
status, never its raw p-value alone, so the index cannot disagree with the verdict:

* pass (adjusted p >= 0.05): 0;
* warn (adjusted p < 0.05, not a failure): 0.35;
* fail (adjusted p < alpha and at least twice the expected flag rate): 0.6 + 0.4 x the excess
  flag rate over chance, scaled so that 30 points above chance counts fully; a test whose p-value
  rests on a whole-benchmark statistic (an aggregate test, or the spread test against the twins)
  counts 0.8 when it fails.

Bands: low below 0.15, moderate from 0.15, high from 0.45. Direction follows the verdict: "no
evidence found" gives 0 (low); "some evidence" at most 0.35 (never high); "likely contaminated" is
at least moderate (an index that weighted a single failing test below 0.15 is raised to 0.15,
and says so); "inconclusive" has no index.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

BASE_WEIGHTS: dict[str, float] = {
    "completion": 0.30,  # the model writes the very numbers: direct evidence of recall
    "guided": 0.20,  # direct too, but only as good as the model's instruction following
    "min-k++": 0.15,  # likelihood tests: sensitive to light exposure, indirect
    "min-k": 0.15,
    "canonical-order": 0.10,  # needs exposure to the benchmark as a file, in order
    "zlib": 0.10,  # the weakest likelihood signal on short texts
}
DEFAULT_WEIGHT = 0.10  # a test added later without a weight of its own
MODERATE, HIGH = 0.15, 0.45
WARN_STRENGTH = 0.35
FULL_EXCESS = 0.30
Band = Literal["low", "moderate", "high", "n/a"]


class Contributor(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def calibrated(self) -> bool: ...
    @property
    def status(self) -> str: ...
    @property
    def flag_rate(self) -> float | None: ...
    @property
    def expected_rate(self) -> float: ...
    @property
    def aggregate_evidence(self) -> bool: ...


@dataclass(frozen=True)
class Component:
    test: str
    base_weight: float
    weight: float
    strength: float
    contributes: bool
    reason: str


@dataclass(frozen=True)
class Index:
    value: float | None
    band: Band
    components: list[Component]
    explanation: str


def strength(result: Contributor) -> float:
    if result.status == "fail":
        if result.aggregate_evidence or result.flag_rate is None:
            return 0.8
        excess = max(0.0, result.flag_rate - result.expected_rate)
        return 0.6 + 0.4 * min(1.0, excess / FULL_EXCESS)
    if result.status == "warn":
        return WARN_STRENGTH
    return 0.0


def band_of(value: float) -> Band:
    return "high" if value >= HIGH else "moderate" if value >= MODERATE else "low"


def evidence_index(results: Sequence[Contributor], verdict: str) -> Index:
    components = []
    for result in results:
        base = BASE_WEIGHTS.get(result.name, DEFAULT_WEIGHT)
        if result.status == "skipped":
            components.append(Component(result.name, base, 0.0, 0.0, False, "skipped"))
        elif not result.calibrated:
            components.append(Component(result.name, base, 0.0, strength(result), False, "uncalibrated"))
        else:
            components.append(Component(result.name, base, base, strength(result), True, ""))
    total = sum(c.base_weight for c in components if c.contributes)
    components = [
        Component(
            c.test,
            c.base_weight,
            c.base_weight / total if c.contributes else 0.0,
            c.strength,
            c.contributes,
            c.reason,
        )
        for c in components
    ]
    if verdict == "inconclusive" or total == 0:
        why = (
            "the verdict is inconclusive (its explanation says why)"
            if verdict == "inconclusive"
            else "no calibrated test produced usable evidence with power"
        )
        return Index(None, "n/a", components, f"No index: {why}.")
    value = sum(c.weight * c.strength for c in components if c.contributes)
    explanation = "Weighted strength of the calibrated tests that ran."
    unheard = [
        c.test for c in components if not c.contributes and c.reason == "uncalibrated" and c.strength > 0
    ]
    if unheard:
        explanation += (
            f" {', '.join(unheard)} found more than chance but, uncalibrated, "
            f"{'does' if len(unheard) == 1 else 'do'} not count here."
        )
    if verdict == "likely" and value < MODERATE:
        value = MODERATE
        explanation += (
            " Raised to the moderate band's floor: a calibrated test failed, the others did not agree."
        )
    return Index(round(value, 4), band_of(value), components, explanation)

"""What a report's numbers say of each other, checked where it is read back or written.

Each rule is one ``stats.verdict`` and ``stats.index`` apply, so every report an audit makes keeps
it (one that did not would stop the audit as a bug, not be saved), and each of the 172 reports the
docs publish, of every schema version, keeps them all (tests/test_saved_reports.py reads them): a
report that breaks one was changed after its audit, and a gate re-reading it (``contamcheck
report``) must not take its verdict. The rules are the documented ones, not a re-run of the
analysis (but for canonical-order's randomization test, which takes milliseconds from what the
report keeps): they catch an edit made carelessly or naively (a status or a verdict changed alone),
not a forger who changes every number that depends on another.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ..methods import TESTS, analysis_seed
from ..methods.canonical_order import randomization_draws, randomization_test, standardized
from ..stats.index import MODERATE, WARN_STRENGTH, band_of
from ..stats.verdict import WARN_LEVEL

if TYPE_CHECKING:
    from .model import Report, TestResult

TOLERANCE = 1e-6  # for weights and strengths, sums of a few floats


def contradiction(report: Report) -> str | None:
    """The first rule ``report`` breaks, in words; None when it keeps them all."""
    return _sample(report) or _tests(report) or _index(report) or _run(report)


def _sample(report: Report) -> str | None:
    sample = report.sample
    if sample.tested > sample.testable:
        return f"sample.tested {sample.tested} is more than the {sample.testable} questions testable"
    return None


def _tests(report: Report) -> str | None:
    names = [test.name for test in report.tests]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        return f"the test {twice[0]!r} is listed twice"
    # a test a later version adds comes with a later schema, which read_report refuses first
    unknown = [name for name in names if name not in TESTS.names()]
    if unknown:
        return f"{unknown[0]!r} is no test contamcheck runs (it runs {', '.join(TESTS.names())})"
    ran = any(test.calibrated and test.status != "skipped" for test in report.tests)
    if report.verdict.code == "clean" and not ran:
        return "the verdict is 'clean' but no calibrated test ran"
    # Holm's largest family: the tests given an adjusted p-value (a p-value dropped from a file, as a
    # NaN computed by a script is, leaves its test in the family its adjusted p-value came from)
    family = sum(test.p_adjusted is not None for test in report.tests)
    for test in report.tests:
        said = (
            _status(test, report.settings.alpha, family)
            or _flags(test, report)
            or _order(test, report.settings.seed, report.settings.alpha)
        )
        if said:
            return f"{test.name}: {said}"
    for item in report.items:
        stray = sorted(set(item.tests) - set(names))
        if stray:
            return f"question {item.id!r} has results of {stray[0]!r}, a test the report does not list"
    return None


def _status(test: TestResult, alpha: float, family: int) -> str | None:
    """A status follows from the adjusted p-value (and, to fail, from the flag rate); the adjusted
    p-value lies between the p-value and ``family`` times it (Holm over the tests that gave one)."""
    adjusted = test.p_adjusted
    if (test.status == "skipped") != (adjusted is None):
        return f"status {test.status!r} with an adjusted p-value of {adjusted}"
    if adjusted is None:
        return None
    if test.p_value is not None and adjusted < test.p_value * (1 - 1e-9):
        return f"adjusted p {adjusted:.3g} is below its p-value {test.p_value:.3g} (Holm only raises one)"
    if test.p_value is not None and adjusted > min(1.0, family * test.p_value) * (1 + 1e-9):
        return (
            f"adjusted p {adjusted:.3g} is more than {family} times its p-value {test.p_value:.3g} "
            f"(Holm over {family} tests raises one at most that much)"
        )
    strong_enough = test.aggregate_evidence or (
        test.flag_rate is not None and test.flag_rate >= 2 * test.expected_rate
    )
    if test.status == "fail" and not (adjusted < alpha and strong_enough):
        return (
            f"status 'fail' needs an adjusted p below alpha {alpha:g} (it is {adjusted:.3g}) and "
            f"at least twice the expected flag rate (it is {test.flag_rate})"
        )
    if test.status == "warn" and not adjusted < WARN_LEVEL:
        return f"status 'warn' needs an adjusted p below {WARN_LEVEL} (it is {adjusted:.3g})"
    if test.status == "pass" and adjusted < WARN_LEVEL:
        return f"status 'pass' with an adjusted p of {adjusted:.3g}, below {WARN_LEVEL}"
    return None


def _order(test: TestResult, seed: int, alpha: float) -> str | None:
    """canonical-order's p-value and z are what its shards' log-probabilities give (the one rule
    that re-runs a test: its randomization test takes milliseconds, and a report keeps all it reads
    since schema 1.6). To within the draws' own error, should a numpy draw its integers otherwise."""
    if test.name != "canonical-order" or test.statistic_name != "z" or test.p_value is None:
        return None
    if not test.shards or not all(shard.permuted_logprobs for shard in test.shards):
        return None  # a report before 1.6: the reorderings' log-probabilities weren't kept
    usable = []
    for shard in test.shards:
        logprobs = [shard.canonical_logprob, *shard.permuted_logprobs]
        if not shard.truncated and all(value is not None and math.isfinite(value) for value in logprobs):
            usable.append(standardized(logprobs))  # type: ignore[arg-type]  # None ruled out
    if len(usable) != test.n:
        return f"{len(usable)} of its shards can be judged, but it says it judged {test.n}"
    draws = randomization_draws(alpha)
    if test.permutations != draws:  # an edited count could hold the reader for hours
        return (
            f"its p-value is said to come of {test.permutations} draws, where alpha {alpha:g} takes {draws:,}"
        )
    given = randomization_test(usable, analysis_seed(seed, test.name), draws)
    slack = 5 * math.sqrt(given.p_value * (1 - given.p_value) / draws) + 2 / (1 + draws)
    if abs(given.p_value - test.p_value) > slack or not math.isclose(
        given.z, test.statistic or 0.0, abs_tol=1e-6
    ):
        return (
            f"its shards give z = {given.z:.3g}, p = {given.p_value:.3g}, not the z = {test.statistic:.3g} "
            f"and p = {test.p_value:.3g} it says"
        )
    return None


def _flags(test: TestResult, report: Report) -> str | None:
    """The flag rate lies in its interval, and the questions' own flags add up to the count."""
    interval = test.flag_rate_ci
    if interval is not None and test.flag_rate is not None:
        low, high = interval
        if not low - 1e-9 <= test.flag_rate <= high + 1e-9:
            return f"flag rate {test.flag_rate} is outside its interval ({low}, {high})"
    if test.kind == "aggregate" or test.status == "skipped":
        return None
    flagged = sum(
        1
        for item in report.items
        if not item.is_control and test.name in item.tests and item.tests[test.name].flagged
    )
    if flagged != test.n_flagged:
        return f"{test.n_flagged} flagged, but {flagged} of its questions are marked flagged"
    return None


def _index(report: Report) -> str | None:
    """The index follows the statuses, its band its value, and its direction the verdict."""
    index, code = report.index, report.verdict.code
    if (code == "inconclusive") != (index.value is None) or (index.value is None) != (index.band == "n/a"):
        return f"the evidence index {index.value} ({index.band}) does not go with the verdict {code!r}"
    components = index.components
    if [c.test for c in components] != [t.name for t in report.tests]:
        return "the evidence index weighs other tests than those the report lists"
    total = sum(c.base_weight for c in components if c.contributes)
    for component, test in zip(components, report.tests, strict=True):
        contributes = test.calibrated and test.status != "skipped"
        expected = {"pass": 0.0, "skipped": 0.0, "warn": WARN_STRENGTH}.get(test.status)
        strength = component.strength
        weight = component.base_weight / total if contributes and total else 0.0
        if (
            component.contributes != contributes
            or abs(component.weight - weight) > TOLERANCE
            or (expected is not None and abs(strength - expected) > TOLERANCE)
            or (test.status == "fail" and not 0.6 <= strength <= 1)
        ):
            return f"the evidence index weighs {test.name} other than its status {test.status!r} says"
    if index.value is None:
        return None
    weighed = sum(c.weight * c.strength for c in components if c.contributes)
    raised = code == "likely" and weighed < MODERATE and abs(index.value - MODERATE) <= TOLERANCE
    # the band is read off the value before it is rounded to 4 places: 0.45 may be 0.4499999...
    if (abs(index.value - weighed) > 1e-4 and not raised) or index.band not in (
        band_of(index.value),
        band_of(weighed),
    ):
        return f"the evidence index {index.value} ({index.band}) is not what its components weigh"
    if (
        (code == "clean" and index.value != 0)
        or (code == "evidence" and index.value > WARN_STRENGTH)
        or (code == "likely" and index.value < MODERATE)
    ):
        return f"the evidence index {index.value} points away from the verdict {code!r}"
    return None


def _run(report: Report) -> str | None:
    """The duration, from a monotonic clock (the start and finish times are the wall clock's, which
    a time server may set back during a run)."""
    if report.run.duration_s < 0:
        return f"run.duration_s is negative ({report.run.duration_s})"
    return None

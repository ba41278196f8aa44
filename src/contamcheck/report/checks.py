"""What a report's numbers say of each other, checked where it is read back or written.

Each rule is one ``stats.verdict`` and ``stats.index`` apply, so every report an audit makes keeps
it (one that did not would stop the audit as a bug, not be saved), and each of the 172 reports the
docs publish, of every schema version, keeps them all (tests/test_saved_reports.py reads them): a
report that breaks one was changed after its audit, and a gate re-reading it (``contamcheck
report``) must not take its verdict. The rules are the documented ones, not a re-run of the
analysis (but for canonical-order's randomization test, run again from what the report keeps:
milliseconds at the default alpha, once a process): they catch an edit made carelessly or naively
(a status or a verdict changed alone), not a forger who changes every number that depends on
another.
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING

import numpy as np

from ..methods import TESTS, analysis_seed
from ..methods.canonical_order import (
    MAX_ITEMS_PER_SHARD,
    MIN_ITEMS_PER_SHARD,
    RandomizationOutcome,
    can_judge,
    randomization_draws,
    randomization_test,
    randomization_z,
    spread,
    standardized,
)
from ..stats.index import MODERATE, WARN_STRENGTH, band_of
from ..stats.verdict import WARN_LEVEL
from .model import schema_minor

if TYPE_CHECKING:
    from .model import Report, TestResult

TOLERANCE = 1e-6  # for weights and strengths, sums of a few floats
# The most shard-draws the check of canonical-order's p-value runs (seconds): a genuine audit's are
# 10 x 100,000 at the default alpha, 10 x 10 million at the smallest; beyond (an edited file, or
# --order-shards in the hundreds at a tiny alpha) its z and its shards' numbers are checked alone
MOST_SHARD_DRAWS = 1_000_000_000


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
        said = _status(test, report.settings.alpha, family) or _flags(test, report) or _order(test, report)
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


def _order(test: TestResult, report: Report) -> str | None:
    """canonical-order's numbers are what its shards' log-probabilities give: each shard's, its z,
    and its p-value, the randomization test run again (the one rule that re-runs a test: a report
    keeps all it reads since schema 1.6). The p-value exactly where numpy is the audit's version,
    to within the draws' error otherwise (a numpy that draws its integers otherwise)."""
    if test.name != "canonical-order" or test.status == "skipped" or test.statistic_name != "z":
        return None
    if schema_minor(report.schema_version) < 6 and not any(shard.permuted_logprobs for shard in test.shards):
        return None  # a report before 1.6: the reorderings' log-probabilities weren't kept
    settings = report.settings
    said = _shards(test, settings.order_shards, settings.order_permutations)
    if said:
        return said
    usable: list[list[float]] = []  # each judged shard's log-probabilities, the published order's first
    for shard in test.shards:
        logprobs = [shard.canonical_logprob, *shard.permuted_logprobs]
        if can_judge(logprobs, shard.truncated):
            usable.append([value for value in logprobs if value is not None])  # none is
    if len(usable) != test.n:
        return f"{len(usable)} of its shards can be judged, but it says it judged {test.n}"
    if test.statistic is None or test.p_value is None:
        return "it gives no z or no p-value, though it ran"
    differences = [values[0] - float(np.mean(values[1:])) for values in usable]
    for name, value, computed in (
        ("mean", test.mean_difference, float(np.mean(differences))),
        ("median", test.median_difference, float(np.median(differences))),
    ):
        if value is None or not math.isclose(value, computed, rel_tol=1e-9, abs_tol=1e-9):
            return f"the {name} difference {value} is not its shards' ({computed!r})"
    z = randomization_z([standardized(values) for values in usable])
    if not math.isclose(z, test.statistic, rel_tol=1e-9, abs_tol=1e-9):
        return f"its shards give z = {z!r}, not the {test.statistic!r} it says"
    draws = randomization_draws(settings.alpha)
    if test.permutations != draws:  # an edited count could hold the reader for hours
        return (
            f"its p-value is said to come from {test.permutations:,} draws, where alpha "
            f"{settings.alpha:g} takes {draws:,}"
        )
    seed = analysis_seed(settings.seed, test.name)
    if seed < 0:
        return f"settings.seed {settings.seed} is negative, as no audit of schema 1.6 or later takes"
    if len(usable) * draws > MOST_SHARD_DRAWS:
        return None  # more than a genuine audit's at any alpha, but for --order-shards in the hundreds
    given = _rerun(tuple(tuple(values) for values in usable), seed, draws)
    if report.versions.get("numpy") == np.__version__:
        slack = 0.0  # the very draws again
    else:
        slack = 5 * math.sqrt(2 * given.p_value * (1 - given.p_value) / draws) + 2 / (1 + draws)
    if abs(given.p_value - test.p_value) > slack:
        return f"its shards give p = {given.p_value!r}, not the {test.p_value!r} it says"
    if test.min_attainable_p is None or not math.isclose(test.min_attainable_p, given.min_p, rel_tol=1e-9):
        return f"its shards give no p below {given.min_p!r}, not {test.min_attainable_p!r} as it says"
    return None


def _shards(test: TestResult, order_shards: int, order_permutations: int) -> str | None:
    """Each shard is one the settings could give, of the size and reorderings they give, and its
    own numbers are what its orderings' log-probabilities give."""
    if not test.shards:
        return "it ran on no shard"
    if len(test.shards) > order_shards:
        return f"{len(test.shards)} shards, where settings.order_shards is {order_shards}"
    size = test.shards[0].n_items
    if not MIN_ITEMS_PER_SHARD <= size <= MAX_ITEMS_PER_SHARD:
        return f"shards of {size} questions (a shard holds {MIN_ITEMS_PER_SHARD} to {MAX_ITEMS_PER_SHARD})"
    reorderings = min(order_permutations, math.factorial(size) - 1)
    for index, shard in enumerate(test.shards):
        where = f"shard {index}"
        if shard.index != index or shard.n_items != size:
            return (
                f"{where} is numbered {shard.index} and holds {shard.n_items} questions, not {index} and "
                f"{size}"
            )
        if len(shard.permuted_logprobs) != reorderings:
            return (
                f"{where} gives {len(shard.permuted_logprobs)} reorderings' log-probabilities, not "
                f"{reorderings}"
            )
        logprobs = [shard.canonical_logprob, *shard.permuted_logprobs]
        if not can_judge(logprobs, False):
            continue  # its numbers were not computed (null)
        permuted = [value for value in shard.permuted_logprobs if value is not None]  # none is
        mean = float(np.mean(permuted))
        computed = {
            "permuted_mean_logprob": mean,
            "permuted_std_logprob": spread(permuted),
            "statistic": shard.canonical_logprob - mean,  # type: ignore[operator]  # not None
        }
        for name, given in computed.items():
            value = getattr(shard, name)
            if value is None or not math.isclose(value, given, rel_tol=1e-9, abs_tol=1e-9):
                return f"{where}'s {name} {value} is not what its log-probabilities give ({given!r})"
    return None


@functools.lru_cache(maxsize=8)
def _rerun(shards: tuple[tuple[float, ...], ...], seed: int, draws: int) -> RandomizationOutcome:
    """The randomization test of these shards, once a process: a report is checked each time it is
    validated (read, saved, each rendering)."""
    return randomization_test([standardized(values) for values in shards], seed, draws)


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

"""Running each kind of test: from computed evidence to a TestResult and per-question records.

The tests themselves (``methods``) turn evidence into scores; the statistics (``stats``) turn
scores into flags and p-values; this module connects the two for each kind of test and writes what
every question contributed into the report's item records.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..benchmarks import Item
from ..controls import NO_TWIN, Controls
from ..evidence import Evidence
from ..methods import PerTextTest, Test
from ..methods.canonical_order import (
    MIN_SHARDS,
    CanonicalOrder,
    Shard,
    can_judge,
    minimum_detectable_effect,
    randomization_draws,
    randomization_test,
    said_passed_over,
)
from ..methods.guided import Guided
from ..report.model import BulkNull, ItemRecord, ItemTestResult, ShardResult, TestResult
from ..stats import label_permutation_test, sign_flip_test
from ..stats import wilson_interval as wilson
from ..stats.bulk import (
    MIN_QUESTIONS,
    MINORITY_BULK,
    BulkOutcome,
    bulk_tail_test,
    memorised_probability,
    minority,
    pile,
    twin_check,
)
from ..stats.flags import FlagOutcome
from ..stats.spread import TWINS_BACK, SpreadOutcome, spread_test, twin_backing, with_spread
from ..stats.verdict import MINORITY_WHY, WARN_LEVEL, minority_remedy, twins_why

BULK_SIMULATIONS = 2000
BULK_NULL = (
    "Questions the model never saw form one bell-shaped bulk of scores, wherever it sits (knowing the "
    "kind of text shifts the whole bulk); only memorised questions stand out above it."
)
UNPAIRED_NULL = (
    "Benchmark and control-file questions are exchangeable for the model: a benchmark question "
    "beats the control it must beat (about the controls' 95th percentile; the highest of fewer than "
    "19) no more often than the expected rate, and beats a control no more often than half the time."
)


@dataclass
class TextScores:
    """Per-text scores of one test: the tested model's, the reference's, and what is compared."""

    target: dict[str, float]
    reference: dict[str, float] | None

    def compared(self, text: str) -> float:
        if text not in self.target:
            return math.nan
        value = self.target[text]
        if self.reference is not None:
            value -= self.reference[text]
        return value


def base_result(test: Test, calibrated: bool, calibration: str, kind: str | None = None) -> TestResult:
    return TestResult(
        name=test.name,
        title=test.title,
        kind=kind or test.kind,  # type: ignore[arg-type]
        calibrated=calibrated,
        calibration=calibration,
        measures=test.measures,
        null_hypothesis=test.null_hypothesis,
        caveat=test.caveat,
        citation=test.citation,
        status="skipped",
    )


def skipped(test: Test, calibrated: bool, calibration: str, reason: str) -> TestResult:
    result = base_result(test, calibrated, calibration)
    result.skip_reason = reason
    return result


def score_texts(
    test: PerTextTest, texts: list[str], target: Evidence, reference: Evidence | None
) -> TextScores:
    usable = [t for t in texts if test.requests(t)]
    target_scores = {t: test.score(t, target) for t in usable}
    reference_scores = {t: test.score(t, reference) for t in usable} if reference is not None else None
    return TextScores(target_scores, reference_scores)


def _fill_flag_statistics(result: TestResult, n: int, outcome: FlagOutcome) -> None:
    """What every per-question test reports from its flags: counts, rate, threshold, p-value."""
    result.n = n
    result.n_flagged = outcome.flagged
    result.flag_rate = outcome.flagged / n
    result.flag_rate_ci = wilson(outcome.flagged, n)
    result.threshold = outcome.threshold
    result.p_value = outcome.p_value
    result.min_attainable_p = outcome.min_attainable_p
    result.permutations = outcome.permutations
    result.expected_rate = outcome.expected_rate


def run_per_text(
    test: PerTextTest,
    controls: Controls,
    scores: TextScores,
    evidence: Evidence,
    items: dict[str, ItemRecord],
    control_records: dict[str, ItemRecord],
    calibrated: bool,
    calibration: str,
    permutations: int,
    seed: int,
    tables: Path | None = None,
) -> TestResult:
    """A paired test (each question against its twins) or an unpaired one (against a control file).

    ``tables``: where the bulk null's simulated reference tables are kept (the cache folder), so a
    warm run does not simulate them again.
    """

    def generated(text: str) -> str | None:
        return test.detail(text, evidence) if text in scores.target else None

    def reference(text: str) -> float | None:
        return finite(scores.reference.get(text, math.nan)) if scores.reference is not None else None

    bulk = controls.paired and test.likelihood
    used_ids: list[str] = []
    statistics: list[float] = []
    without_twin = 0  # --twinless: judged by the bulk alone, and unscored by a paired test
    for item in controls.items:
        original = scores.compared(item.text)
        record = ItemTestResult(
            score=finite(original), reference_score=reference(item.text), generated=generated(item.text)
        )
        statistic = original
        if controls.paired and item.id not in controls.twins:
            without_twin += 1
            if not bulk:  # a paired test asked nothing about it: no entry, as for a test not run
                continue
        elif controls.paired:
            twins = controls.twins[item.id]
            twin_values = [scores.compared(t) for t in twins]
            twin_mean = float(np.mean(twin_values))
            record.twin_scores = [finite(v) for v in twin_values]
            record.twin_score = finite(twin_mean)
            if scores.reference is not None:
                record.reference_twin_score = finite(
                    float(np.mean([scores.reference.get(t, math.nan) for t in twins]))
                )
            record.twin_generated = generated(twins[0])
            statistic = original - twin_mean
            record.diff = finite(statistic)
        if math.isfinite(statistic):
            used_ids.append(item.id)
            statistics.append(statistic)
        items[item.id].tests[test.name] = record

    control_values = []
    if not controls.paired:
        for control in controls.controls:
            value = scores.compared(control.text)
            control_records[control.id].tests[test.name] = ItemTestResult(
                score=finite(value), generated=generated(control.text)
            )
            if math.isfinite(value):
                control_values.append(value)

    kind = "bulk" if bulk else "paired" if controls.paired else "unpaired"
    result = base_result(test, calibrated, calibration, kind)
    if not controls.paired:
        result.null_hypothesis = UNPAIRED_NULL
    elif bulk:
        result.null_hypothesis = BULK_NULL
    result.n_unscored = len(controls.items) - len(used_ids)
    reason = test.unscored_reason()
    if without_twin and not bulk:
        reason = f"{reason}, or no twin (--twinless)" if result.n_unscored > without_twin else NO_TWIN
    result.unscored_reason = reason if result.n_unscored else None
    if not statistics or (not controls.paired and not control_values):
        result.skip_reason = f"no question could be scored: {reason}"
        return result

    values = np.array(statistics)
    if bulk:
        return _bulk_result(result, controls, scores, items, test, used_ids, seed, tables, permutations)
    if controls.paired:
        outcome = sign_flip_test(values, permutations, seed)
    else:
        outcome = label_permutation_test(values, np.array(control_values), permutations, seed)
    for item_id, flagged in zip(used_ids, outcome.flags, strict=True):
        items[item_id].tests[test.name].flagged = bool(flagged)
    centre = 0.0 if controls.paired else float(np.median(control_values))
    if not controls.paired:
        # Unpaired, a question's difference is its score against the controls' median.
        for item_record in [*items.values(), *control_records.values()]:
            scored = item_record.tests.get(test.name)
            if scored is not None and scored.score is not None:
                scored.diff = scored.score - centre
        for control_record in control_records.values():
            entry = control_record.tests[test.name]
            entry.flagged = None if entry.score is None else entry.score > outcome.threshold
    _fill_flag_statistics(result, len(values), outcome)
    result.auroc_vs_controls = outcome.auroc
    result.mean_difference = float(values.mean()) - centre
    result.median_difference = float(np.median(values)) - centre
    return result


def _bulk_result(
    result: TestResult,
    controls: Controls,
    scores: TextScores,
    items: dict[str, ItemRecord],
    test: PerTextTest,
    used_ids: list[str],
    seed: int,
    tables: Path | None,
    permutations: int,
) -> TestResult:
    """Each question's own score against the bulk of the benchmark (see ``stats.bulk``).

    With a reference, a second whole-benchmark test runs beside the tail count: do the originals'
    scores spread more than their twins' (``stats.spread``)? A partial leak at a moderate level
    can lift the leaked half without leaving a tail apart from the bulk, and the twins, which the
    model cannot have memorised, carry the spread it would otherwise have. The test's p-value is
    twice the smaller of the two (Bonferroni), as for the control file's count and rank sum. A tail
    that neither the spread test nor the tail's own gain over its twins backs is withheld: it stands
    out with its twins (``stats.spread.shared_with_twins``). Without a reference too, where the
    spread test, which there finds a gain too often, can clear a tail but never condemn one.
    """
    by_id = {item.id: item for item in controls.items}
    originals = np.array([scores.compared(by_id[i].text) for i in used_ids])
    # --twinless: the questions without a twin are judged by the bulk like the rest; the familiarity
    # shift, the twins' check and the spread test use those with one
    paired_ids = [i for i in used_ids if i in controls.twins]
    with_twin = np.array([i in controls.twins for i in used_ids], dtype=bool)
    twins = np.array([np.mean([scores.compared(t) for t in controls.twins[i]]) for i in paired_ids])
    if len(originals) < MIN_QUESTIONS:
        result.skip_reason = too_few_for_the_bulk(len(originals), controls)
        return result
    piled = pile(originals)
    if piled is not None:  # no bell-shaped bulk, and no way above it: nothing to fit
        value, count = piled
        result.n = len(originals)
        remedy = "A larger -k (a score then rests on more words), or" if test.takes_k else "Pass"
        if scores.reference is not None and value == 0:  # the reference scores them as the model does
            remedy = (
                "Another --reference (one that is not this model in other words), or --reference none, or"
            )
        result.skip_reason = (
            f"{count} of {len(originals)} questions share one score exactly ({value:.4g}): they have it "
            "from words they share (an opening many questions have, where the score takes one or a few "
            "words, or a reference that scores them as the model does), so a question memorised can't "
            "rise above the rest and there is no bell-shaped bulk to fit; no question is flagged. "
            f"{remedy} --control FILE, questions of the same kind the model can't have seen: they need "
            "no bulk"
        )
        return result
    # One simulated null per number of questions, shared by the tests (seed 0): it is a reference
    # table of the procedure, not a draw that should differ between tests.
    outcome = bulk_tail_test(originals, BULK_SIMULATIONS, tables=tables)
    # A null holding a minority of the questions can't be told from a mis-fit: no flags, no count.
    withheld = minority(outcome.fit)
    spread: SpreadOutcome | None = None  # with a reference: beside the tail count in the p-value
    first: np.ndarray | None = None
    if len(paired_ids) >= MIN_QUESTIONS:
        # One twin per question: originals and the mean of several twins are not exchangeable.
        first = np.array([scores.compared(controls.twins[i][0]) for i in paired_ids])
        if scores.reference is not None:
            spread = spread_test(originals[with_twin], first, permutations, seed)
    # A tail the twins share is familiarity with part of the benchmark: no flags, no count either.
    # Only where every question has a twin (--twinless: the twins can't speak for the rest).
    # Without a reference the spread test leans toward a gain (never-seen originals spread more
    # than their twins: docs/METHODS.md), so it can clear a tail there, never condemn one: it is
    # asked only of a tail beyond chance, and is no part of the p-value unless it clears the tail.
    backing = spread
    no_reference_tail = outcome.p_value is not None and outcome.p_value < TWINS_BACK and not withheld
    if backing is None and first is not None and with_twin.all() and no_reference_tail:
        backing = spread_test(originals, first, permutations, seed)
    gain_p: float | None = None
    shared = False
    if backing is not None and first is not None and with_twin.all():
        gain_p, shared = twin_backing(outcome.p_value, int(np.sum(outcome.flags)), originals, first, backing)
        shared = shared and not withheld
        if spread is None and not shared:
            gain_p = None  # without a reference the twins only ever clear a tail: nothing to report
    # A question's probability of being the tail's means something only where the tail is more than
    # a chance bump: a clean model's one outlier fitted as a tail of one read "P(memorised) 1.00".
    beyond_chance = outcome.p_value is not None and outcome.p_value < WARN_LEVEL
    held = withheld or shared
    memorised = memorised_probability(originals, outcome.fit) if beyond_chance and not held else None
    for index, (item_id, flagged) in enumerate(zip(used_ids, outcome.flags, strict=True)):
        entry = items[item_id].tests[test.name]
        entry.flagged = None if held else bool(flagged)
        # to four places: a probability under a fitted model, not a measurement to 1e-300
        entry.p_memorised = None if memorised is None else round(float(memorised[index]), 4)
    preference = originals[with_twin] - twins
    familiarity: tuple[float, float, float] | None = None
    twins_above: int | None = None
    if len(preference):
        low, high = _median_interval(preference, seed)
        familiarity = (float(np.median(preference)), low, high)
        _, twins_above = twin_check(outcome.flags, twins, outcome.threshold)
    result.null = BulkNull(
        centre=outcome.fit.centre,
        scale=outcome.fit.scale,
        bulk_share=outcome.fit.bulk_share,
        components=outcome.fit.components,
        tail_share_low=outcome.tail_share_low,
        tail_centre=outcome.fit.tail_centre,
        tail_scale=outcome.fit.tail_scale,
        twin_preference=None if familiarity is None else familiarity[0],
        twin_preference_ci=None if familiarity is None else familiarity[1:],
        twins_above_threshold=twins_above,
        tail_p_value=outcome.p_value,
        # only with a reference: without one the spread test cleared a tail at most, and is no
        # evidence of its own (stats.spread.carries reads these as a whole-benchmark statistic)
        spread_correlation=None if spread is None else spread.correlation,
        spread_p_value=None if spread is None else spread.p_value,
        tail_gain_p_value=None if gain_p is None else min(1.0, gain_p),
        count_withheld=held,
        withheld_because="minority" if withheld else "twins" if shared else None,
    )
    if len(preference):
        result.mean_difference = float(preference.mean())
        result.median_difference = float(np.median(preference))
    # --twinless with a reference: too few questions with a twin for the spread test
    no_spread = None
    if spread is None and scores.reference is not None:
        no_spread = f"{len(paired_ids)} questions have a twin, {MIN_QUESTIONS} needed"
    if withheld:
        return _withheld_result(result, len(originals), outcome.fit.bulk_share, spread, no_spread)
    if shared and backing is not None and gain_p is not None:
        return _shared_result(
            result, outcome, backing, gain_p, familiarity, twins_above, len(paired_ids), spread is None
        )
    _fill_flag_statistics(result, len(originals), outcome)
    if spread is not None:
        result.p_value, result.min_attainable_p = with_spread(
            outcome.p_value, outcome.min_attainable_p, spread
        )
    beyond = outcome.tail_share_low
    if beyond <= 0:
        tail = "no tail beyond it that chance does not explain"
    elif outcome.p_value >= WARN_LEVEL:
        # the bound is against a normal bulk; never-seen samples, simulated, flag as many this often
        above = outcome.flagged
        tail = (
            f"{above} question{'s' if above != 1 else ''} above it, as many as chance gives a never-seen "
            f"benchmark (tail count p = {outcome.p_value:.2g}): no tail that chance does not explain"
        )
    else:
        share = _share(beyond)
        tail = f"beyond it, at least {share} of the questions (95% lower bound)"
    result.note = f"The never-seen bulk holds {outcome.fit.bulk_share:.0%} of the questions; {tail}. "
    centre = outcome.fit.centre if scores.reference is not None else None
    result.note += _familiarity(familiarity, twins_above, len(paired_ids), len(used_ids), centre)
    if no_spread is not None and paired_ids:  # none at all: the familiarity sentence says so
        result.note += f" No spread test against the twins: {no_spread}."
    if spread is not None:
        wider = (
            "more than their twins' (some questions gained more over their twins than the rest, as "
            "when part of the benchmark was seen)"
            if spread.p_value < 0.05
            else "no more than their twins', beyond chance"
        )
        result.note += (
            f" Spread against the twins: the originals' scores spread {wider}; rank correlation "
            f"{spread.correlation:+.2f}, p = {spread.p_value:.2g}. The tail count alone: "
            f"p = {outcome.p_value:.2g}; the test's p-value is twice the smaller."
        )
    return result


def too_few_for_the_bulk(count: int, controls: Controls, scored: bool = True) -> str:
    """Why a test against the bulk is skipped with ``count`` questions (``scored``: of those the
    sample drew, the ones that could be scored), and what would help."""
    # a larger -n helps only where the benchmark has the questions to draw
    remedy = (
        f"-n {MIN_QUESTIONS} or more"
        if controls.testable >= MIN_QUESTIONS
        else f"the benchmark has {controls.testable} "
        + ("questions long enough; drop --twinless and pass" if controls.twinless else "with twins;")
        + " --control FILE, questions of the same kind the model can't have seen, needs no bulk"
    )
    questions = f"{count} question{'' if count == 1 else 's'}"
    had = f"only {questions} could be scored" if scored else f"the sample holds {questions}"
    return f"{had}; the bulk needs {MIN_QUESTIONS} ({remedy})"


def _familiarity(
    familiarity: tuple[float, float, float] | None,
    twins_above: int | None,
    with_twin: int,
    questions: int,
    centre: float | None,
) -> str:
    """What the twins say of familiarity with this kind of text; with --twinless, over those that have
    one. Where none has, the bulk's centre says it with a reference (the tested model's score less
    the reference's), and nothing does without one."""
    if familiarity is None or twins_above is None:
        if centre is None:
            return (
                "Familiarity with this kind of text: not measured (no question has a twin and there is "
                "no reference, so the bulk's place says nothing about it)."
            )
        return (
            f"Familiarity with this kind of text: not measured (no question has a twin); the bulk sits at "
            f"{centre:+.3g}, the tested model's score less the reference's, which mixes familiarity with "
            "how the two models differ."
        )
    median, low, high = familiarity
    who = f"the {with_twin} of {questions} questions with a twin" if with_twin < questions else "originals"
    return (
        f"Familiarity with this kind of text: {who} score {_against_twins(median)} "
        f"(median, 95% interval {_signed(low)} to {_signed(high)}); "
        f"{twins_above} {'twin lies' if twins_above == 1 else 'twins lie'} above the threshold."
    )


def _signed(value: float) -> str:
    return "0" if value == 0 else f"{value:+.3g}"


def _against_twins(median: float) -> str:
    if median == 0:
        return "the same as their twins"
    return f"{-median:.3g} below their twins" if median < 0 else f"{median:+.3g} above their twins"


def _withheld_result(
    result: TestResult, n: int, share: float, spread: SpreadOutcome | None, no_spread: str | None = None
) -> TestResult:
    """A bulk test whose null holds a minority of the questions (``stats.bulk.minority``): no flags
    and no tail count. With a reference the spread test, which needs no null, is the test's p-value
    (one statistic, so not doubled); without one the test can't judge and says why (``no_spread``:
    why a reference gave no spread test)."""
    result.n = n
    why = (
        f"the never-seen bulk the fit found holds {share:.0%} of the questions, too few to be the null "
        f"(under {MINORITY_BULK:.0%}): {MINORITY_WHY}"
    )
    if spread is None:
        if no_spread is not None:
            result.skip_reason = (
                f"{why}, so no question is flagged and the count is not used; and there is no spread test "
                f"against the twins ({no_spread}). {minority_remedy(True)}"
            )
            return result
        result.skip_reason = (
            f"{why}, so no question is flagged and the count is not used. {minority_remedy()}"
        )
        return result
    _spread_alone(result, spread)
    result.note = (
        f"No flags and no tail count: {why}. The test's p-value is the spread test's against the twins, "
        f"which needs no null: rank correlation {spread.correlation:+.2f}, p = {spread.p_value:.2g}."
    )
    return result


def _shared_result(
    result: TestResult,
    outcome: BulkOutcome,
    spread: SpreadOutcome,
    gain_p: float,
    familiarity: tuple[float, float, float] | None,
    twins_above: int | None,
    paired: int,
    no_reference: bool = False,
) -> TestResult:
    """A bulk test whose tail stands out with its twins (``stats.spread.shared_with_twins``): no flags
    and no tail count, as for a minority null; the spread test, which asked whether the questions
    gained over their twins, is the test's p-value (one statistic, so not doubled). Without a
    reference it leans toward finding a gain, so it can clear the tail, not condemn one: the
    p-value is the larger of the tail count's and its own, never below the count's, and the JSON
    holds no spread test (``stats.spread.carries`` would read it as evidence of its own)."""
    n = len(outcome.flags)
    result.n = n
    _spread_alone(result, spread)
    if no_reference:
        # it can clear the tail, never condemn one: the test's p-value is never below the count's
        result.p_value = max(spread.p_value, outcome.p_value)
        result.min_attainable_p = max(spread.min_attainable_p, outcome.min_attainable_p)
    why = twins_why(reference=not no_reference)
    result.note = (
        f"No flags and no tail count: beyond the never-seen bulk ({outcome.fit.bulk_share:.0%} of the "
        f"questions) lies a tail of at least {_share(outcome.tail_share_low)} (95% lower bound; tail "
        f"count p = {outcome.p_value:.2g}), but it stands out with its twins: the questions did not gain "
        f"detectably over their twins, neither across the benchmark (spread test: rank correlation "
        f"{spread.correlation:+.2f}, p = {spread.p_value:.2g}) nor at the top, where the tail is "
        f"(p = {gain_p:.2g}). {why[0].upper()}{why[1:]}. "
        + (
            "Without a reference the spread test leans toward finding a gain, so it can clear a tail, "
            "not condemn one: the test's p-value is the larger of the two, the tail count's and the "
            "spread test's. "
            if no_reference
            else "The test's p-value is the spread test's. "
        )
        + _familiarity(familiarity, twins_above, paired, n, None)
    )
    return result


def _spread_alone(result: TestResult, spread: SpreadOutcome) -> None:
    """The spread test against the twins as a withheld test's p-value: one statistic, not doubled."""
    result.p_value, result.min_attainable_p = spread.p_value, spread.min_attainable_p
    result.permutations = spread.swaps


def _share(value: float) -> str:
    """A share of the questions as a percentage, never "0%" for a small one (0.4%, 0.04%)."""
    return f"{value:.0%}" if value >= 0.01 else f"{100 * value:.2g}%"


def _median_interval(values: np.ndarray, seed: int, resamples: int = 1000) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    medians = np.median(values[rng.integers(0, len(values), (resamples, len(values)))], axis=1)
    return float(np.quantile(medians, 0.025)), float(np.quantile(medians, 0.975))


GUIDED_CONTROL_NULL = (
    "Benchmark and control-file questions are exchangeable for the model under both instructions: "
    "naming the dataset helps a benchmark question no more than a control question of the same kind."
)


def run_guided(
    test: Guided,
    controls: Controls,
    evidence: Evidence,
    items: dict[str, ItemRecord],
    control_records: dict[str, ItemRecord],
    calibrated: bool,
    calibration: str,
    permutations: int,
    seed: int,
) -> TestResult:
    """Guided vs general instruction on the same question: each question's difference, tested with
    sign flips (uncalibrated), or against the control file's differences under the same two
    instructions (calibrated)."""
    # With twins: uncalibrated (shown, not counted in the verdict): the general instruction does not
    # cancel the effect of the guided one's wording. On HumanEval, SmolLM2-135M answers the guided
    # prompt by copying the first piece back ("The original form of the programming problem is:
    # def ..."), whose words recur in the second half, and the general one with unrelated prose:
    # 37% of 100 prompts flagged by instruction following alone. Twins don't cancel it without
    # cancelling memory too (a twin keeps its original's words), control questions do.
    unpaired = not controls.paired
    result = base_result(test, calibrated, calibration)
    if unpaired:
        result.null_hypothesis = GUIDED_CONTROL_NULL

    def overlaps(
        questions: Iterable[Item], records: dict[str, ItemRecord]
    ) -> tuple[list[str], np.ndarray, np.ndarray]:
        """(ids scored, guided overlaps, general overlaps), each question's written into ``records``."""
        used, guided_values, general_values = [], [], []
        for item in questions:
            completions = test.completions(item.text, evidence)
            if completions is None:
                continue
            guided, general = test.overlaps(item.text, evidence)
            records[item.id].tests[test.name] = ItemTestResult(
                score=finite(guided),
                general_score=finite(general),
                diff=finite(guided - general),
                generated=completions[0],
                general_generated=completions[1],
            )
            used.append(item.id)
            guided_values.append(guided)
            general_values.append(general)
        return used, np.array(guided_values), np.array(general_values)

    used_ids, guided_array, general_array = overlaps(controls.items, items)
    result.n_unscored = len(controls.items) - len(used_ids)
    result.unscored_reason = "too short to split in two" if result.n_unscored else None
    if not used_ids:
        result.skip_reason = "no question long enough to split in two"
        return result
    reason, diagnosis = test.diagnose(guided_array, general_array)
    if reason is not None:
        result.skip_reason = reason
        return result
    diffs = guided_array - general_array
    note = diagnosis or ""
    if unpaired:
        control_ids, control_guided, control_general = overlaps(controls.controls, control_records)
        control_diffs = control_guided - control_general
        if not control_ids:
            result.skip_reason = "no control question long enough to split in two"
            return result
        outcome = label_permutation_test(diffs, control_diffs, permutations, seed)
        for control_id, value in zip(control_ids, control_diffs, strict=True):
            control_records[control_id].tests[test.name].flagged = bool(value > outcome.threshold)
        result.auroc_vs_controls = outcome.auroc
        centre = float(np.median(control_diffs))
        note += (
            f" Against {len(control_ids)} control question{'' if len(control_ids) == 1 else 's'} "
            "under the same two instructions "
            f"(their median difference {centre:+.2f})."
        )
    else:
        outcome = sign_flip_test(diffs, permutations, seed)
        centre = 0.0
    for item_id, flagged in zip(used_ids, outcome.flags, strict=True):
        items[item_id].tests[test.name].flagged = bool(flagged)
    _fill_flag_statistics(result, len(diffs), outcome)
    result.mean_difference = float(diffs.mean()) - centre
    result.median_difference = float(np.median(diffs)) - centre
    recall = np.array(
        [r for r in (test.number_recalls(items[i].text, evidence) for i in used_ids) if not math.isnan(r[0])]
    )
    if len(recall):
        note += (
            f" New numbers of the second half written: {np.mean(recall[:, 0]):.0%} guided vs "
            f"{np.mean(recall[:, 1]):.0%} general."
        )
    result.note = note
    return result


def run_canonical_order(
    test: CanonicalOrder, shards: list[Shard], evidence: Evidence, alpha: float, seed: int, tests: int = 1
) -> TestResult:
    """Per-shard published-order preference, a randomization test across shards. ``tests``: the
    calibrated tests the verdict weighs together (Holm), so that on its own this one must reach
    alpha / tests, the effect its note says it can detect."""
    result = base_result(test, True, "random reorderings of the same questions")
    outcomes = test.outcomes(shards, evidence)
    usable = [o for o in outcomes if can_judge([o.canonical, *o.permuted], o.truncated)]
    result.shards = [
        ShardResult(
            index=o.shard.index,
            first_position=o.shard.items[0].position,
            n_items=len(o.shard.items),
            canonical_logprob=o.canonical,
            permuted_mean_logprob=o.permuted_mean,
            permuted_std_logprob=o.permuted_std,
            statistic=o.statistic,
            truncated=o.truncated,
            permuted_logprobs=list(o.permuted),
        )
        for o in outcomes
    ]
    truncated = sum(o.truncated for o in outcomes)
    infinite = len(outcomes) - len(usable) - truncated  # the rest left out
    passed = said_passed_over([why for shard in shards for why in shard.passed_over])
    if len(usable) < MIN_SHARDS:
        if infinite:
            result.skip_reason = (
                f"only {len(usable)} of {len(outcomes)} shards can be judged: {truncated} longer than the "
                f"model's context window, {infinite} scored not finite (need {MIN_SHARDS})"
            )
        else:
            fit = {0: "no shard fits", 1: "only 1 shard fits"}.get(
                len(usable), f"only {len(usable)} shards fit"
            )
            result.skip_reason = f"{fit} the model's context window whole (need {MIN_SHARDS})"
        result.skip_reason += "".join(f"; {said}" for said in passed)
        return result
    values = np.array([o.statistic for o in usable])
    draws = randomization_draws(alpha)
    outcome = randomization_test(usable, seed, draws)
    result.n = len(usable)
    result.statistic_name = "z"
    result.statistic = outcome.z
    result.p_value = outcome.p_value
    result.min_attainable_p = outcome.min_p
    result.permutations = draws
    result.mean_difference = float(values.mean())
    result.median_difference = float(np.median(values))
    # Holm's first step: what this test must reach for the verdict to rest on it alone
    bar = alpha / tests
    at = (
        f"alpha {alpha:g}" if tests == 1 else f"p < {bar:.2g} (alpha {alpha:g} over {tests} calibrated tests)"
    )
    effect = minimum_detectable_effect(usable, bar)
    first = shards[0]  # every shard has its size and as many reorderings
    result.note = (
        f"{len(usable)} shards of {len(first.items)} "
        f"consecutive questions from the start of the benchmark, {len(first.orderings)} reorderings each "
        f"(Oren et al. used 50 shards x 250 on GPUs); p from {draws:,} random choices of "
        f"which ordering in each shard is the published one (no smaller p than {outcome.min_p:.2g}). "
        + (
            f"With 80% power at {at} this detects a published order scoring about {effect:.1f} "
            "standard deviations of its shard's orderings above their mean, on average."
            if math.isfinite(effect) and outcome.min_p < bar
            else f"No published-order preference can reach {at} with {draws:,} draws, the most "
            "an audit takes: choose a larger --alpha."
            if 1 / (1 + draws) >= bar
            else f"No published-order preference can reach {at} with these shards and "
            "reorderings: raise --order-shards or --order-permutations."
        )
    )
    if len(shards) < test.settings.order_shards:
        result.note += (
            f" --order-shards asked for {test.settings.order_shards}; the benchmark's questions fill "
            f"{len(shards)}{' besides the blocks left out' if passed else ''}."
        )
    if passed:
        result.note += " Of the benchmark, " + "; ".join(passed) + "."
    for count, why in (
        (truncated, "longer than the model's context window"),
        (infinite, "scored not finite"),
    ):
        if count:
            result.note += f" {count} shard{'s' if count != 1 else ''} left out: {why}."
    return result


def finite(value: float | None) -> float | None:
    return float(value) if value is not None and math.isfinite(value) else None

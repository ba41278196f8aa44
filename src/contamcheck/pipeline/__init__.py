"""The audit: load questions, build controls, plan and compute evidence, run tests, judge.

Data flows one way (SPEC §3)::

    benchmarks -> controls -> tests declare evidence -> engine computes it -> tests score -> stats -> report

Every test's requests are gathered first and computed together, so a text that several tests
need is scored once; the tested model is then released before a reference model is loaded.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import platform
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from pydantic import ValidationError

from .. import __version__, memory
from ..backends import ModelOptions, check_spec
from ..benchmarks import Benchmark, load_benchmark
from ..benchmarks.hf_datasets import parse_spec as parse_hub_spec
from ..config import AuditConfig
from ..controls import Controls, build_controls
from ..errors import InputError, RuntimeFailure
from ..evidence import Evidence, EvidenceEngine, EvidenceStore, MemoryStore, Request, ScoreRequest
from ..evidence.cache import NULLS_DIR, EvidenceCache
from ..evidence.engine import ANALYSIS, CACHE_WAIT, FAILED, ProgressCallback
from ..methods import TESTS, MethodSettings, PerTextTest, Test, analysis_seed, create_test
from ..methods.canonical_order import CanonicalOrder, Shard
from ..methods.guided import Guided
from ..report.io import first_error
from ..report.model import (
    BenchmarkInfo,
    ItemRecord,
    ModelInfo,
    ReferenceInfo,
    Report,
    RunInfo,
    SampleInfo,
    Settings,
    TestResult,
)
from ..stats import EXPECTED_RATE, is_calibrated, judge
from ..stats.bulk import MIN_QUESTIONS
from ..stats.verdict import listed
from . import assemble
from .handles import (
    ModelHandle,
    NumbersCheck,
    SameNumbers,
    auto_batch_sizes,
    check_reference,
    close_numbers_warning,
    naming_the_reference,
    none_can_run,
    resolve_reference,
    same_hub_model,
    same_weights_error,
    unrunnable,
)
from .runners import (
    run_canonical_order,
    run_guided,
    run_per_text,
    score_texts,
    skipped,
    too_few_for_the_bulk,
)

__all__ = ["TWINS", "AuditPlan", "ModelHandle", "audit", "plan_audit"]

# Every question gets its twins before the sample is drawn (the report counts those set aside): about
# 0.1 ms a question on a laptop's core, so a benchmark this large says so as a step of its own
TWINS = "benchmark: making number twins"
TWINS_SAID_FROM = 10_000  # questions


def audit(
    config: AuditConfig,
    progress: ProgressCallback | None = None,
    store: EvidenceStore | None = None,
) -> Report:
    """Audit ``config.model`` on ``config.benchmark`` and return the report (no printing).

    ``progress(label, done, total)`` hears each step: making the twins of a large benchmark
    (``TWINS``, questions), connecting to a server (``openai:`` models)
    and loading a model (total 0 until done; -1, ``contamcheck.evidence.engine.FAILED``, when it
    failed), scoring and generating (texts), then the analysis (tests); each count once. A write to
    the cache that waits for another process's is a step too (``CACHE_WAIT``, with no count). An
    exception it raises stops the audit; what was computed stays in the cache.

    A cache it opens itself it also closes, so its file is whole on disk when the call returns (a
    store passed in stays open: it is the caller's)."""
    if not isinstance(config, AuditConfig):
        raise TypeError(
            f"audit() takes an AuditConfig, not {type(config).__name__}: audit(AuditConfig(model=…))."
        )
    if progress is not None and not _takes_three(progress):
        raise TypeError(f"progress must be callable as progress(label, done, total), not {_named(progress)}.")
    if store is not None and not isinstance(store, EvidenceStore):  # its methods, by name
        raise TypeError(
            f"store must be an evidence store (contamcheck.evidence.EvidenceCache(folder) or "
            f"MemoryStore()), not {type(store).__name__}; leave it out to use the cache config.cache names."
        )
    started_at = datetime.now(timezone.utc)
    started = time.perf_counter()
    check_inputs(config)  # before the cache is created
    if store is None and not config.no_cache:
        EvidenceCache.check(config.cache)  # before the benchmark is read: it can take a while
    plan = plan_audit(config, progress)
    with _torch_threads_kept():
        if store is not None:
            return _audit(config, plan, progress, store, started_at, started)
        opened = (
            MemoryStore() if config.no_cache else EvidenceCache(config.cache, on_wait=_wait_said(progress))
        )
        try:
            return _audit(config, plan, progress, opened, started_at, started)
        finally:
            if isinstance(opened, EvidenceCache):
                opened.close()


def _takes_three(progress: object) -> bool:
    """Whether ``progress`` can be called with a label, a count done and a total (a callable whose
    signature can't be read, a builtin, is taken at its word)."""
    if not callable(progress):
        return False
    try:
        inspect.signature(progress).bind("label", 0, 0)
    except TypeError:
        return False
    except ValueError:  # no signature to read
        return True
    return True


def _named(progress: object) -> str:
    """What was given as ``progress``: its type, or a callable's name and signature."""
    name = getattr(progress, "__name__", type(progress).__name__)
    if not callable(progress):
        return type(progress).__name__
    try:
        return f"{name}{inspect.signature(progress)}"
    except (TypeError, ValueError):
        return name


def _wait_said(progress: ProgressCallback | None) -> Callable[[bool | None], None] | None:
    """The cache's waits for another process's write, as a step of the progress with no count."""
    if progress is None:
        return None
    told = progress

    def said(waiting: bool | None) -> None:
        told(CACHE_WAIT, *((0, 0) if waiting else (1, 1) if waiting is False else (0, FAILED)))

    return said


@contextlib.contextmanager
def _torch_threads_kept() -> Iterator[None]:
    """torch's thread count as the caller had it, after an audit that set its own (``--threads``);
    nothing to keep where the caller has not imported torch. The count is the process's: audits in
    two threads at once set it for each other, as any two torch users would."""
    torch = sys.modules.get("torch")
    before = torch.get_num_threads() if torch is not None else 0
    try:
        yield
    finally:
        if torch is not None and torch.get_num_threads() != before:
            torch.set_num_threads(before)


def _audit(
    config: AuditConfig,
    plan: AuditPlan,
    progress: ProgressCallback | None,
    store: EvidenceStore,
    started_at: datetime,
    started: float,
) -> Report:
    progress = progress or (lambda label, done, total: None)
    cache_dir = store.folder if isinstance(store, EvidenceCache) else None

    benchmark, controls, tests, texts = plan.benchmark, plan.controls, plan.tests, plan.texts
    control_benchmark, shard_plans, requests = plan.control_benchmark, plan.shard_plans, plan.requests
    permutations = config.permutations_for(len(tests))
    options = config.model_options(cache_dir)

    target = ModelHandle(config.model, options, store, progress)
    # A server whose log-probs can't be used still runs the tests that only generate.
    unscorable = target.description.cannot_score
    likelihood_tests = [t for t in tests if t.likelihood and isinstance(t, PerTextTest)]
    calibrated_by_reference = bool(likelihood_tests) and not unscorable
    named_reference = (
        check_reference(config, options, store, target.description) if calibrated_by_reference else None
    )
    cannot = unrunnable(tests, target.description, named_reference)
    if len(cannot) == len(tests):  # a test that can't run is skipped with its reason; all: refused
        raise none_can_run(config, target.description, named_reference, cannot)
    if unscorable:
        requests = [r for r in requests if not isinstance(r, ScoreRequest)]
    if config.batch_size:
        batch_size = generation_batch_size = config.batch_size
    else:
        batch_size, generation_batch_size = auto_batch_sizes(target.description)
    target_engine = EvidenceEngine(
        target.get, target.namespace, store, batch_size, progress, generation_batch_size
    )
    target_evidence = target_engine.compute(requests, "model")
    target_info = target.info
    target.release()  # free its memory before a reference model loads

    if unscorable:  # no likelihood test runs: nothing to calibrate
        reason = "the model's log-probs can't be used, so no likelihood test runs"
        work = ReferenceWork(ReferenceInfo(status="none", requested=config.reference, reason=reason))
    elif not likelihood_tests:  # none is loaded, not even the automatic one
        reason = "no test chosen compares with a reference (only the likelihood tests do)"
        work = ReferenceWork(ReferenceInfo(status="none", requested=config.reference, reason=reason))
    else:
        reference_requests = [r for test in likelihood_tests for text in texts for r in test.requests(text)]
        sizes = (batch_size, generation_batch_size)
        work = _reference_work(
            config, options, target, target_info, target_evidence, reference_requests, store, progress, sizes
        )
    reference_info, reference, reference_evidence = work.info, work.handle, work.evidence
    reference_engine = work.engine
    # with a control file the reference also cancels how the file differs in kind from the
    # benchmark: alone it may stand out for that, so it is checked with twins only
    also_reads_likely: list[str] = []
    if reference_evidence is not None and controls.items and controls.paired:
        check = (config, likelihood_tests, controls, texts)
        stands_out = _stands_out_alone(*check, reference_evidence, permutations, cache_dir)
        # Where the model's own scores read "likely" too, the two may share how this benchmark's
        # scores spread without a reference (a clean reference then still calibrates), or have seen
        # the same questions: the reference is kept, and the caveat says so.
        model_too = bool(stands_out) and bool(
            _stands_out_alone(*check, target_evidence, permutations, cache_dir)
        )
        if stands_out and model_too:
            also_reads_likely = [assemble.reads_likely_too(reference_info, stands_out)]
        elif stands_out:  # judged as if there were none: the tested model's own scores against the bulk
            reference_info = reference_info.model_copy(
                update={
                    "status": "passed-over",
                    "reason": assemble.passed_over_reason(reference_info, stands_out),
                }
            )
            reference_evidence = None
    handles = [target, *work.passed_over, reference]
    models_loaded = [h.description.name for h in handles if h is not None and h.loaded]

    # Score, test, judge.
    has_reference = reference_info.status == "used"
    items = {
        item.id: ItemRecord(
            id=item.id, position=item.position, text=item.text, twins=list(controls.twins.get(item.id, ()))
        )
        for item in controls.items
    }
    control_records = {
        item.id: ItemRecord(id=item.id, position=item.position, text=item.text, is_control=True)
        for item in controls.controls
    }
    results: list[TestResult] = []
    # canonical-order is judged last (in its place among the results): what its note says it can
    # detect is at Holm's first step, alpha over the calibrated tests that ran
    orders: dict[int, tuple[CanonicalOrder, list[Shard], int]] = {}
    for done, test in enumerate(tests):
        # a step of its own (a large benchmark's permutations take a while), and a point where a
        # web UI audit's cancel is heard
        progress(ANALYSIS, done, len(tests))
        seed = analysis_seed(config.seed, test.name)
        if isinstance(test, CanonicalOrder):
            shards = shard_plans[test.name]
            if unscorable or isinstance(shards, str):
                reorderings = "random reorderings of the same questions"
                results.append(skipped(test, test.calibrated, reorderings, unscorable or str(shards)))
            else:
                orders[len(results) + len(orders)] = (test, shards, seed)  # its place among the results
            continue
        calibrated = test.calibrated_against(not controls.paired) and is_calibrated(
            test.likelihood, has_reference, not controls.paired
        )
        calibration = describe_calibration(test, controls, has_reference)
        if not controls.items:
            results.append(skipped(test, calibrated, calibration, assemble.no_items_reason(controls)))
        elif unscorable and test.likelihood:
            results.append(skipped(test, calibrated, calibration, unscorable))
        elif isinstance(test, Guided):
            results.append(
                run_guided(
                    test,
                    controls,
                    target_evidence,
                    items,
                    control_records,
                    calibrated,
                    calibration,
                    permutations,
                    seed,
                )
            )
        elif isinstance(test, PerTextTest):
            use_reference = test.likelihood and reference_evidence is not None
            scores = score_texts(
                test,
                texts_for(test, controls, texts),
                target_evidence,
                reference_evidence if use_reference else None,
            )
            results.append(
                run_per_text(
                    test,
                    controls,
                    scores,
                    target_evidence,
                    items,
                    control_records,
                    calibrated,
                    calibration,
                    permutations,
                    seed,
                    cache_dir / NULLS_DIR if cache_dir else None,
                )
            )

    others = sum(r.calibrated and r.p_value is not None for r in results)
    for at, (test, shards, seed) in orders.items():  # in the tests' order, so each lands at its place
        order = run_canonical_order(test, shards, target_evidence, config.alpha, seed, others + len(orders))
        results.insert(at, order)
    progress(ANALYSIS, len(tests), len(tests))
    # questions without a twin were tested: a benchmark seen whole can't be cleared by the bulk alone
    verdict, index = assemble.judged(results, config.alpha, controls.without_twin > 0, config.fail_on)

    # a reference the self-check passed over did its work (its scores audited alone), not the audit's
    checked = reference_info.model
    reference_role = (
        f"reference passed over ({checked.spec})"
        if reference_info.status == "passed-over" and checked is not None
        else "reference"
    )
    try:
        return Report(
            tool="contamcheck",
            version=__version__,
            model=target_info,
            reference=reference_info,
            benchmark=BenchmarkInfo(
                spec=benchmark.spec,
                name=benchmark.name,
                field=benchmark.field,
                source=benchmark.source,
                n_questions=len(benchmark.items),
                content_hash=benchmark.content_hash,
                ordered=benchmark.ordered,
            ),
            control=assemble.control_info(controls, control_benchmark),
            sample=SampleInfo(
                requested=config.limit,
                tested=len(controls.items),
                testable=controls.testable,
                seed=config.seed,
                set_aside=controls.set_aside,
            ),
            settings=Settings(
                tests=[t.name for t in tests],
                quick=config.quick,
                limit=config.limit,
                seed=config.seed,
                alpha=config.alpha,
                k=config.k,
                permutations=permutations,
                expected_rate=EXPECTED_RATE,
                twins_per_question=config.twins,
                twinless=config.twinless,
                batch_size=batch_size,
                generation_batch_size=generation_batch_size,
                reference=config.reference,
                order_shards=config.order_shards,
                order_permutations=config.order_permutations,
            ),
            tests=results,
            verdict=verdict,
            index=index,
            items=[*items.values(), *control_records.values()],
            caveats=assemble.caveats(results, reference_info, controls, config.model) + also_reads_likely,
            warnings=assemble.warnings(target_engine, reference_engine)
            # how close a reference's numbers lie to the model's says nothing once it is passed over
            + (work.warnings if reference_info.status != "passed-over" else [])
            + assemble.threads_warning(config, target.backend)
            + [note for handle in handles if handle is not None for note in handle.notes]
            + (store.notes if isinstance(store, EvidenceCache) else []),
            versions=assemble.versions(),
            run=RunInfo(
                started_at=started_at.isoformat(timespec="seconds"),
                finished_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                duration_s=round(time.perf_counter() - started, 3),
                host=platform.node(),
                threads=config.threads_used,
                peak_memory_mb=assemble.peak_memory_mb(),
                returns_freed_memory=memory.returning_freed_memory(),
                models_loaded=models_loaded,
                cache=str(cache_dir) if cache_dir else None,
                evidence={
                    role: assemble.evidence_use(engine.stats)
                    for role, engine in (
                        ("model", target_engine),
                        *(
                            (f"reference passed over ({spec})", e)
                            for spec, e in work.passed_over_engines.items()
                        ),
                        (reference_role, reference_engine),
                    )
                    if engine is not None
                },
            ),
        )
    except ValidationError as exc:  # a rule of report.checks the audit broke: ours, not the input's
        raise RuntimeFailure(
            f"The audit's report breaks one of its own rules ({first_error(exc)}). This is a bug in "
            "contamcheck: please report it with this message. What was computed is kept."
        ) from exc


@dataclass(frozen=True)
class AuditPlan:
    """What an audit will ask of the tested model, decided before any model is touched."""

    benchmark: Benchmark
    control_benchmark: Benchmark | None
    controls: Controls
    tests: list[Test]
    texts: list[str]  # questions, twins and control questions, each once
    shard_plans: dict[str, list[Shard] | str]  # canonical-order shards, or why there are none
    requests: list[Request]  # every test's evidence requests (duplicates included; the engine dedupes)


@dataclass
class ReferenceWork:
    """The reference as the audit used it: why (or why not), its evidence, and what to warn about."""

    info: ReferenceInfo
    handle: ModelHandle | None = None
    evidence: Evidence | None = None
    engine: EvidenceEngine | None = None
    warnings: list[str] = field(default_factory=list)
    passed_over: list[ModelHandle] = field(default_factory=list)  # automatic ones that were the model
    # what each passed-over one computed before it was found out (its first batch), by spec
    passed_over_engines: dict[str, EvidenceEngine] = field(default_factory=dict)


def _reference_work(
    config: AuditConfig,
    options: ModelOptions,
    target: ModelHandle,
    target_info: ModelInfo,
    target_evidence: Evidence,
    requests: list[Request],
    store: EvidenceStore,
    progress: ProgressCallback,
    sizes: tuple[int, int],
) -> ReferenceWork:
    """The reference's evidence for ``requests``, its first batch checked against the model's own
    numbers: an explicit reference that repeats them is refused (:class:`SameNumbers`), an
    automatic one passed over for the next GPT-2 in size. ``sizes``: the scoring and generation
    batch sizes."""
    passed_over: list[ModelHandle] = []
    engines: dict[str, EvidenceEngine] = {}
    while True:
        names = [h.spec for h in passed_over]
        info, handle = resolve_reference(config, target_info, options, store, progress, names)
        if handle is None or not requests:
            return ReferenceWork(info, handle, passed_over=passed_over, passed_over_engines=engines)
        engine = EvidenceEngine(handle.get, handle.namespace, store, sizes[0], progress, sizes[1])
        check = NumbersCheck(handle.spec, target_evidence, kept=isinstance(store, EvidenceCache))
        # fake models share their numbers by design, but for the questions one has memorised
        fake = "fake" in (target.backend, handle.backend)
        try:
            evidence = engine.compute(requests, "reference", None if fake else check)
            info.model = handle.info  # before the release: it may load the model to count parameters
        except SameNumbers:
            if config.reference != "auto":
                raise
            passed_over.append(handle)  # the tested model under another name, as if named so
            engines[handle.spec] = engine
            continue
        finally:
            handle.release()
        warnings = close_numbers_warning(handle.spec, check.gap, explicit=config.reference != "auto")
        return ReferenceWork(info, handle, evidence, engine, warnings, passed_over, engines)


def _stands_out_alone(
    config: AuditConfig,
    tests: list[PerTextTest],
    controls: Controls,
    texts: list[str],
    evidence: Evidence,
    permutations: int,
    cache_dir: Path | None,
) -> list[TestResult]:
    """The likelihood tests a model fails on ``evidence`` alone, audited without a reference (its
    own scores against the bulk): for a reference, questions that stand out for it were likely seen
    by it. Empty where that audit would not read "likely contaminated"."""
    scratch = {
        item.id: ItemRecord(id=item.id, position=item.position, text=item.text) for item in controls.items
    }
    spare = {
        c.id: ItemRecord(id=c.id, position=c.position, text=c.text, is_control=True)
        for c in controls.controls
    }
    results = []
    for test in tests:
        calibrated = test.calibrated_against(not controls.paired) and is_calibrated(
            test.likelihood, False, not controls.paired
        )
        scores = score_texts(test, texts_for(test, controls, texts), evidence, None)
        seed = analysis_seed(config.seed, test.name)
        tables = cache_dir / NULLS_DIR if cache_dir else None
        results.append(
            run_per_text(
                test, controls, scores, evidence, scratch, spare, calibrated, "", permutations, seed, tables
            )
        )
    judgement = judge(results, config.alpha, twinless=controls.without_twin > 0)
    if judgement.code != "likely":
        return []
    # A tail that stands out with its twins (the kind of text rather than the questions) was withheld
    # by run_per_text, as in any audit without a reference: a reference that knows the kind well is
    # no reason to pass it over.
    return [r for r in results if r.calibrated and judgement.statuses[r.name] == "fail"]


def check_inputs(config: AuditConfig) -> None:
    """Fail on what the inputs' own text and the file system can say is wrong, at once and without
    reading a model, a benchmark or the network: a model or reference that names nothing usable, the
    model as its own reference by name, a malformed ``hf:`` spec, ``--quick`` with no likelihood test
    among ``--tests``. The web form runs it before an audit waits in line."""
    check_spec(config.model)
    if config.reference not in ("auto", "none"):
        with naming_the_reference():
            check_spec(config.reference)
        if same_hub_model(config.reference, config.model):
            raise same_weights_error(config.reference)
    for spec in (config.benchmark, config.control):
        if spec is not None and spec.startswith("hf:"):
            parse_hub_spec(spec)
    select_test_names(config)


def plan_audit(config: AuditConfig, progress: ProgressCallback | None = None) -> AuditPlan:
    """The benchmark read, its sample drawn with its controls, and every request the tests make.
    ``progress`` hears the making of the twins (``TWINS``) of a benchmark large enough to take a while.
    An audit every test of which would be skipped whatever the model says is refused here
    (:func:`nothing_to_judge`), before any model loads."""
    benchmark = load_benchmark(config.benchmark, config.field, ordered=config.ordered)
    control_benchmark = (
        load_benchmark(config.control, config.control_field, role="control") if config.control else None
    )
    told = progress if len(benchmark.items) >= TWINS_SAID_FROM and control_benchmark is None else None
    controls = build_controls(
        benchmark,
        config.limit,
        config.seed,
        control_benchmark,
        config.twins,
        config.twinless,
        functools.partial(told, TWINS) if told is not None else None,
    )
    settings = MethodSettings(
        k=config.k,
        seed=config.seed,
        alpha=config.alpha,
        dataset=benchmark.title or benchmark.name,
        split=benchmark.split,
        benchmark_kind=benchmark.kind,
        order_shards=config.order_shards,
        order_permutations=config.order_permutations,
    )
    tests = select_tests(config, settings)
    texts = texts_under_test(controls)
    shard_plans: dict[str, list[Shard] | str] = {
        t.name: t.plan(benchmark) for t in tests if isinstance(t, CanonicalOrder)
    }
    skips = known_skips(tests, controls, shard_plans)
    if tests and len(skips) == len(tests):  # a report of skips only: said before any model loads
        others = [create_test(name, settings) for name in TESTS.names() if name not in skips]
        plans = {t.name: t.plan(benchmark) for t in others if isinstance(t, CanonicalOrder)}
        able = [t.name for t in others if t.name not in known_skips([t], controls, plans)]
        raise nothing_to_judge(config, skips, able)
    requests: list[Request] = []
    for test in tests:
        if isinstance(test, PerTextTest):
            requests += [r for text in texts_for(test, controls, texts) for r in test.requests(text)]
        elif isinstance(test, Guided):
            asked = [*controls.items, *controls.controls]  # controls: none with twins
            requests += [r for item in asked for r in test.requests(item.text)]
        elif isinstance(test, CanonicalOrder):
            shards = shard_plans[test.name]
            if isinstance(shards, list):
                requests += test.requests(shards)
    return AuditPlan(benchmark, control_benchmark, controls, tests, texts, shard_plans, requests)


def known_skips(
    tests: list[Test], controls: Controls, shard_plans: dict[str, list[Shard] | str]
) -> dict[str, str]:
    """The tests that will be skipped whatever the model says, each with why (as its report says):
    no question could be tested, fewer questions than the bulk needs, or the benchmark can't be cut
    into canonical-order's shards."""
    why: dict[str, str] = {}
    for test in tests:
        if isinstance(test, CanonicalOrder):
            shards = shard_plans.get(test.name)
            if isinstance(shards, str):
                why[test.name] = shards
        elif not controls.items:
            why[test.name] = assemble.no_items_reason(controls)
        elif test.likelihood and controls.paired and len(controls.items) < MIN_QUESTIONS:
            why[test.name] = too_few_for_the_bulk(len(controls.items), controls, scored=False)
    return why


def nothing_to_judge(config: AuditConfig, skips: dict[str, str], able: list[str]) -> InputError:
    """The refusal of an audit every test of which would be skipped: each reason, with the tests it
    stops, and the tests that could judge this sample instead. Loading a model to say only that
    (a minute for a small one on a laptop) would be time lost."""
    by_reason: dict[str, list[str]] = {}
    for name, why in skips.items():
        by_reason.setdefault(why, []).append(name)
    said = " ".join(f"{listed(names)}: {why.rstrip('.')}." for why, names in by_reason.items())
    if not able:
        fix = ""
    elif config.quick and not config.tests:
        fix = f" Or leave out --quick: {listed(able)} can run on it."
    else:
        fix = f" Or choose tests that can run on it: --tests {','.join(able)}."
    return InputError(f"No test chosen could judge this sample, so no model was loaded. {said}{fix}")


def select_tests(config: AuditConfig, settings: MethodSettings) -> list[Test]:
    """The tests to run: those asked for (checked by name), or all; --quick keeps likelihood tests."""
    return [create_test(name, settings) for name in select_test_names(config)]


def select_test_names(config: AuditConfig) -> list[str]:
    """The names of :func:`select_tests`' tests, in order; unknown names fail with a suggestion."""
    names = list(dict.fromkeys(config.tests)) if config.tests else TESTS.names()
    chosen = [name for name in names if TESTS.get(name).likelihood or not config.quick]
    if not chosen:
        raise InputError("--quick keeps only likelihood tests, and none of --tests is one.")
    return chosen


def texts_for(test: PerTextTest, controls: Controls, texts: list[str]) -> list[str]:
    """The texts a per-text test scores: all, but a paired test (completion) asks nothing of a
    question without a twin (--twinless), which it can't judge."""
    if test.likelihood or not controls.paired or controls.without_twin == 0:
        return texts
    return texts_under_test(controls, with_twin_only=True)


def texts_under_test(controls: Controls, with_twin_only: bool = False) -> list[str]:
    items = [i for i in controls.items if i.id in controls.twins] if with_twin_only else controls.items
    texts = [item.text for item in items]
    texts += [twin for item in controls.items for twin in controls.twins.get(item.id, ())]
    texts += [item.text for item in controls.controls]
    return list(dict.fromkeys(texts))


def describe_calibration(test: Test, controls: Controls, has_reference: bool) -> str:
    if isinstance(test, Guided):
        if not controls.paired:
            return "the control file's questions under the same two instructions"
        return (
            "general instruction on the same question (uncalibrated: the instructions differ in more "
            "than the dataset's name, and small models copy the prompt back when told its source; "
            "--control calibrates it)"
        )
    if not controls.paired:
        return "control file" + (
            ", minus the reference model's score" if test.likelihood and has_reference else ""
        )
    if test.likelihood:
        alone = controls.without_twin
        if not alone:
            twins = "twins: familiarity"
        elif alone < len(controls.items):
            twins = "twins, where a question has one: familiarity"
        else:
            twins = "no twins, so no familiarity measured"
        base = f"the bulk of the benchmark's own scores ({twins})"
        return base + (", minus the reference model's score" if has_reference else "")
    return "number twins"

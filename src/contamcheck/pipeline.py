"""The audit: load questions, build controls, plan and compute evidence, run tests, judge.

Data flows one way (SPEC §3)::

    benchmarks -> controls -> tests declare evidence -> engine computes it -> tests score -> stats -> report
"""

from __future__ import annotations

import gc
import math
import platform
import time
import zlib
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib import metadata

import numpy as np

from . import __version__
from .backends import (
    LanguageModel,
    ModelDescription,
    ModelOptions,
    backend_name,
    describe_model,
    load_model,
    reference_for_size,
)
from .benchmarks import Benchmark, load_benchmark
from .config import AuditConfig
from .controls import Controls, build_controls
from .errors import ContamcheckError, InputError
from .evidence import Evidence, EvidenceEngine, EvidenceStore, MemoryStore
from .evidence.cache import EvidenceCache
from .evidence.engine import EngineStats, ProgressCallback
from .methods import TESTS, MethodSettings, PerTextTest, Test, create_test
from .report.model import (
    BenchmarkInfo,
    ControlInfo,
    EvidenceUse,
    ItemRecord,
    ItemTestResult,
    ModelInfo,
    ReferenceInfo,
    Report,
    RunInfo,
    SampleInfo,
    Settings,
    TestResult,
    Verdict,
)
from .stats import (
    EXPECTED_RATE,
    exit_code,
    is_calibrated,
    judge,
    label_permutation_test,
    sign_flip_test,
)
from .stats import wilson_interval as wilson

GPU_BATCH_SIZE = 64
CPU_BATCH_SIZE = 16
LARGE_MODEL_BYTES = 4 * 2**30
VERSIONED_PACKAGES = ("numpy", "scipy", "torch", "transformers", "tokenizers", "gguf")


class ModelHandle:
    """A model identified without loading, loaded on first need, released to free memory.

    Its cache namespace comes from its description (hashes of its files, or its Hub revision);
    its parameter count from the store when an earlier audit loaded it. So an audit whose evidence
    is all stored loads neither model nor tokenizer.
    """

    def __init__(
        self, spec: str, options: ModelOptions, store: EvidenceStore, progress: ProgressCallback
    ) -> None:
        self.spec = spec
        self.options = options
        self.store = store
        self.progress = progress
        self.backend = backend_name(spec)
        self.description = describe_model(spec, options, store.file_digest)
        self.loaded = False
        self._model: LanguageModel | None = None
        self._identity = self.description.identity
        self._num_parameters: int | None = None

    @property
    def namespace(self) -> str:
        if self._identity is None:  # a Hub model not downloaded yet: only loading tells its revision
            self.get()
        settings = ",".join(f"{k}={v}" for k, v in sorted(self.description.settings.items()))
        return f"{self._identity}|{settings}"

    def get(self) -> LanguageModel:
        if self._model is None:
            label = f"loading {self.description.name}"
            self.progress(label, 0, 0)
            self._model = load_model(self.spec, self.options, self.description)
            self.progress(label, 1, 1)
            self.loaded = True
            self._identity = self._identity or self._model.identity
            self._num_parameters = self._model.num_parameters()
            self.store.put_model_info(self.namespace, {"num_parameters": self._num_parameters})
        return self._model

    @property
    def info(self) -> ModelInfo:
        if self._num_parameters is None:
            stored = self.store.get_model_info(self.namespace)
            if stored is not None:
                self._num_parameters = stored.get("num_parameters")
            elif self.backend != "fake":
                self.get()
        return ModelInfo(
            spec=self.spec,
            name=self.description.name,
            backend=self.backend,
            identity=str(self._identity),
            num_parameters=self._num_parameters,
            settings=self.description.settings,
        )

    def release(self) -> None:
        self._model = None
        gc.collect()


@dataclass
class _TextScores:
    """Per-text scores of one test: the tested model's, the reference's, and what is compared."""

    target: dict[str, float]
    reference: dict[str, float] | None

    def compared(self, text: str) -> float:
        value = self.target[text]
        if self.reference is not None:
            value -= self.reference[text]
        return value


def audit(
    config: AuditConfig,
    progress: ProgressCallback | None = None,
    store: EvidenceStore | None = None,
) -> Report:
    """Audit ``config.model`` on ``config.benchmark`` and return the report (no printing)."""
    started_at = datetime.now(timezone.utc)
    started = time.perf_counter()
    progress = progress or (lambda label, done, total: None)
    if store is None:
        store = MemoryStore() if config.no_cache else EvidenceCache(config.cache)
    cache_dir = store.folder if isinstance(store, EvidenceCache) else None

    benchmark = load_benchmark(config.benchmark, config.field, ordered=config.ordered)
    control_benchmark = load_benchmark(config.control, config.control_field) if config.control else None
    controls = build_controls(benchmark, config.limit, config.seed, control_benchmark, config.twins)
    tests = _select_tests(config)
    permutations = config.permutations_for(len(tests))
    options = ModelOptions(
        device=config.device,
        dtype=config.dtype,
        threads=config.threads,
        trust_remote_code=config.trust_remote_code,
        cache_dir=cache_dir,
    )
    texts = _texts_under_test(controls)

    target = ModelHandle(config.model, options, store, progress)
    batch_size = config.batch_size or auto_batch_size(target.description)
    target_engine = EvidenceEngine(target.get, target.namespace, store, batch_size, progress)
    target_requests = [
        r for test in tests if isinstance(test, PerTextTest) for t in texts for r in test.requests(t)
    ]
    target_evidence = target_engine.compute(target_requests, "model")
    target_info = target.info
    target.release()  # free its memory before a reference model loads

    reference_info, reference = _resolve_reference(config, target_info, options, store, progress)
    reference_evidence: Evidence | None = None
    reference_engine: EvidenceEngine | None = None
    likelihood_tests = [t for t in tests if t.likelihood and isinstance(t, PerTextTest)]
    if reference is not None and likelihood_tests:
        reference_engine = EvidenceEngine(reference.get, reference.namespace, store, batch_size, progress)
        reference_requests = [r for test in likelihood_tests for t in texts for r in test.requests(t)]
        reference_evidence = reference_engine.compute(reference_requests, "reference")
        reference_info.model = reference.info
        reference.release()
    models_loaded = [h.description.name for h in (target, reference) if h is not None and h.loaded]

    has_reference = reference_info.status == "used"
    items = {
        item.id: ItemRecord(
            id=item.id,
            position=item.position,
            text=item.text,
            twins=list(controls.twins.get(item.id, ())),
        )
        for item in controls.items
    }
    control_records = {
        item.id: ItemRecord(id=item.id, position=item.position, text=item.text, is_control=True)
        for item in controls.controls
    }
    results: list[TestResult] = []
    for test in tests:
        calibrated = is_calibrated(test.likelihood, has_reference, not controls.paired)
        if not controls.items:
            results.append(
                _skipped(
                    test,
                    calibrated,
                    _calibration(test, controls, has_reference),
                    _no_items_reason(controls),
                )
            )
            continue
        assert isinstance(test, PerTextTest)
        uses_reference = test.likelihood and has_reference and reference_evidence is not None
        scores = _score_texts(test, texts, target_evidence, reference_evidence if uses_reference else None)
        seed = config.seed + zlib.crc32(test.name.encode())
        results.append(
            _run_per_text_test(
                test,
                controls,
                scores,
                target_evidence,
                items,
                control_records,
                calibrated,
                _calibration(test, controls, has_reference),
                permutations,
                seed,
            )
        )

    judgement = judge(results, config.alpha)
    for result in results:
        result.p_adjusted = judgement.p_adjusted.get(result.name)
        result.status = judgement.statuses[result.name]

    warnings = _warnings(target_engine, reference_engine)
    caveats = _caveats(results, reference_info, controls)
    finished_at = datetime.now(timezone.utc)
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
        control=_control_info(controls, control_benchmark),
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
            batch_size=batch_size,
            reference=config.reference,
        ),
        tests=results,
        verdict=Verdict(
            code=judgement.code,
            label=judgement.label,
            explanation=judgement.explanation,
            fail_on=config.fail_on,
            exit_code=exit_code(judgement.code, config.fail_on),
        ),
        items=[*items.values(), *control_records.values()],
        caveats=caveats,
        warnings=warnings,
        versions=_versions(),
        run=RunInfo(
            started_at=started_at.isoformat(timespec="seconds"),
            finished_at=finished_at.isoformat(timespec="seconds"),
            duration_s=round(time.perf_counter() - started, 3),
            host=platform.node(),
            threads=config.threads,
            peak_memory_mb=_peak_memory_mb(),
            models_loaded=models_loaded,
            cache=str(cache_dir) if cache_dir else None,
            evidence={
                role: _evidence_use(engine.stats)
                for role, engine in (("model", target_engine), ("reference", reference_engine))
                if engine is not None
            },
        ),
    )


# -- choosing what runs --------------------------------------------------------------------------


def auto_batch_size(description: ModelDescription) -> int:
    """Texts per batch from the device and the model's size (the backend splits further by tokens).

    Chosen from the device class and the weight files' size only, so that the batch plan, and
    with it every number, is the same in a resumed or warm run. Measured in docs/PERFORMANCE.md.
    """
    device = description.settings.get("device", "cpu")
    size = description.weight_bytes or 0
    if device == "cuda":
        return GPU_BATCH_SIZE if size < LARGE_MODEL_BYTES else GPU_BATCH_SIZE // 4
    return CPU_BATCH_SIZE if size < LARGE_MODEL_BYTES else CPU_BATCH_SIZE // 4


def _select_tests(config: AuditConfig) -> list[Test]:
    settings = MethodSettings(k=config.k)
    if config.tests:
        names = list(dict.fromkeys(config.tests))
        for name in names:
            TESTS.get(name)  # unknown names fail here, with a suggestion
        chosen = [create_test(name, settings) for name in names]
        if config.quick:
            chosen = [t for t in chosen if t.likelihood]
            if not chosen:
                raise InputError("--quick keeps only likelihood tests, and none of --tests is one.")
        return chosen
    chosen = [create_test(name, settings) for name in TESTS.names()]
    return [t for t in chosen if t.likelihood] if config.quick else chosen


def _texts_under_test(controls: Controls) -> list[str]:
    texts = [item.text for item in controls.items]
    texts += [twin for item in controls.items for twin in controls.twins.get(item.id, ())]
    texts += [item.text for item in controls.controls]
    return list(dict.fromkeys(texts))


def _resolve_reference(
    config: AuditConfig,
    target: ModelInfo,
    options: ModelOptions,
    store: EvidenceStore,
    progress: ProgressCallback,
) -> tuple[ReferenceInfo, ModelHandle | None]:
    requested = config.reference
    if requested == "none":
        return ReferenceInfo(status="none", requested=requested, reason="--reference none"), None
    if requested == "auto":
        if target.backend == "fake":
            return ReferenceInfo(
                status="none", requested=requested, reason="the fake backend has no reference"
            ), None
        name = reference_for_size(target.num_parameters)
        try:
            handle = ModelHandle(name, options, store, progress)
            handle.namespace  # noqa: B018 - a reference not identified locally must load (download) now
        except ContamcheckError as exc:
            reason = f"automatic reference {name} could not be loaded: {exc}"
            return ReferenceInfo(status="unavailable", requested=requested, reason=reason), None
        return ReferenceInfo(
            status="used", requested=requested, reason=f"closest GPT-2 in size: {name}"
        ), handle
    # An explicit reference that can't be found is an error, not a silent fallback.
    handle = ModelHandle(requested, options, store, progress)
    handle.namespace  # noqa: B018
    return ReferenceInfo(status="used", requested=requested, reason="--reference"), handle


def _calibration(test: Test, controls: Controls, has_reference: bool) -> str:
    base = "number twins" if controls.paired else "control file"
    if test.likelihood:
        if has_reference:
            return f"{base}, minus the reference model's score"
        if controls.paired:
            return "number twins only (uncalibrated: no reference model)"
    return base


# -- running a paired test -------------------------------------------------------------------------


def _score_texts(
    test: PerTextTest, texts: list[str], target: Evidence, reference: Evidence | None
) -> _TextScores:
    usable = [t for t in texts if test.requests(t)]
    target_scores = {t: test.score(t, target) for t in usable}
    reference_scores = {t: test.score(t, reference) for t in usable} if reference is not None else None
    return _TextScores(target_scores, reference_scores)


def _run_per_text_test(
    test: PerTextTest,
    controls: Controls,
    scores: _TextScores,
    evidence: Evidence,
    items: dict[str, ItemRecord],
    control_records: dict[str, ItemRecord],
    calibrated: bool,
    calibration: str,
    permutations: int,
    seed: int,
) -> TestResult:
    def value(text: str) -> float:
        return scores.compared(text) if text in scores.target else math.nan

    def raw(table: dict[str, float] | None, text: str) -> float | None:
        return _finite(table.get(text, math.nan)) if table is not None else None

    used_ids: list[str] = []
    statistics: list[float] = []
    for item in controls.items:
        original = value(item.text)
        record = ItemTestResult(
            score=_finite(original),
            reference_score=raw(scores.reference, item.text),
            generated=test.detail(item.text, evidence) if item.text in scores.target else None,
        )
        if controls.paired:
            twins = controls.twins[item.id]
            twin_values = [value(t) for t in twins]
            twin_mean = float(np.mean(twin_values))
            record.twin_scores = [_finite(v) for v in twin_values]
            record.twin_score = _finite(twin_mean)
            if scores.reference is not None:
                record.reference_twin_score = _finite(
                    float(np.mean([scores.reference.get(t, math.nan) for t in twins]))
                )
            record.twin_generated = test.detail(twins[0], evidence) if twins[0] in scores.target else None
            statistic = original - twin_mean
        else:
            statistic = original
        record.diff = _finite(statistic) if controls.paired else None
        if math.isfinite(statistic):
            used_ids.append(item.id)
            statistics.append(statistic)
        items[item.id].tests[test.name] = record

    control_values = []
    if not controls.paired:
        for item in controls.controls:
            control_score = value(item.text)
            control_records[item.id].tests[test.name] = ItemTestResult(
                score=_finite(control_score),
                generated=test.detail(item.text, evidence) if item.text in scores.target else None,
            )
            if math.isfinite(control_score):
                control_values.append(control_score)

    n_unscored = len(controls.items) - len(used_ids)
    result = TestResult(
        name=test.name,
        title=test.title,
        kind="paired" if controls.paired else "unpaired",
        calibrated=calibrated,
        calibration=calibration,
        measures=test.measures,
        null_hypothesis=test.null_hypothesis if controls.paired else _unpaired_null(),
        caveat=test.caveat,
        citation=test.citation,
        status="skipped",
        n_unscored=n_unscored,
        unscored_reason=test.unscored_reason() if n_unscored else None,
    )
    if not statistics or (not controls.paired and not control_values):
        result.skip_reason = f"no question could be scored: {test.unscored_reason()}"
        return result

    values = np.array(statistics)
    if controls.paired:
        outcome = sign_flip_test(values, permutations, seed)
    else:
        outcome = label_permutation_test(values, np.array(control_values), permutations, seed)
    for item_id, flagged in zip(used_ids, outcome.flags, strict=True):
        items[item_id].tests[test.name].flagged = bool(flagged)
    if not controls.paired:
        for control_record in control_records.values():
            entry = control_record.tests[test.name]
            entry.flagged = None if entry.score is None else entry.score > outcome.threshold
    n = len(values)
    result.n = n
    result.n_flagged = outcome.flagged
    result.flag_rate = outcome.flagged / n
    result.flag_rate_ci = wilson(outcome.flagged, n)
    result.threshold = outcome.threshold
    result.p_value = outcome.p_value
    result.min_attainable_p = outcome.min_attainable_p
    result.permutations = outcome.permutations
    centre = float(np.median(control_values)) if not controls.paired else 0.0
    result.mean_difference = float(values.mean()) - centre
    result.median_difference = float(np.median(values)) - centre
    return result


def _unpaired_null() -> str:
    return (
        "Benchmark and control-file questions are exchangeable for the model: a benchmark question "
        "beats the controls' 95th percentile no more often than 5% of the time."
    )


def _skipped(test: Test, calibrated: bool, calibration: str, reason: str) -> TestResult:
    return TestResult(
        name=test.name,
        title=test.title,
        kind=test.kind,
        calibrated=calibrated,
        calibration=calibration,
        measures=test.measures,
        null_hypothesis=test.null_hypothesis,
        caveat=test.caveat,
        citation=test.citation,
        status="skipped",
        skip_reason=reason,
    )


def _no_items_reason(controls: Controls) -> str:
    reasons = "; ".join(f"{count} {reason}" for reason, count in controls.set_aside.items())
    hint = " Pass --control with questions the model can't have seen." if controls.paired else ""
    return f"no testable question ({reasons}).{hint}"


# -- report details ------------------------------------------------------------------------------


def _control_info(controls: Controls, control_benchmark: Benchmark | None) -> ControlInfo:
    if controls.paired:
        return ControlInfo(
            kind="twins",
            description=controls.description,
            twins_per_question=max((len(t) for t in controls.twins.values()), default=0),
        )
    assert control_benchmark is not None
    return ControlInfo(
        kind="file",
        description=controls.description,
        spec=control_benchmark.spec,
        content_hash=control_benchmark.content_hash,
        n_controls=len(controls.controls),
    )


def _warnings(*engines: EvidenceEngine | None) -> list[str]:
    out = []
    for engine in engines:
        if engine is not None and engine.stats.truncated:
            out.append(
                f"{len(engine.stats.truncated)} text(s) were longer than the model's context window; "
                "only their beginning was scored."
            )
    return out


def _caveats(results: list[TestResult], reference: ReferenceInfo, controls: Controls) -> list[str]:
    caveats = [
        "Scores are evidence with uncertainty, not proof that a question was or was not "
        "in the training data.",
    ]
    uncalibrated = [r.name for r in results if not r.calibrated and r.status != "skipped"]
    if uncalibrated:
        caveats.append(
            f"{', '.join(uncalibrated)} ran without a reference model or control file: originals "
            "read more naturally than twins even to a clean model, so these can raise the verdict "
            "to 'some evidence' at most."
        )
    if reference.status == "unavailable":
        caveats.append(f"No reference model: {reference.reason}")
    if controls.paired:
        caveats.append(
            "A single exposure to a question leaves little trace; repeated exposure is what "
            "these tests catch reliably."
        )
    return caveats


def _evidence_use(stats: EngineStats) -> EvidenceUse:
    return EvidenceUse(
        requested=stats.requested,
        from_cache=stats.from_store,
        computed=stats.computed,
        batches_computed=stats.batches_computed,
        compute_seconds=round(stats.compute_seconds, 3),
        tokens_scored=stats.tokens_scored,
        oom_retries=stats.oom_retries,
    )


def _versions() -> dict[str, str]:
    versions = {"contamcheck": __version__, "python": platform.python_version()}
    for package in VERSIONED_PACKAGES:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            continue
    return versions


def _peak_memory_mb() -> float | None:
    try:
        import resource
    except ImportError:  # Windows
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(peak / 1024 if platform.system() != "Darwin" else peak / 2**20, 1)


def _finite(value: float) -> float | None:
    return float(value) if value is not None and math.isfinite(value) else None

"""Models as the audit holds them: identified without loading, loaded on first need."""

from __future__ import annotations

import contextlib
import gc
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..backends import (
    LanguageModel,
    ModelDescription,
    ModelOptions,
    TokenStats,
    backend_name,
    describe_model,
    load_model,
    references_by_size,
)
from ..config import AuditConfig
from ..errors import ContamcheckError, InputError, RuntimeFailure
from ..evidence import EvidenceStore
from ..evidence.engine import FAILED, Evidence, ProgressCallback
from ..evidence.store import Value
from ..methods import TESTS
from ..methods.base import Test
from ..report.model import NOT_LOADED, ModelInfo, ReferenceInfo
from .assemble import offline_reference

GPU_BATCH_SIZE = 64
CPU_BATCH_SIZE = 16
# Prompts per generation batch, as a multiple of the texts per scoring batch. Rows leave a batch as
# they end, so a larger batch keeps more rows in each decoding step: the GSM8K 50 audit's generation
# took 48.8 s in batches of 64 against 59.7 s in batches of 16 (bench/generation.py,
# docs/PERFORMANCE.md). The backend still splits a batch to fit its key/value cache budget.
GENERATION_BATCH_FACTOR = 4
LARGE_MODEL_BYTES = 4 * 2**30
# A reference whose token log-probs differ from the model's by less than SAME_NUMBERS_NATS (nats per
# token, over its first scores) is taken for the model itself, the same weights under another name;
# one closer than CLOSE_NUMBERS_NATS is named in a warning. On 200 GSM8K questions, SmolLM2-135M
# against itself in float16 differed by 0.003-0.012 per text, in bfloat16 (a server on a GPU) by
# 0.025-0.072; one pass of fine-tuning over 100 of them, by 0.34-1.20 (experiments/same_numbers.py,
# docs/validation/same-numbers-gsm8k-seed1.md). A lighter fine-tune (a small LoRA) could come
# closer, and its base is a fair reference: so only the unmistakable is refused.
SAME_NUMBERS_NATS = 0.02
KEPT_NAMES = 5  # names a model's evidence was reached by, listed by `cache info`, the latest first
CLOSE_NUMBERS_NATS = 0.1


class ModelHandle:
    """A model identified without loading, loaded on first need, released to free memory.

    Its cache namespace comes from its description (hashes of its files, or its Hub revision);
    its parameter count from the store when an earlier audit loaded it. So an audit whose evidence
    is all stored loads neither model nor tokenizer.
    """

    def __init__(
        self,
        spec: str,
        options: ModelOptions,
        store: EvidenceStore,
        progress: ProgressCallback,
        reference: bool = False,
    ) -> None:
        self.spec = spec
        self.reference = reference  # its errors say so (they are worded for MODEL)
        self.options = options
        self.store = store
        self.progress = progress
        self.backend = backend_name(spec)
        with self._naming():
            self.description = self._describe()
        self.loaded = False
        self._model: LanguageModel | None = None
        self._identity = self.description.identity
        self._num_parameters: int | None = None
        self.notes: list[str] = []  # what loading it warns of (a converted copy that could not be kept)

    def _describe(self) -> ModelDescription:
        """What the model is. A server is asked (its model list, a probe text): a step of its own,
        so that one that can't be reached ends a line the progress started."""
        if self.backend != "openai":
            return describe_model(self.spec, self.options, self.store.file_digest)
        with self._step(f"connecting to {self.spec}"):
            return describe_model(self.spec, self.options, self.store.file_digest)

    def _naming(self) -> contextlib.AbstractContextManager[None]:
        """Where its errors are said: a reference's name it as the reference."""
        return naming_the_reference() if self.reference else contextlib.nullcontext()

    @contextlib.contextmanager
    def _step(self, label: str) -> Iterator[None]:
        """A step of the progress with no count (a load, a connection): started, then done or failed."""
        self.progress(label, 0, 0)
        try:
            yield
        except Exception:  # out of memory moving a model to the device too; Ctrl-C is said by the CLI
            self.progress(label, 0, FAILED)  # the line started must end; the error says why
            raise
        self.progress(label, 1, 1)

    @property
    def namespace(self) -> str:
        if self._identity is None:  # a Hub model not downloaded yet: only loading tells its revision
            self.get()
        settings = ",".join(f"{k}={v}" for k, v in sorted(self.description.settings.items()))
        return f"{self._identity}|{settings}"

    def get(self) -> LanguageModel:
        if self._model is None:
            with self._naming(), self._step(f"loading {self.description.name}"):
                self._model = load_model(self.spec, self.options, self.description)
            self.loaded = True
            self.notes += getattr(self._model, "notes", [])  # kept past release()
            self._identity = self._identity or self._model.identity
            self._num_parameters = self._model.num_parameters()
            self._record(self.store.get_model_info(self.namespace))
        return self._model

    def _record(self, stored: dict[str, Any] | None) -> None:
        """Store the model's size and the name it is audited under, first among the others that
        reached the same evidence (a server's model at another address, a copy of the weights in
        another folder): `cache info` lists them. Stored again if the cache was cleared since."""
        name = self.description.name
        known = stored or {}
        others = [n for n in known.get("names", [known.get("name")]) if isinstance(n, str) and n != name]
        names = [name, *others][:KEPT_NAMES]  # a server on a new port each run must not grow it for ever
        wanted = {"num_parameters": self._num_parameters, "name": name, "names": names}
        if stored != wanted:
            with contextlib.suppress(RuntimeFailure):  # a full disk: the names are for `cache info` only
                self.store.put_model_info(self.namespace, wanted)

    @property
    def info(self) -> ModelInfo:
        stored = self.store.get_model_info(self.namespace)
        if self._num_parameters is None:
            if stored is not None:
                self._num_parameters = stored.get("num_parameters")
            elif self.backend != "fake":
                self.get()
                stored = self.store.get_model_info(self.namespace)
        if stored is not None or self.loaded:
            self._record(stored)
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


def auto_batch_sizes(description: ModelDescription) -> tuple[int, int]:
    """(texts per scoring batch, prompts per generation batch) from the device and the model's size
    (the backend splits further by tokens).

    Chosen from the device class and the weight files' size only, so that the batch plan, and
    with it every number, is the same in a resumed or warm run. Measured in docs/PERFORMANCE.md.
    """
    device = description.settings.get("device", "cpu")
    size = description.weight_bytes or 0
    scoring = GPU_BATCH_SIZE if device == "cuda" else CPU_BATCH_SIZE
    if size >= LARGE_MODEL_BYTES:
        scoring //= 4
    return scoring, scoring * GENERATION_BATCH_FACTOR


def resolve_reference(
    config: AuditConfig,
    target: ModelInfo,
    options: ModelOptions,
    store: EvidenceStore,
    progress: ProgressCallback,
    passed_over: Sequence[str] = (),
) -> tuple[ReferenceInfo, ModelHandle | None]:
    """The reference model to calibrate likelihood tests with, or why there is none; the automatic
    one is not one of ``passed_over`` (GPT-2s found to give the model's own numbers)."""
    requested = config.reference
    if requested == "none":
        return ReferenceInfo(status="none", requested=requested, reason="--reference none"), None
    if requested == "auto":
        if target.backend == "fake":
            return ReferenceInfo(
                status="none", requested=requested, reason="the fake backend has no reference"
            ), None
        # the closest GPT-2 that is not the tested model itself (a GPT-2 less its own scores is zero)
        said = (
            f" ({', '.join(passed_over)} gave the model's own numbers: the same weights)"
            if passed_over
            else ""
        )
        for name in references_by_size(target.num_parameters):
            if same_hub_model(name, target.spec) or name in passed_over:
                continue
            try:
                handle = ModelHandle(name, options, store, progress)  # its failure is worded below
                identity = handle.namespace.split("|")[0]  # a Hub model not yet local loads (downloads) here
            except ContamcheckError as exc:
                reason = f"automatic reference {name} {NOT_LOADED}{said}: {exc}"
                return ReferenceInfo(status="unavailable", requested=requested, reason=reason), None
            if identity == target.identity or same_revision(identity, target.identity):
                continue
            reason = f"closest GPT-2 in size: {name}"
            if not target.num_parameters:  # a served model: the API does not say its size
                reason = f"the model's size is unknown (--reference NAME chooses): {name}"
            return ReferenceInfo(status="used", requested=requested, reason=reason + said), handle
        reason = "no GPT-2 but the tested model itself" + said
        return ReferenceInfo(status="unavailable", requested=requested, reason=reason), None
    # An explicit reference that can't be found is an error, not a silent fallback (its handle
    # says it is the reference, describing it or loading it: a Hub model not yet here loads now)
    handle = ModelHandle(requested, options, store, progress, reference=True)
    handle.namespace  # noqa: B018
    return ReferenceInfo(status="used", requested=requested, reason="--reference"), handle


def check_reference(
    config: AuditConfig, options: ModelOptions, store: EvidenceStore, target: ModelDescription
) -> ModelDescription | None:
    """An explicit reference that can't be identified fails before the tested model's work, not after;
    so do the tested model itself as its reference (every score would be zero: nothing to find) and
    a reference whose log-probs can't be used (a server's). Returns its description (None: none
    named)."""
    if config.reference in ("auto", "none"):
        return None
    with naming_the_reference():
        reference = describe_model(config.reference, options, store.file_digest)
    same = reference.identity is not None and (
        reference.identity == target.identity or same_revision(reference.identity, target.identity)
    )
    if same or same_hub_model(config.reference, config.model):
        raise same_weights_error(config.reference)
    if reference.cannot_score:
        raise InputError(
            f"--reference {config.reference!r} can't be a reference: {reference.cannot_score}. A "
            "reference only scores texts: pass one whose log-probs can be read, or --reference none. "
            + offline_reference(config.model)
        )
    return reference


def unrunnable(
    tests: Sequence[Test | type[Test]], target: ModelDescription, reference: ModelDescription | None
) -> dict[str, str]:
    """The tests that can't run on these models, each with why (the model's or reference's log-probs
    can't be read, or give no whole next-token distribution)."""
    why: dict[str, str] = {}
    for test in tests:
        if test.scores and target.cannot_score:
            why[test.name] = target.cannot_score
        elif test.distribution and target.top_only:
            why[test.name] = "a server gives only the top log-probs, not the whole next-token distribution"
        elif test.distribution and reference is not None and reference.top_only:
            why[test.name] = (
                "the reference is a server, which gives only the top log-probs, not the whole "
                "next-token distribution"
            )
    return why


def none_can_run(
    config: AuditConfig,
    target: ModelDescription,
    reference: ModelDescription | None,
    cannot: dict[str, str],
) -> InputError:
    """The refusal of an audit none of whose tests can run here: why, grouped, and the way out."""
    by_reason: dict[str, list[str]] = {}
    for name, why in cannot.items():
        by_reason.setdefault(why, []).append(name)
    said = "; ".join(f"{', '.join(names)}: {why}" for why, names in by_reason.items())
    every = unrunnable([TESTS.get(name) for name in TESTS.names()], target, reference)
    able = [name for name in TESTS.names() if name not in every]
    quick_able = [name for name in able if TESTS.get(name).likelihood]
    if config.quick and not quick_able:
        fix = f"Leave out --quick, which keeps only likelihood tests, to run {', '.join(able)}."
    else:
        fix = f"Choose others with --tests ({', '.join(quick_able if config.quick else able)} can run here)"
        if reference is not None and reference.top_only:
            fix += ", or pass a local --reference, or --reference none"
        fix += "."
    return InputError(f"None of the tests chosen can run here ({said}). {fix}")


def same_weights_error(reference: str) -> InputError:
    return InputError(
        f"--reference {reference!r} is the model under audit (the same weights): each score less its "
        "own is zero, so no test could find anything. Pass a model that never saw the benchmark, or "
        "--reference none."
    )


class SameNumbers(InputError):
    """The reference gives the model's own numbers: the same weights under another name or format."""

    def __init__(self, spec: str, texts: int, gap: float, kept: bool = True) -> None:
        within = f"to within {gap:.2g} nats on average" if gap else "exactly"
        super().__init__(
            f"--reference {spec!r} gives the model's own numbers: its token log-probs on the first "
            f"{texts} texts are the model's {within} (the same weights under another name or "
            "format), so each score less its own would be zero and no test could find anything. "
            "Pass a model of another family that never saw the benchmark (offline, a packaged one: "
            "pkg:gemma-3-270m or pkg:smollm2-135m-instruct, whichever is not the model's family), "
            "or --reference none." + (" What was computed is kept in the cache." if kept else "")
        )


def check_numbers(
    spec: str, target: Evidence, reference: dict[str, Value], kept: bool = True
) -> float | None:
    """How far the reference's scores in ``reference`` lie from the model's: the mean absolute
    difference of their token log-probs, over all the tokens of the texts that have as many tokens
    in both (None unless at least half of them do); :class:`SameNumbers` below
    :data:`SAME_NUMBERS_NATS` (``kept``: what was computed is in a cache)."""
    gaps: list[np.ndarray] = []
    paired = 0
    for key, value in reference.items():
        own = target.value(key)
        if not isinstance(value, TokenStats) or not isinstance(own, TokenStats):
            continue
        paired += 1
        if own.num_tokens != value.num_tokens:  # another tokenizer, or cut elsewhere
            continue
        apart = np.abs(own.logprobs.astype(np.float64) - value.logprobs.astype(np.float64))
        apart = apart[np.isfinite(apart)]  # a position a backend leaves unscored (NaN) is not compared
        if apart.size:
            gaps.append(apart)
    if not gaps or 2 * len(gaps) < paired:
        return None
    gap = float(np.concatenate(gaps).mean())
    if gap < SAME_NUMBERS_NATS:
        raise SameNumbers(spec, len(gaps), gap, kept)
    return gap


class NumbersCheck:
    """:func:`check_numbers` as the engine's check of a reference's first scores; ``gap`` is what it
    measured (None: not measured)."""

    def __init__(self, spec: str, target: Evidence, kept: bool) -> None:
        self.spec, self.target, self.kept = spec, target, kept
        self.gap: float | None = None

    def __call__(self, values: dict[str, Value]) -> None:
        self.gap = check_numbers(self.spec, self.target, values, self.kept)


def close_numbers_warning(spec: str, gap: float | None, explicit: bool = True) -> list[str]:
    """A reference whose numbers lie close to the model's, but not close enough to refuse it."""
    if gap is None or gap >= CLOSE_NUMBERS_NATS:
        return []
    what = "pass a model of another family that never saw the benchmark"
    return [
        f"The reference {spec} gives nearly the model's own numbers: its token log-probs on its first "
        f"batch of texts differ from the model's by {gap:.2g} nats on average (the same weights in "
        "another precision differ by about that much; a model fine-tuned once on a hundred questions, "
        "by 0.3 or more). If it is the model under audit in another format, each score less its own "
        f"is noise, and no test could find anything: {what}"
        + ("." if explicit else " with --reference NAME.")
    ]


def same_hub_model(a: str, b: str) -> bool:
    """The same name, as the Hub reads it: case aside, and GPT-2's legacy ids ("gpt2") as their
    organisation's ("openai-community/gpt2")."""

    def canonical(spec: str) -> str:
        if Path(spec).expanduser().exists():  # a local path: its case matters
            return spec
        spec = spec.strip().lower()
        return spec.removeprefix("openai-community/") if spec.startswith("openai-community/gpt2") else spec

    return canonical(a) == canonical(b)


def same_revision(a: str | None, b: str | None) -> bool:
    """Two Hub identities ("hub:NAME@REVISION") at one commit: the same weights under two names."""
    if not a or not b or not a.startswith("hub:") or not b.startswith("hub:"):
        return False
    revision_a, revision_b = a.rpartition("@")[2], b.rpartition("@")[2]
    commit = re.fullmatch("[0-9a-f]{40}", revision_a) is not None
    return "@" in a and "@" in b and revision_a == revision_b and commit


@contextlib.contextmanager
def naming_the_reference() -> Iterator[None]:
    """Errors about the reference model say it is the reference (they are worded for MODEL)."""
    try:
        yield
    except ContamcheckError as exc:
        exc.args = (f"--reference: {exc}",)
        raise

"""Computing evidence: each (model, request) once, in deterministic length-sorted batches.

Tests declare what they need; the engine dedupes the requests across tests, sorts them by length
(so a batch wastes little on padding), cuts fixed batches, and asks the store first. A scoring
batch with anything missing is computed whole and its new texts stored in one transaction; the plan
depends only on the requests, never on what is already stored, so an interrupted audit resumes
with the very same batches and reaches the very same numbers. Generation, slow, is kept part by
part: the backend hands on each part of a batch as it finishes it (stored at once), and a resumed
batch generates only the parts not known whole, in the same parts (``LanguageModel.generate``'s
``known``). The model is loaded only if some batch is missing. What the store holds wins: a text
computed beside other texts can differ in the last float32 digit, and an audit that stored it first
must not see its numbers move when another audit (or another process sharing the cache) scores it
again, so only new texts are stored, never replaced, and the values used are read back from the
store.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..backends import LanguageModel, TokenStats
from ..errors import RuntimeFailure
from .requests import GenerateRequest, Request, ScoreRequest
from .store import EvidenceStore, Value

# (label, done, total); total 0: not known (a spinner); total FAILED: the step failed (a model that
# could not load, the audit going on without it or ending with the reason)
ProgressCallback = Callable[[str, int, int], None]
FAILED = -1
ANALYSIS = "analysis: testing"  # the step after the models' work: the tests' statistics, one by one
CACHE_WAIT = "waiting for the evidence cache (another process is writing to it)"  # a step, when it waits
Tick = Callable[[int], None]  # requests of the current batch finished so far
Keep = Callable[[dict[str, Value]], None]  # values finished within a batch, stored before it ends


@dataclass
class EngineStats:
    """What the engine did, for the report's ``run`` section."""

    requested: int = 0
    from_store: int = 0
    computed: int = 0
    batches_computed: int = 0
    compute_seconds: float = 0.0
    tokens_scored: int = 0
    oom_retries: int = 0
    truncated: set[str] = field(default_factory=set)


class Evidence:
    """Computed evidence for one model, looked up by what was asked."""

    def __init__(self, values: dict[str, Value]) -> None:
        self._values = values

    def value(self, key: str) -> Value | None:
        return self._values.get(key)

    def stats(self, text: str) -> TokenStats:
        value = self._values[ScoreRequest(text).key]
        assert isinstance(value, TokenStats)
        return value

    def generation(self, prompt: str, max_new_tokens: int, chat: bool = False) -> str:
        value = self._values[GenerateRequest(prompt, max_new_tokens, chat).key]
        assert isinstance(value, str)
        return value


class EvidenceEngine:
    def __init__(
        self,
        model: Callable[[], LanguageModel],
        namespace: str,
        store: EvidenceStore,
        batch_size: int,
        progress: ProgressCallback | None = None,
        generation_batch_size: int | None = None,
    ) -> None:
        self._model = model
        self.namespace = namespace
        self.store = store
        self.batch_size = max(1, batch_size)
        self.generation_batch_size = max(1, generation_batch_size or batch_size)
        self._progress = progress or (lambda label, done, total: None)
        self._said: tuple[str, int, int] | None = None
        self.stats = EngineStats()

    def progress(self, label: str, done: int, total: int) -> None:
        """Tells the callback, once: a batch's last part and the batch's end report the same count."""
        if (label, done, total) != self._said:
            self._said = (label, done, total)
            self._progress(label, done, total)

    def compute(
        self, requests: Iterable[Request], label: str, check: Callable[[dict[str, Value]], None] | None = None
    ) -> Evidence:
        """The evidence for ``requests``. ``check``, if given, sees the first batch of scores of the
        plan once, read from the store or computed (and stored already), before any other batch is
        computed, and may raise to stop."""
        unique: dict[str, Request] = {}
        for request in requests:
            unique.setdefault(request.key, request)
        self.stats.requested += len(unique)
        values: dict[str, Value] = {}
        for kind in ("score", "generate"):
            size = self.generation_batch_size if kind == "generate" else self.batch_size
            asked = [r for r in unique.values() if r.kind == kind]
            # the plan is the whole request's, so that a resumed audit batches each text as an
            # uninterrupted one would (a batch's padding can move a score's last bits); progress
            # counts only the batches that still hold work
            cached = self.store.get_many(self.namespace, [r.key for r in asked])
            working: list[list[Request]] = []
            for index, batch in enumerate(plan_batches(asked, size)):
                if all(r.key in cached for r in batch):  # the store holds it whole: read, not computed
                    read = {r.key: cached[r.key] for r in batch}
                    values.update(read)
                    self.stats.from_store += len(batch)
                    if index == 0 and check is not None and kind == "score":
                        first, check = check, None
                        first(read)
                else:
                    working.append(batch)
            step = f"{label}: {_verb(kind)}"
            total = sum(len(batch) for batch in working)
            done = 0
            started = False
            for batch in working:
                keys = [r.key for r in batch]
                # read again: another process may have added some since, or the cache been cleared
                found = self.store.get_many(self.namespace, keys)
                self.stats.from_store += len(found)
                if len(found) < len(keys):
                    if not started:
                        # the model loads first, a step of its own, so the time counted is the work's
                        self._model()
                        self.progress(step, done, total)
                        started = True
                    computed = self._compute_batch(batch, self._ticks(step, done, total), found)
                    self.stats.computed += len(keys) - len(found)
                    self.store.put_many(self.namespace, {k: v for k, v in computed.items() if k not in found})
                    # the store's values win; a value the store no longer has (the cache cleared
                    # meanwhile) is the one just computed
                    found = computed | self.store.get_many(self.namespace, keys)
                values.update(found)
                done += len(batch)
                if check is not None and kind == "score":
                    first, check = check, None
                    try:
                        first(found)
                    except BaseException:
                        self.progress(step, done, FAILED)  # the line started ends
                        raise
                self.progress(step, done, total)
        for key, value in values.items():
            if isinstance(value, TokenStats) and value.truncated:
                self.stats.truncated.add(key)
        return Evidence(values)

    def _ticks(self, label: str, done: int, total: int) -> Tick:
        """Progress from inside a batch (a backend that splits it reports each part), never backwards."""
        reached = done

        def tick(finished: int) -> None:
            nonlocal reached
            if done + finished > reached:
                reached = done + finished
                self.progress(label, reached, total)

        return tick

    def _compute_batch(
        self, batch: Sequence[Request], tick: Tick | None = None, found: Mapping[str, Value] | None = None
    ) -> dict[str, Value]:
        model = self._model()
        started = time.perf_counter()
        # what a stopped audit kept of this batch's generations (``found``) is not generated again,
        # and what is generated is stored part by part, as the backend finishes it; the parts kept
        # grow, so the halves after an out-of-memory skip them too
        known = {key: value for key, value in (found or {}).items() if isinstance(value, str)}

        def keep(values: dict[str, Value]) -> None:
            known.update({key: value for key, value in values.items() if isinstance(value, str)})
            self.store.put_many(self.namespace, values)

        results = [_as_float32(v) for v in _run_halving(model, batch, self.stats, tick, known, keep)]
        self.stats.compute_seconds += time.perf_counter() - started
        self.stats.batches_computed += 1
        for value in results:
            if isinstance(value, TokenStats):
                self.stats.tokens_scored += value.num_tokens
        return {request.key: value for request, value in zip(batch, results, strict=True)}


def _as_float32(value: Value) -> Value:
    """Token statistics as float32, exactly as the cache stores them, so cold and warm runs agree."""
    if not isinstance(value, TokenStats):
        return value
    return TokenStats(
        np.asarray(value.logprobs, dtype=np.float32),
        None if value.mean is None else np.asarray(value.mean, dtype=np.float32),
        None if value.std is None else np.asarray(value.std, dtype=np.float32),
        value.truncated,
    )


def plan_batches(requests: Sequence[Request], batch_size: int) -> list[list[Request]]:
    """Sort by length (ties by key, so the order never depends on arrival) and cut in batches."""
    ordered = sorted(requests, key=lambda r: (r.length, r.key))
    return [ordered[i : i + batch_size] for i in range(0, len(ordered), batch_size)]


def _run(
    model: LanguageModel,
    batch: Sequence[Request],
    tick: Tick | None = None,
    known: Mapping[str, str] | None = None,
    keep: Keep | None = None,
) -> list[Value]:
    if all(isinstance(r, ScoreRequest) for r in batch):
        return list(model.score([r.text for r in batch if isinstance(r, ScoreRequest)]))
    generations = [r for r in batch if isinstance(r, GenerateRequest)]
    chat_modes = {r.chat for r in generations}
    known = known or {}
    out: dict[str, Value] = {}
    for chat in sorted(chat_modes):
        group = [r for r in generations if r.chat == chat]
        texts = model.generate(
            [r.prompt for r in group],
            [r.max_new_tokens for r in group],
            chat=chat,
            on_progress=None if tick is None else _offset(tick, len(out)),
            known={i: known[r.key] for i, r in enumerate(group) if r.key in known},
            on_texts=None if keep is None else _by_key(keep, group),
        )
        out.update({r.key: t for r, t in zip(group, texts, strict=True)})
    return [out[r.key] for r in batch]


def _by_key(keep: Keep, group: Sequence[GenerateRequest]) -> Callable[[dict[int, str]], None]:
    return lambda part: keep({group[index].key: text for index, text in part.items()})


def _offset(tick: Tick, before: int) -> Tick:
    return lambda finished: tick(before + finished)


def _run_halving(
    model: LanguageModel,
    batch: Sequence[Request],
    stats: EngineStats,
    tick: Tick | None = None,
    known: Mapping[str, str] | None = None,
    keep: Keep | None = None,
) -> list[Value]:
    """Run a batch; on out-of-memory, run it again in halves (down to one request)."""
    try:
        return _run(model, batch, tick, known, keep)
    except Exception as exc:
        if not _is_out_of_memory(exc):
            raise
        if len(batch) == 1:
            raise RuntimeFailure(
                "Out of memory on a single text. Use --device cpu, a smaller --dtype (bfloat16), "
                "or a shorter benchmark text."
            ) from None
        stats.oom_retries += 1
        _free_memory()
        middle = len(batch) // 2
        second = None if tick is None else _offset(tick, middle)
        return _run_halving(model, batch[:middle], stats, tick, known, keep) + _run_halving(
            model, batch[middle:], stats, second, known, keep
        )


def _is_out_of_memory(exc: Exception) -> bool:
    if isinstance(exc, MemoryError):
        return True
    name = type(exc).__name__
    return name in {"OutOfMemoryError"} or "out of memory" in str(exc).lower()


def _free_memory() -> None:
    try:
        import torch

        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    except ImportError:
        pass


def _verb(kind: str) -> str:
    return "scoring" if kind == "score" else "generating"

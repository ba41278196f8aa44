"""The engine computes each (model, request) once, in deterministic length-sorted batches."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
import pytest

from contamcheck.backends import TokenStats
from contamcheck.backends.fake import FakeModel
from contamcheck.errors import RuntimeFailure
from contamcheck.evidence import EvidenceEngine, GenerateRequest, MemoryStore, ScoreRequest, plan_batches


class CountingModel(FakeModel):
    """A fake that records every batch it is given."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[str]] = []

    def score(self, texts: Sequence[str]) -> list[TokenStats]:
        self.batches.append(list(texts))
        return super().score(texts)


def test_requests_are_deduplicated_sorted_and_batched():
    model = CountingModel()
    engine = EvidenceEngine(lambda: model, "m", MemoryStore(), batch_size=2)
    texts = ["ccc", "a", "bb", "a", "dddd", "bb"]
    evidence = engine.compute([ScoreRequest(t) for t in texts], "model")
    assert model.batches == [["a", "bb"], ["ccc", "dddd"]]
    assert engine.stats.requested == 4 and engine.stats.computed == 4
    assert evidence.stats("ccc").num_tokens == 1  # one word token, scored after a start context


def test_generation_has_its_own_batch_size():
    class GenerationCounting(CountingModel):
        def generate(self, prompts, max_new_tokens, chat=False, on_progress=None, **kept):
            self.batches.append(list(prompts))
            return super().generate(prompts, max_new_tokens, chat, on_progress, **kept)

    model = GenerationCounting()
    engine = EvidenceEngine(lambda: model, "m", MemoryStore(), 2, generation_batch_size=4)
    words = ["a", "bb", "ccc", "dddd", "eeeee"]
    engine.compute([ScoreRequest(w) for w in words] + [GenerateRequest(w, 3) for w in words], "model")
    assert [len(b) for b in model.batches] == [2, 2, 1, 4, 1]
    assert EvidenceEngine(lambda: model, "m", MemoryStore(), 3).generation_batch_size == 3


def test_second_audit_reads_everything_from_the_store_and_loads_no_model():
    store = MemoryStore()
    first = CountingModel()
    EvidenceEngine(lambda: first, "m", store, 4).compute([ScoreRequest(t) for t in ["x y", "z"]], "model")

    def must_not_load() -> FakeModel:
        raise AssertionError("the model was loaded although everything was stored")

    engine = EvidenceEngine(must_not_load, "m", store, 4)
    evidence = engine.compute([ScoreRequest(t) for t in ["z", "x y"]], "model")
    assert engine.stats.from_store == 2 and engine.stats.computed == 0
    expected = FakeModel().score(["z"])[0].logprobs.astype(np.float32)  # stored as float32
    np.testing.assert_array_equal(evidence.stats("z").logprobs, expected)


class BatchDependent(CountingModel):
    """Like a padded batch on a real model: a text's numbers move a little with its neighbours."""

    def score(self, texts: Sequence[str]) -> list[TokenStats]:
        stats = super().score(texts)
        shift = 1e-3 * max(len(t) for t in texts)
        return [dataclasses.replace(s, logprobs=s.logprobs + shift) for s in stats]


def test_a_stored_value_is_never_replaced_by_one_computed_in_another_batch():
    store = MemoryStore()
    first = EvidenceEngine(BatchDependent, "m", store, 2).compute(
        [ScoreRequest(t) for t in ["a", "bb"]], "model"
    )
    model = BatchDependent()
    engine = EvidenceEngine(lambda: model, "m", store, 2)
    second = engine.compute([ScoreRequest(t) for t in ["bb", "cccc"]], "model")
    assert model.batches == [["bb", "cccc"]]  # "bb" computed again beside a longer text
    np.testing.assert_array_equal(second.stats("bb").logprobs, first.stats("bb").logprobs)
    keys = {t: ScoreRequest(t).key for t in ["a", "bb", "cccc"]}
    stored = store.get_many("m", keys.values())
    np.testing.assert_array_equal(stored[keys["bb"]].logprobs, first.stats("bb").logprobs)
    np.testing.assert_array_equal(stored[keys["cccc"]].logprobs, second.stats("cccc").logprobs)
    assert (engine.stats.from_store, engine.stats.computed) == (1, 1)


def test_a_value_another_process_stored_meanwhile_wins():
    store = MemoryStore()

    class Racing(BatchDependent):
        def score(self, texts: Sequence[str]) -> list[TokenStats]:
            store.put_many("m", {ScoreRequest("bb").key: FakeModel().score(["bb"])[0]})  # the other process
            return super().score(texts)

    evidence = EvidenceEngine(Racing, "m", store, 2).compute([ScoreRequest(t) for t in ["a", "bb"]], "model")
    other = FakeModel().score(["bb"])[0].logprobs
    np.testing.assert_array_equal(evidence.stats("bb").logprobs, other)
    np.testing.assert_array_equal(
        store.get_many("m", [ScoreRequest("bb").key])[ScoreRequest("bb").key].logprobs, other
    )


def test_a_resumed_audit_counts_only_the_batches_left_and_batches_as_an_uninterrupted_one():
    texts = ["a", "bb", "ccc", "dddd", "eeeee", "ffffff"]
    store = MemoryStore()
    EvidenceEngine(CountingModel, "m", store, 2).compute([ScoreRequest(t) for t in texts[:3]], "model")
    seen: list[tuple[int, int]] = []
    model = CountingModel()
    engine = EvidenceEngine(
        lambda: model, "m", store, 2, lambda label, done, total: seen.append((done, total))
    )
    engine.compute([ScoreRequest(t) for t in texts], "model")
    # "ccc" is scored again beside "dddd", as it was in the uninterrupted plan; "a" and "bb" are not
    assert model.batches == [["ccc", "dddd"], ["eeeee", "ffffff"]]
    assert seen == [(0, 4), (2, 4), (4, 4)]
    assert (engine.stats.from_store, engine.stats.computed) == (3, 3)


class ChangingStore(MemoryStore):
    """A store another process changes between the engine's first read and its batch's read."""

    def __init__(self, change) -> None:
        super().__init__()
        self.reads = 0
        self.change = change

    def get_many(self, namespace, keys):
        self.reads += 1
        if self.reads == 2:  # the first batch's own read
            self.change(self)
        return super().get_many(namespace, keys)


def test_the_counts_add_up_when_the_cache_is_cleared_during_the_audit():
    texts = ["a", "bb"]
    store = ChangingStore(lambda s: s._data.clear())  # `contamcheck cache clear` meanwhile
    store.put_many("m", {ScoreRequest("a").key: FakeModel().score(["a"])[0]})
    engine = EvidenceEngine(CountingModel, "m", store, 2)
    engine.compute([ScoreRequest(t) for t in texts], "model")
    assert (engine.stats.requested, engine.stats.from_store, engine.stats.computed) == (2, 0, 2)


def test_a_batch_another_process_filled_meanwhile_is_read_not_computed():
    texts = ["a", "bb"]

    def fill(store: MemoryStore) -> None:
        store.put_many("m", {ScoreRequest(t).key: FakeModel().score([t])[0] for t in texts})

    store = ChangingStore(fill)
    store.put_many("m", {ScoreRequest("a").key: FakeModel().score(["a"])[0]})
    engine = EvidenceEngine(lambda: pytest.fail("a model was loaded"), "m", store, 2)
    engine.compute([ScoreRequest(t) for t in texts], "model")
    assert (engine.stats.requested, engine.stats.from_store, engine.stats.computed) == (2, 2, 0)


def test_batch_plan_does_not_depend_on_arrival_order():
    requests = [ScoreRequest(t) for t in ["bb", "a", "ccc", "dd"]]
    assert plan_batches(requests, 2) == plan_batches(list(reversed(requests)), 2)


def test_generation_requests_with_different_budgets_and_chat_modes():
    model = FakeModel(["Mia buys 12 apples and 5 pears and 7 plums"])
    engine = EvidenceEngine(lambda: model, "m", MemoryStore(), 8)
    requests = [GenerateRequest("Mia buys 12 apples", 4), GenerateRequest("Mia buys 12 apples", 9, chat=True)]
    evidence = engine.compute(requests, "model")
    assert evidence.generation("Mia buys 12 apples", 4) == " and 5"  # four tokens: space, and, space, 5
    assert evidence.generation("Mia buys 12 apples", 9, chat=True).startswith(" and 5 pears")


class OutOfMemoryModel(FakeModel):
    """Fails like a GPU out of memory on any batch of more than two texts."""

    def score(self, texts: Sequence[str]) -> list[TokenStats]:
        if len(texts) > 2:
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return super().score(texts)


def test_out_of_memory_halves_the_batch():
    model = OutOfMemoryModel()
    engine = EvidenceEngine(lambda: model, "m", MemoryStore(), 8)
    texts = [str(i) * (i + 1) for i in range(8)]
    evidence = engine.compute([ScoreRequest(t) for t in texts], "model")
    assert engine.stats.oom_retries >= 3
    assert engine.stats.computed == 8
    for text in texts:  # the halves give the same numbers as unbatched scoring
        expected = FakeModel().score([text])[0].logprobs.astype(np.float32)
        np.testing.assert_array_equal(evidence.stats(text).logprobs, expected)


def test_progress_moves_inside_a_generation_batch_and_never_backwards():
    class GenerationOOM(FakeModel):
        """Reports every prompt it finishes, then runs out of memory on batches over three."""

        def generate(self, prompts, max_new_tokens, chat=False, on_progress=None, **kept):
            texts = super().generate(prompts, max_new_tokens, chat, on_progress, **kept)
            if len(prompts) > 3:
                raise RuntimeError("CUDA out of memory")
            return texts

    seen: list[tuple[int, int]] = []

    def progress(label: str, done: int, total: int) -> None:
        seen.append((done, total))

    engine = EvidenceEngine(GenerationOOM, "m", MemoryStore(), 2, progress, generation_batch_size=6)
    prompts = [f"Mia buys {n} apples" for n in range(10, 18)]  # 8 prompts: batches of 6 and 2
    engine.compute([GenerateRequest(p, 3) for p in prompts], "model")
    done = [d for d, _ in seen]
    assert engine.stats.oom_retries == 1  # the batch of 6 ran again as two halves of 3
    assert done == sorted(done) and done[0] == 0 and done[-1] == 8
    assert set(range(1, 9)) <= set(done)  # every finished prompt showed, not only whole batches
    assert {total for _, total in seen} == {8}
    assert len(done) == len(set(done))  # each count once: a batch's last part is its end


def test_out_of_memory_on_one_text_is_a_clear_runtime_failure():
    class AlwaysOOM(FakeModel):
        def score(self, texts: Sequence[str]) -> list[TokenStats]:
            raise RuntimeError("out of memory")

    engine = EvidenceEngine(AlwaysOOM, "m", MemoryStore(), 4)
    with pytest.raises(RuntimeFailure, match="Out of memory on a single text"):
        engine.compute([ScoreRequest("a b"), ScoreRequest("c d")], "model")


def test_automatic_batch_sizes_follow_the_device_and_the_model_size():
    from contamcheck.backends import ModelDescription
    from contamcheck.pipeline.handles import LARGE_MODEL_BYTES, auto_batch_sizes

    def sizes(device: str, weights: int) -> tuple[int, int]:
        return auto_batch_sizes(ModelDescription("m", "m", {"device": device}, weights))

    assert sizes("cpu", 2**20) == (16, 64)
    assert sizes("cuda", 2**20) == (64, 256)
    assert sizes("cpu", LARGE_MODEL_BYTES) == (4, 16)


def test_a_check_sees_the_first_scores_once_and_can_stop_the_rest():
    texts = ["a", "bb", "ccc", "dddd", "eeeee", "ffffff"]
    store = MemoryStore()
    seen: list[list[str]] = []

    def stop(values: dict) -> None:
        seen.append(sorted(values))
        raise RuntimeFailure("stop")

    model = CountingModel()
    with pytest.raises(RuntimeFailure):
        EvidenceEngine(lambda: model, "m", store, 2).compute([ScoreRequest(t) for t in texts], "model", stop)
    assert len(model.batches) == 1 and len(seen) == 1  # nothing computed after the check
    assert seen[0] == sorted(ScoreRequest(t).key for t in model.batches[0])
    assert len(store.get_many("m", seen[0])) == 2  # the batch it saw is stored: a rerun keeps it

    # Again: the check sees what the store holds whole, before anything is computed.
    seen.clear()
    again = CountingModel()
    with pytest.raises(RuntimeFailure):
        EvidenceEngine(lambda: again, "m", store, 2).compute([ScoreRequest(t) for t in texts], "model", stop)
    assert again.batches == [] and len(seen) == 1 and len(seen[0]) == 2

    # A check that passes is not asked again, and the rest is computed: from the store's first batch,
    # and from the first batch computed (generation requests are not its business).
    requests = [ScoreRequest(t) for t in texts] + [GenerateRequest(t, 3) for t in texts]
    for ready, computed in ((store, 2), (MemoryStore(), 3)):
        calls: list[int] = []
        counting = CountingModel()
        evidence = EvidenceEngine(lambda m=counting: m, "m", ready, 2).compute(
            requests, "model", lambda values, seen=calls: seen.append(len(values))
        )
        assert calls == [2] and all(evidence.value(r.key) is not None for r in requests)
        assert len(counting.batches) == computed  # score batches: the generations are counted apart
    # All of it stored: the check still sees the plan's first batch only, as the audit that stored it.
    calls = []
    EvidenceEngine(CountingModel, "m", store, 2).compute(
        requests, "model", lambda values: calls.append(len(values))
    )
    assert calls == [2]


class Stop(Exception):
    pass


def test_generations_finished_before_a_stop_are_kept_and_not_generated_again():
    """A stop within a generation batch (Ctrl-C, a cancelled web job) kept nothing of it before:
    the black-box pass re-ran 16 of 17 generations. Now each part is stored as the backend finishes
    it, and the resumed batch generates only the rest, with the texts an unstopped run makes."""
    prompts = [f"Mia buys {n} apples and {n + 2} pears" for n in range(10, 18)]
    requests = [GenerateRequest(p, 3) for p in prompts]
    whole = EvidenceEngine(FakeModel, "m", MemoryStore(), 2, generation_batch_size=8)
    expected = {p: whole.compute(requests, "model").generation(p, 3) for p in prompts}

    store = MemoryStore()

    def stop_after_five(label: str, done: int, total: int) -> None:
        if done >= 5:
            raise Stop

    with pytest.raises(Stop):
        EvidenceEngine(FakeModel, "m", store, 2, stop_after_five, generation_batch_size=8).compute(
            requests, "model"
        )
    assert len(store.get_many("m", [r.key for r in requests])) == 5  # kept, though the batch did not end

    asked: list[list[str]] = []

    class Resumed(FakeModel):
        def generate(self, prompts, max_new_tokens, chat=False, on_progress=None, **kept):
            asked.append([p for i, p in enumerate(prompts) if i not in (kept.get("known") or {})])
            return super().generate(prompts, max_new_tokens, chat, on_progress, **kept)

    engine = EvidenceEngine(Resumed, "m", store, 2, generation_batch_size=8)
    evidence = engine.compute(requests, "model")
    assert [len(a) for a in asked] == [3]  # the same batch of eight, three of it generated
    assert (engine.stats.from_store, engine.stats.computed) == (5, 3)
    assert {p: evidence.generation(p, 3) for p in prompts} == expected


def test_parts_kept_before_an_out_of_memory_are_not_generated_again_in_the_halves():
    """A batch that runs out of memory after some of its parts is run again in halves; the parts
    it finished are known to them (found in review: 12 texts generated for 8 prompts)."""
    generated: list[str] = []

    class PartsThenOOM(FakeModel):
        def generate(self, prompts, max_new_tokens, chat=False, on_progress=None, **kept):
            known, on_texts = kept.get("known") or {}, kept.get("on_texts")
            texts = []
            for start in range(0, len(prompts), 2):  # parts of two, as the transformers backend splits
                if len(prompts) > 4 and start >= 4:
                    raise RuntimeError("CUDA out of memory")
                part = range(start, min(start + 2, len(prompts)))
                if all(i in known for i in part):
                    texts += [known[i] for i in part]
                    continue
                made = {i: self._continue(prompts[i], max_new_tokens[i]) for i in part}
                generated.extend(prompts[i] for i in part)
                if on_texts is not None:
                    on_texts(made)
                texts += list(made.values())
            return texts

    prompts = [f"Mia buys {n} apples" for n in range(10, 18)]
    engine = EvidenceEngine(PartsThenOOM, "m", MemoryStore(), 2, generation_batch_size=8)
    evidence = engine.compute([GenerateRequest(p, 3) for p in prompts], "model")
    assert sorted(generated) == sorted(prompts)  # each once
    assert all(evidence.generation(p, 3) == FakeModel()._continue(p, 3) for p in prompts)

"""min-k++, zlib, guided and canonical-order: hand-computed values and behaviour on the fake model."""

from __future__ import annotations

import math
import zlib
from importlib import resources

import numpy as np
import pytest

from contamcheck.backends import TokenStats
from contamcheck.backends.fake import FakeModel
from contamcheck.benchmarks import load_benchmark
from contamcheck.evidence import Evidence, EvidenceEngine, MemoryStore, ScoreRequest
from contamcheck.methods import MethodSettings, create_test
from contamcheck.methods.canonical_order import MIN_SHARDS, minimum_detectable_effect, one_sided_t
from contamcheck.methods.guided import GENERAL_TEMPLATE, GUIDED_TEMPLATE, rouge_l

SAMPLE = resources.files("contamcheck.benchmarks").joinpath("data/sample.jsonl")


def test_min_k_plus_plus_standardises_then_takes_the_lowest_k():
    text = "any text"
    stats = TokenStats(
        logprobs=np.array([-1.0, -2.0, -4.0, -3.0]),
        mean=np.array([-2.0, -2.0, -2.0, -2.0]),
        std=np.array([1.0, 0.5, 2.0, 1.0]),
    )
    evidence = Evidence({ScoreRequest(text).key: stats})
    # z = [1, 0, -1, -1]; lowest half: mean(-1, -1) = -1; on the signed-log scale: -log(2)
    assert create_test("min-k++", MethodSettings(k=0.5)).score(text, evidence) == pytest.approx(-math.log(2))
    no_moments = Evidence({ScoreRequest(text).key: TokenStats(np.array([-1.0]))})
    assert math.isnan(create_test("min-k++", MethodSettings()).score(text, no_moments))


def test_zlib_ratio_is_summed_logprob_over_compressed_bytes():
    text = "Mia buys 12 apples and 5 pears on Monday morning."
    evidence = Evidence({ScoreRequest(text).key: TokenStats(np.array([-1.0, -2.0, -3.0]))})
    expected = -6.0 / len(zlib.compress(text.encode()))
    assert create_test("zlib", MethodSettings()).score(text, evidence) == pytest.approx(expected)


def test_rouge_l_bounds():
    assert rouge_l("the cat sat on the mat", "the cat sat on the mat") == pytest.approx(1.0)
    assert rouge_l("the cat sat", "") == 0.0
    assert 0 < rouge_l("the cat sat on the mat", "a cat sat on a rug") < 1


def guided_test(memorised: list[str]):
    settings = MethodSettings(dataset="GSM8K", split="test", benchmark_kind="math")
    test = create_test("guided", settings)
    model = FakeModel(memorised)
    texts = memorised or [load_benchmark(str(SAMPLE)).items[0].text]
    evidence = EvidenceEngine(lambda: model, "m", MemoryStore(), 8).compute(
        [r for t in texts for r in test.requests(t)], "model"
    )
    return test, evidence, texts


def test_guided_prompts_name_the_dataset_only_when_guided():
    test, _, texts = guided_test([])
    guided, general, budget = test.prompts(texts[0])
    assert "test split of the GSM8K dataset" in guided and "EXACTLY" in guided
    assert "GSM8K" not in general and "single question" in general
    assert guided.startswith(GUIDED_TEMPLATE.split("{")[0]) and general.startswith(
        GENERAL_TEMPLATE.split("{")[0]
    )
    assert budget > 0
    (first, second) = test.requests(texts[0])
    assert first.chat and second.chat


def test_guided_gain_for_a_memorising_model_and_none_for_a_clean_one():
    questions = [item.text for item in load_benchmark(str(SAMPLE)).items[:10]]
    test, evidence, _ = guided_test(questions)
    guided, general = test.overlaps(questions[0], evidence)
    assert guided > 0.9 and general < 0.5
    clean_test, clean_evidence, texts = guided_test([])
    guided, general = clean_test.overlaps(texts[0], clean_evidence)
    assert guided == pytest.approx(general)


def test_guided_says_when_the_model_does_not_follow_instructions():
    test, _, _ = guided_test([])
    reason, note = test.diagnose(np.array([0.01, 0.02]), np.array([0.0, 0.03]))
    assert reason is not None and "does not follow" in reason and note is None
    reason, note = test.diagnose(np.array([0.7, 0.72]), np.array([0.7, 0.69]))
    assert reason is None and "weak evidence" in note


def test_canonical_order_plan_shards_and_permutations():
    test = create_test("canonical-order", MethodSettings(order_shards=6, order_permutations=4, seed=3))
    benchmark = load_benchmark(str(SAMPLE))
    shards = test.plan(benchmark)
    assert isinstance(shards, list) and len(shards) == 6
    positions = [item.position for shard in shards for item in shard.items]
    assert positions == list(range(len(positions)))  # contiguous, from the start, in published order
    for shard in shards:
        assert 3 <= len(shard.items) <= 8 and len(shard.orderings) == 4
        assert tuple(range(len(shard.items))) not in shard.orderings
        assert len(set(shard.orderings)) == 4
    again = create_test("canonical-order", MethodSettings(order_shards=6, order_permutations=4, seed=3)).plan(
        benchmark
    )
    assert [s.orderings for s in again] == [s.orderings for s in shards]  # seeded


@pytest.mark.parametrize(("size", "wanted"), [(8, 10_000), (8, 40_319), (7, 5_039), (4, 23), (3, 10)])
def test_canonical_order_draws_near_all_reorderings_each_once(size, wanted):
    """Near all of a shard's reorderings, drawing until each turns up (with a list to look them up
    in) took minutes: a black-box pass saw --order-permutations 20000 run for ten without a word."""
    test = create_test("canonical-order", MethodSettings(order_permutations=wanted, seed=1))
    orderings = test._orderings(0, size)  # type: ignore[attr-defined]
    assert len(orderings) == len(set(orderings)) == min(wanted, math.factorial(size) - 1)
    assert tuple(range(size)) not in orderings and all(sorted(o) == list(range(size)) for o in orderings)
    assert orderings == test._orderings(0, size)  # type: ignore[attr-defined]  # seeded


def test_canonical_order_is_skipped_without_a_published_order_or_enough_questions(tmp_path):
    test = create_test("canonical-order", MethodSettings())
    assert "published order" in test.plan(load_benchmark(str(SAMPLE), ordered=False))
    small = tmp_path / "small.txt"
    small.write_text("\n".join(f"Question number {i} asks about {i + 2} apples today." for i in range(8)))
    said = test.plan(load_benchmark(str(small)))
    assert isinstance(said, str) and said.startswith("too few questions: the benchmark's 8 fill 1 shard of")
    assert "5 needed (a shard takes up to 8 questions" in said
    # one question repeated: every reordering is the same text, so the blocks say nothing (they read
    # "does not prefer the published order, p = 1.00" and judged alone; found by a black-box pass)
    same = tmp_path / "same.txt"
    same.write_text("\n".join(["Question one asks about 3 apples and 4 pears today."] * 60))
    said = test.plan(load_benchmark(str(same)))
    assert isinstance(said, str) and "fill 0 shards of" in said
    assert "8 blocks of one question repeated left out, as no reordering changes them" in said


def test_one_sided_t_and_the_detectable_effect():
    t, p = one_sided_t(np.array([1.0, 2.0, 3.0, 4.0, 5.0]))
    assert t == pytest.approx(3.0 / (np.std([1, 2, 3, 4, 5], ddof=1) / math.sqrt(5)))
    assert p < 0.01
    _, p_null = one_sided_t(np.array([-1.0, 1.0, -2.0, 2.0, 0.5, -0.5]))
    assert p_null == pytest.approx(0.5)
    assert minimum_detectable_effect(10, 0.001) == pytest.approx(1.64, abs=0.05)
    assert minimum_detectable_effect(50, 0.001) < minimum_detectable_effect(10, 0.001)
    assert MIN_SHARDS >= 5

"""min-k++, zlib, guided and canonical-order: hand-computed values and behaviour on the fake model."""

from __future__ import annotations

import dataclasses
import math
import random
import zlib
from importlib import resources

import numpy as np
import pytest
from scipy import stats

from contamcheck.backends import TokenStats
from contamcheck.backends.fake import FakeModel
from contamcheck.benchmarks import load_benchmark
from contamcheck.evidence import Evidence, EvidenceEngine, MemoryStore, ScoreRequest
from contamcheck.methods import MethodSettings, create_test
from contamcheck.methods.canonical_order import (
    MIN_SHARDS,
    ShardOutcome,
    minimum_detectable_effect,
    randomization_test,
)
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
        assert len(shard.items) == test.shard_size(benchmark.items) and len(shard.orderings) == 4
        assert tuple(range(len(shard.items))) not in shard.orderings
        assert len(set(shard.orderings)) == 4
    again = create_test("canonical-order", MethodSettings(order_shards=6, order_permutations=4, seed=3)).plan(
        benchmark
    )
    assert [s.orderings for s in again] == [s.orderings for s in shards]  # seeded


def test_which_questions_make_a_shard_does_not_depend_on_their_order_within_it():
    """Shards filled until the next question did not fit began each with a long question, so the
    published order was no random draw among a shard's orderings: reorder the questions inside each
    shard and the shards hold the same questions, of one size set by the median question."""
    test = create_test("canonical-order", MethodSettings(order_shards=12))
    benchmark = load_benchmark("humaneval")
    shards = test.plan(benchmark)
    assert isinstance(shards, list) and len({len(s.items) for s in shards}) == 1
    rng = random.Random(0)
    ordered = sorted(benchmark.items, key=lambda item: item.position)
    size = len(shards[0].items)
    reordered = []
    for start in range(0, len(ordered), size):
        block = ordered[start : start + size]
        rng.shuffle(block)
        reordered += block
    moved = dataclasses.replace(
        benchmark, items=tuple(dataclasses.replace(item, position=i) for i, item in enumerate(reordered))
    )
    again = test.plan(moved)
    assert isinstance(again, list)
    assert [{i.id for i in s.items} for s in again] == [{i.id for i in s.items} for s in shards]
    assert [[i.id for i in s.items] for s in again] != [[i.id for i in s.items] for s in shards]
    long = [dataclasses.replace(item, text=item.text * 10) for item in ordered]
    assert test.shard_size(long) == 3 and test.shard_size(ordered[:1]) == test.shard_size(ordered[:1] * 9)


def _questions(path, lengths: list[int]):
    """A benchmark file of numbered questions of these lengths, in order."""
    lines = []
    for i, length in enumerate(lengths):
        head = f"Question {i} asks how many apples {i + 2} baskets hold"
        lines.append((head + " and more" * (length // 9))[: length - 2] + "s?")
    assert [len(line) for line in lines] == lengths
    path.write_text("\n".join(lines))
    return load_benchmark(str(path))


def test_a_block_of_long_questions_is_passed_over_whatever_their_order(tmp_path):
    """Shards of one size have no length of their own: a block of a benchmark's few very long
    questions (over twice a block of the median one) would cost more than many others and be the
    first a context window cuts. It is passed over by its length alone, which doesn't depend on the
    order of its questions, so the shards still don't either."""
    test = create_test("canonical-order", MethodSettings(order_shards=6))
    lengths = [380] * 60
    lengths[10] = 3000  # the third block (of 5) holds one very long question
    benchmark = _questions(tmp_path / "long.txt", lengths)
    shards = test.plan(benchmark)
    assert isinstance(shards, list) and len(shards) == 6 and len(shards[0].items) == 5
    assert [s.items[0].position for s in shards] == [0, 5, 15, 20, 25, 30]  # the third left out
    assert [s.passed_over for s in shards] == [(), (), ("long",), (), (), ()]
    order = {10: 12, 11: 10, 12: 11}  # the long question moves within its block
    moved = dataclasses.replace(
        benchmark,
        items=tuple(
            dataclasses.replace(item, position=order.get(item.position, item.position))
            for item in benchmark.items
        ),
    )
    again = test.plan(moved)
    assert isinstance(again, list)
    assert [[i.id for i in s.items] for s in again] == [[i.id for i in s.items] for s in shards]
    # the longest kept: twice a block of the median question, joined
    assert test.longest_shard(benchmark.items) == 2 * 5 * (380 + 2)
    lengths[10] = 2 * 5 * (380 + 2) - (4 * 380 + 4 * 2)
    kept = test.plan(_questions(tmp_path / "kept.txt", lengths))
    assert isinstance(kept, list) and [s.items[0].position for s in kept][:3] == [0, 5, 10]
    lengths[10] += 1
    passed = test.plan(_questions(tmp_path / "passed.txt", lengths))
    assert isinstance(passed, list) and [s.items[0].position for s in passed][:3] == [0, 5, 15]

    # a benchmark of few blocks, some too long: said in the skip reason
    said = test.plan(_questions(tmp_path / "few.txt", [380] * 5 + [3000] * 5 + [380] * 15))
    assert isinstance(said, str) and said.startswith(
        "too few shards: the benchmark's 25 questions fill 4 shards"
    )
    assert said.endswith(
        "; 1 block left out as too long (over twice the length of a shard of the median question)"
    )
    # a block passed over after the last shard, where the benchmark ran out first: counted on it
    lengths = [380] * 60
    lengths[57] = 3000
    twelve = create_test("canonical-order", MethodSettings(order_shards=12)).plan(
        _questions(tmp_path / "last.txt", lengths)
    )
    assert isinstance(twelve, list) and len(twelve) == 11 and twelve[-1].passed_over == ("long",)


def test_the_report_says_which_blocks_and_shards_canonical_order_left_out(tmp_path):
    from contamcheck import AuditConfig, audit

    lengths = [380] * 60
    lengths[10] = lengths[30] = 3000
    _questions(tmp_path / "bench.txt", lengths)
    config = AuditConfig(
        model="fake:clean", benchmark=str(tmp_path / "bench.txt"), tests=("canonical-order",), no_cache=True
    )
    (order,) = audit(config).tests
    assert order.status != "skipped" and order.note is not None
    assert [s.first_position for s in order.shards] == [0, 5, 15, 20, 25, 35, 40, 45, 50, 55]
    assert order.note.endswith(
        "Of the benchmark, 2 blocks left out as too long (over twice the length of a shard of the median "
        "question)."
    ), order.note


def test_canonical_orders_note_counts_the_shards_it_left_out():
    """A shard the model's window cut, or one it scored -inf, is left out of the test: the note
    counts each, as the report gives no other word of them where the test still ran."""
    from contamcheck.pipeline.runners import run_canonical_order

    test = create_test("canonical-order", MethodSettings())
    shards = test.plan(load_benchmark(str(SAMPLE)))
    assert isinstance(shards, list) and len(shards) == 10
    texts = [text for shard in shards for text in (shard.canonical, *shard.permuted)]
    found = {
        ScoreRequest(text).key: stats for text, stats in zip(texts, FakeModel().score(texts), strict=True)
    }
    cut, impossible = shards[0].canonical, shards[1].permuted[2]
    found[ScoreRequest(cut).key] = dataclasses.replace(found[ScoreRequest(cut).key], truncated=True)
    scored = found[ScoreRequest(impossible).key]
    logprobs = scored.logprobs.copy()
    logprobs[3] = -np.inf
    found[ScoreRequest(impossible).key] = dataclasses.replace(scored, logprobs=logprobs)
    result = run_canonical_order(test, shards, Evidence(found), 0.001, 0)
    assert result.n == 8 and result.note is not None and result.note.startswith("8 shards of 8")
    assert result.note.endswith(
        " 1 shard left out: longer than the model's context window. 1 shard left out: scored not finite."
    )
    assert [s.truncated for s in result.shards] == [True] + [False] * 9
    # too few left to judge: the skip says why each was left out
    for shard in shards[2:7]:
        scored = found[ScoreRequest(shard.canonical).key]
        found[ScoreRequest(shard.canonical).key] = dataclasses.replace(
            scored, logprobs=scored.logprobs - np.inf
        )
    skipped = run_canonical_order(test, shards, Evidence(found), 0.001, 0)
    assert skipped.skip_reason == (
        "only 3 of 10 shards can be judged: 1 longer than the model's context window, 6 scored not finite "
        "(need 5)"
    )


@pytest.mark.parametrize(
    ("alpha", "draws", "said"),
    [
        (1e-5, 10_000_000, "this detects a published order scoring about"),
        (
            1e-8,
            10_000_000,
            "can reach alpha 1e-08 with 10,000,000 draws, the most an audit takes: choose a larger",
        ),
    ],
)
def test_canonical_order_draws_enough_for_a_small_alpha(tmp_path, alpha, draws, said):
    """Its draws were fixed at 100,000, so below alpha of about 6e-5 the test read "could not reach
    alpha" and its advice (more shards or reorderings) could not help: a smaller alpha takes more
    draws now, and below what the most give the note says to choose a larger alpha. The saved
    report's check runs the same draws again."""
    from contamcheck import AuditConfig, audit
    from contamcheck.methods.canonical_order import randomization_draws
    from contamcheck.report import read_report, to_json

    assert randomization_draws(0.001) == randomization_draws(0.5) == 100_000
    assert randomization_draws(1e-4) == 1_000_000
    assert randomization_draws(1e-310) == 10_000_000  # 100 / alpha overflowed: the audit stopped at its end
    config = AuditConfig(
        model="fake:clean", benchmark="sample", tests=("canonical-order",), alpha=alpha, no_cache=True
    )
    report = audit(config)
    (order,) = report.tests
    assert order.permutations == draws and order.note is not None and said in order.note
    assert (order.min_attainable_p is not None and order.min_attainable_p < alpha) == (alpha > 1e-7)
    path = tmp_path / "report.json"
    path.write_text(to_json(report))
    assert read_report(path).tests[0].p_value == order.p_value


def test_canonical_order_says_what_it_detects_at_holms_first_step():
    """Its note gave the effect it detects at alpha, but the verdict weighs it with the other
    calibrated tests (Holm), and on its own it must reach alpha over their number: near the draws'
    cap (alpha 1.5e-7, 10 million draws, no p below 1e-7) the note said it could detect a
    preference the verdict could never rest on it alone. It is judged after the others, and its
    result keeps its place among them."""
    from contamcheck import AuditConfig, audit

    tests = ("canonical-order", "completion", "min-k")
    config = AuditConfig(model="fake:clean", benchmark="sample", tests=tests, alpha=1.5e-7, no_cache=True)
    report = audit(config)
    assert [t.name for t in report.tests] == list(tests)
    order = report.tests[0]
    calibrated = sum(t.calibrated and t.p_value is not None for t in report.tests)
    assert calibrated == 3
    assert order.min_attainable_p is not None and 1.5e-7 / 3 < order.min_attainable_p < 1.5e-7
    assert (
        order.note is not None
        and "No published-order preference can reach p < 5e-08 (alpha 1.5e-07 " in order.note
    )
    assert "over 3 calibrated tests) with 10,000,000 draws, the most an audit takes" in order.note
    # at the default alpha it can: the effect is that at Holm's first step, larger than at alpha
    report = audit(dataclasses.replace(config, alpha=0.001))
    note = report.tests[0].note
    assert note is not None and "With 80% power at p < 0.00033 (alpha 0.001 over 3 calibrated tests) " in note


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
    assert isinstance(said, str) and said.startswith(
        "too few questions: the benchmark's 8 questions fill 1 shard of"
    )
    assert "5 needed (a shard takes about 2,000 characters of the benchmark's median question" in said
    # one question repeated: every reordering is the same text, so the blocks say nothing (they read
    # "does not prefer the published order, p = 1.00" and judged alone; found by a black-box pass)
    same = tmp_path / "same.txt"
    same.write_text("\n".join(["Question one asks about 3 apples and 4 pears today."] * 60))
    said = test.plan(load_benchmark(str(same)))
    assert isinstance(said, str) and "fill 0 shards of" in said
    assert "7 blocks of one question repeated left out, as no reordering changes them" in said  # of 8


def _shards(values: list[list[float]]) -> list[ShardOutcome]:
    """Outcomes of shards whose orderings scored ``values`` (the published one first)."""
    plan = create_test("canonical-order", MethodSettings()).plan(load_benchmark(str(SAMPLE)))
    assert isinstance(plan, list)
    return [ShardOutcome(plan[0], v[0], tuple(v[1:]), False) for v in values]


def test_the_randomization_test_reaches_its_floor_when_the_published_order_tops_every_shard():
    top = _shards([[-10.0, -12.0, -13.0, -11.5, -12.5, -14.0]] * 10)
    outcome = randomization_test(top, seed=0, draws=20_000)
    assert outcome.p_value == pytest.approx(1 / 20_001)  # no draw reaches it: its floor
    assert outcome.min_p == pytest.approx(1 / 20_001)  # above 6^-10, the exact one
    assert outcome.z > 4
    bottom = _shards([[-15.0, -12.0, -13.0, -11.5, -12.5, -14.0]] * 10)
    assert randomization_test(bottom, seed=0, draws=20_000).p_value > 0.99
    # one reordering per shard: no five shards can say more than 1/32
    few = _shards([[-10.0, -12.0]] * 5)
    assert randomization_test(few, seed=0).min_p == pytest.approx(1 / 32)
    assert randomization_test(few, seed=0).p_value == pytest.approx(1 / 32, rel=0.05)
    assert minimum_detectable_effect(few, 0.001) == math.inf  # 1/32 can't reach 0.001
    # every ordering alike: nothing to prefer
    same = randomization_test(_shards([[-10.0] * 6] * 8), seed=0, draws=1000)
    assert same.z == 0 and same.p_value == 1.0 and same.min_p == 1.0
    # shards whose orderings all tie lower no floor: one shard that can speak gives 1/6 at best
    one_speaks = _shards([[-10.0] * 6] * 9 + [[-10.0, -12.0, -13.0, -11.5, -12.5, -14.0]])
    assert randomization_test(one_speaks, seed=0).min_p == pytest.approx(1 / 6)
    assert minimum_detectable_effect(_shards([[-10.0] * 6] * 8), 0.001) == math.inf
    mde = minimum_detectable_effect(_shards([[-10.0, -12.0, -13.0, -11.5, -12.5, -14.0]] * 10), 0.001)
    assert mde == pytest.approx((3.090 + 0.842) * math.sqrt(10 * 5 / 6) / 10, rel=0.01)
    assert minimum_detectable_effect(top * 5, 0.001) < mde
    assert MIN_SHARDS >= 5


def test_the_randomization_test_holds_its_rate_where_skewed_scores_mislead_a_t_test():
    """Orderings whose log-probabilities have a long lower tail (an order that puts two questions
    badly together), the published one a draw among them: a t-test across ten shards flags more than
    5%; the randomization test holds it (METHODS, canonical-order)."""
    rng = np.random.default_rng(1)
    randomized, t_test = [], []
    for run in range(400):
        values = -rng.lognormal(0.0, 1.2, size=(10, 6))  # shards x orderings; the first is published
        shards = _shards(values.tolist())
        randomized.append(randomization_test(shards, seed=run, draws=4000).p_value)
        differences = values[:, 0] - values[:, 1:].mean(axis=1)
        t_test.append(stats.ttest_1samp(differences, 0.0, alternative="greater").pvalue)
    assert 0.025 <= np.mean(np.array(randomized) < 0.05) <= 0.075
    assert np.mean(np.array(t_test) < 0.05) > 0.08

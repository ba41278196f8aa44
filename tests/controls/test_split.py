"""Cutting a question at its middle word: prompt first half, judge recall on the second."""

from __future__ import annotations

import ast

import pytest

from contamcheck.controls import MIN_WORDS, split_question
from contamcheck.controls.split import MAX_SUFFIX_WORDS


def words(count: int, sep: str = " ") -> str:
    return sep.join(f"w{index}" for index in range(count))


def test_min_words_boundary() -> None:
    assert split_question(words(MIN_WORDS - 1)) is None
    split = split_question(words(MIN_WORDS))
    assert split is not None
    assert split.prefix.split() == [f"w{i}" for i in range(MIN_WORDS // 2)]
    assert split.suffix.split() == [f"w{i}" for i in range(MIN_WORDS // 2, MIN_WORDS)]


@pytest.mark.parametrize("text", ["", "   ", "\n\n\t", "one two three"])
def test_short_or_blank_text_has_no_split(text: str) -> None:
    assert split_question(text) is None


def test_words_are_counted_by_whitespace_not_by_characters() -> None:
    # Seven long words spread over lines are still seven words.
    text = "\n".join("x" * 50 for _ in range(MIN_WORDS - 1))
    assert split_question(text) is None
    assert split_question(text + "\ny") is not None


@pytest.mark.parametrize("count", [MIN_WORDS, MIN_WORDS + 1, 21, 80])
def test_split_is_at_the_middle_word(count: int) -> None:
    split = split_question(words(count))
    assert split is not None
    middle = count // 2
    assert len(split.prefix.split()) == middle
    assert split.suffix.split()[0] == f"w{middle}"


def test_prefix_ends_without_whitespace_and_suffix_starts_and_ends_on_a_word() -> None:
    text = "Alice   has 16 apples\tand Bob   has 24 pears   \n"
    split = split_question(text)
    assert split is not None
    assert split.prefix == "Alice   has 16 apples"
    assert split.suffix == "and Bob   has 24 pears"  # inner whitespace kept as written


CODE = '''def add(x: int, y: int) -> int:
    """Add two numbers.

    >>> add(2, 3)
    5
    """
    if x < 0:
        return y
    return x + y
'''


def test_code_keeps_its_newlines_and_indentation() -> None:
    split = split_question(CODE)
    assert split is not None
    # The prefix is the original text up to the middle word, so its lines are the original lines.
    assert CODE.startswith(split.prefix)
    assert split.prefix == split.prefix.rstrip()
    assert "\n    " in split.prefix  # indentation survives
    # The suffix is an exact slice of the original text, indentation and newlines included.
    start = CODE.index(split.suffix)
    assert CODE[start : start + len(split.suffix)] == split.suffix
    assert split.suffix.endswith('    """\n    if x < 0:\n        return y\n    return x + y')
    # Only whitespace lies between the two halves.
    assert CODE[len(split.prefix) : start].strip() == ""
    # Glued back with the original gap, the halves are the original source, which still parses.
    glued = split.prefix + CODE[len(split.prefix) : start] + split.suffix
    assert glued == CODE.rstrip()
    ast.parse(glued)


def test_suffix_is_capped_at_max_suffix_words() -> None:
    count = 2 * MAX_SUFFIX_WORDS + 30
    split = split_question(words(count))
    assert split is not None
    assert len(split.prefix.split()) == count // 2  # the prefix is never cut
    suffix_words = split.suffix.split()
    assert len(suffix_words) == MAX_SUFFIX_WORDS
    assert suffix_words[0] == f"w{count // 2}"
    assert suffix_words[-1] == f"w{count // 2 + MAX_SUFFIX_WORDS - 1}"


def test_suffix_cap_is_a_parameter() -> None:
    split = split_question(words(30), max_suffix_words=5)
    assert split is not None
    assert split.suffix == "w15 w16 w17 w18 w19"


def test_suffix_not_capped_when_the_second_half_is_short_enough() -> None:
    count = 2 * MAX_SUFFIX_WORDS
    split = split_question(words(count))
    assert split is not None
    assert len(split.suffix.split()) == count - count // 2
    assert split.suffix.split()[-1] == f"w{count - 1}"

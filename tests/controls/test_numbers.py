"""Finding numbers in text, telling which ones we may change, and comparing them."""

from __future__ import annotations

from decimal import Decimal

import pytest

from contamcheck.controls import NUMBER, is_changeable, new_numbers, normalise, numbers_in
from contamcheck.controls.numbers import NumberShape


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Tom has 16 apples.", ["16"]),
        ("It costs $4.50, or 3.50 with a coupon.", ["4.50", "3.50"]),
        ("A town of 12,500 people and 1,000,000 ants.", ["12,500", "1,000,000"]),
        ("In 1999 and again in 2024.", ["1999", "2024"]),
        ("He scored 50% on day 7 (of 30).", ["50", "7", "30"]),
        ("Temperatures of -3 degrees at 10:30.", ["3"]),  # clock times are left alone
        ("Take 2/3 of [3, 4].", ["2", "3", "3", "4"]),
        ("The list 1,2,3 has no thousands.", ["1", "2", "3"]),
        ("Neither is 12,50 a grouped number.", ["12", "50"]),
        ("He counted to 16.", ["16"]),  # the full stop ends the sentence, not a decimal
        ("A total of 12,345.67 euros.", ["12,345.67"]),
        ("Agent 007 reporting.", ["007"]),  # found, but not changeable (see below)
    ],
)
def test_numbers_in_finds_plain_numbers_as_written(text: str, expected: list[str]) -> None:
    assert numbers_in(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "x1 = list2[i] + v2",  # identifiers
        "python 3.11.7 and version 2.0.1",  # versions and dotted chains
        "mask = 0x1F",  # hex literal
        "n = 1e5 or 1.5e3",  # exponent literals
        "big = 1_000",  # underscore digit groups
        "the 3rd and 21st and 2nd",  # ordinals
        "H2O and CO2",  # glued to letters
        "a.5 and .5",  # a decimal part without its integer part
        "f'{x:.2f}' and '%5d'",  # format specs
    ],
)
def test_numbers_inside_identifiers_versions_and_literals_are_not_numbers(text: str) -> None:
    assert numbers_in(text) == []


def test_numbers_in_agrees_with_the_public_pattern() -> None:
    text = "Sam paid 12,500 for 3 cars in 1999, x1 is 0x1F, and 2.75 is left."
    assert numbers_in(text) == [m.group(0) for m in NUMBER.finditer(text)]
    assert numbers_in(text) == ["12,500", "3", "1999", "2.75"]


@pytest.mark.parametrize(
    ("literal", "changeable"),
    [
        ("16", True),
        ("2", True),
        ("3.5", True),
        ("0.5", True),
        ("12,500", True),
        ("1999", True),
        ("0", False),  # carries grammar and code meaning
        ("1", False),
        ("1.0", False),  # the same number as 1
        ("0.00", False),
        ("007", False),  # leading zeros: not valid Python, not a quantity
        ("01", False),
        ("0,500", False),
    ],
)
def test_is_changeable(literal: str, changeable: bool) -> None:
    assert is_changeable(literal) is changeable


@pytest.mark.parametrize(
    ("literal", "expected"),
    [
        ("16", "16"),
        ("16.0", "16"),
        ("16.000", "16"),
        ("1,000", "1000"),
        ("1,000.00", "1000"),
        ("3.50", "3.5"),
        ("0.10", "0.1"),
        ("12,345.670", "12345.67"),
        ("100", "100"),  # not 1E+2
        ("2500", "2500"),
        ("0.0", "0"),
        ("007", "7"),
    ],
)
def test_normalise(literal: str, expected: str) -> None:
    assert normalise(literal) == expected


@pytest.mark.parametrize(("a", "b"), [("16.0", "16"), ("1,000", "1000"), ("3.50", "3.5"), ("2.50", "2.500")])
def test_normalise_makes_equal_numbers_compare_equal(a: str, b: str) -> None:
    assert normalise(a) == normalise(b)
    assert Decimal(normalise(a)) == Decimal(a.replace(",", ""))


def test_normalise_keeps_different_numbers_apart() -> None:
    literals = ["16", "1.6", "160", "16.5", "1,600", "3.05", "3.5"]
    assert len({normalise(x) for x in literals}) == len(literals)


def test_normalise_leaves_non_numbers_as_they_are() -> None:
    assert normalise("abc") == "abc"


def test_new_numbers_are_the_suffix_numbers_the_prefix_does_not_give_away() -> None:
    prefix = "Tom has 16 apples and 1,000 coins and 3 pears."
    suffix = "He buys 16.0 more apples, 5 pears, 1000 coins and 2.50 cakes, then 5 more."
    assert new_numbers(prefix, suffix) == ["5", "2.5", "5"]  # in order, normalised, repeats kept


def test_new_numbers_without_numbers() -> None:
    assert new_numbers("no numbers here", "none here either") == []
    assert new_numbers("", "just 7 and 8") == ["7", "8"]
    assert new_numbers("7 and 8", "") == []


@pytest.mark.parametrize(
    ("literal", "digits", "decimals", "grouped", "year_like"),
    [
        ("16", 2, 0, False, False),
        ("3.50", 1, 2, False, False),
        ("12,500", 5, 0, True, False),
        ("1999", 4, 0, False, True),
        ("2099", 4, 0, False, True),
        ("2100", 4, 0, False, False),
        ("1899", 4, 0, False, False),
        ("1999.5", 4, 1, False, False),  # a year has no decimals
    ],
)
def test_number_shape(literal: str, digits: int, decimals: int, grouped: bool, year_like: bool) -> None:
    shape = NumberShape.of(literal)
    assert (shape.integer_digits, shape.decimals, shape.grouped, shape.year_like) == (
        digits,
        decimals,
        grouped,
        year_like,
    )


@pytest.mark.parametrize("literal", ["16", "3.50", "12,500", "1,234,567.25", "1999", "0.75"])
def test_number_shape_writes_a_value_back_in_its_own_shape(literal: str) -> None:
    assert NumberShape.of(literal).format(Decimal(literal.replace(",", ""))) == literal

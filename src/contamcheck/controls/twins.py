"""Number twins: the same question with its numbers swapped for numbers used elsewhere.

A model that never saw a benchmark has no reason to prefer a question over its twin; a model that
memorised it prefers the numbers it saw. What makes a twin fair:

* replacements come from the numbers the benchmark itself uses, drawn as often as they occur
  there, so they are as "natural" as the originals (random numbers read worse);
* they keep the original's shape: same count of integer digits, same decimals, thousands
  separators where the original has them, years stay years, a day beside a month's name stays a
  day every month has, and a version without a dot ("Python 3") stays;
* the mapping is coherent: one number in a question always becomes the same replacement, and two
  different numbers never become the same one, so the question keeps its structure (doctest
  inputs and expected outputs change alike);
* numbers that are part of identifiers, versions or literals are left alone (see ``numbers``);
* a twin of Python source that parses still parses (``ast.parse``);
* everything is seeded per question, so a question's twin does not depend on the sample.
"""

from __future__ import annotations

import ast
import hashlib
import random
import re
import warnings
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import Decimal
from itertools import accumulate

from .numbers import NUMBER, NumberShape, ascii_digits, is_changeable, is_version, normalise, written_as

ShapeKey = tuple[int, int, bool, int]  # integer digits, decimals, year-like, trailing zeros
REMEMBERED = 100_000  # number literals the pool keeps read (a million distinct ones took 77 MB)
MAX_ATTEMPTS = 8


class NumberPool:
    """How often each number occurs in the benchmark, grouped by shape."""

    def __init__(self, texts: Iterable[str]) -> None:
        counts: dict[ShapeKey, Counter[Decimal]] = {}
        # a literal's shape and value, found once: most recur ("12", "2.50"); the first REMEMBERED kept
        read: dict[str, tuple[ShapeKey, Decimal] | None] = {}
        for text in texts:
            for literal in NUMBER.findall(ascii_digits(text)):
                if literal in read:
                    found = read[literal]
                else:
                    found = _shape_and_value(literal)
                    if len(read) < REMEMBERED:
                        read[literal] = found
                if found is not None:
                    counts.setdefault(found[0], Counter())[found[1]] += 1
        # Sorted values and cumulative weights give a seeded, order-independent weighted draw.
        self._values: dict[ShapeKey, list[Decimal]] = {}
        self._known: dict[ShapeKey, frozenset[Decimal]] = {}
        self._cumulative: dict[ShapeKey, list[int]] = {}
        for key, counter in counts.items():
            values = sorted(counter)
            self._values[key] = values
            self._known[key] = frozenset(values)
            self._cumulative[key] = list(accumulate(counter[v] for v in values))

    def draw(self, shape: NumberShape, exclude: set[Decimal], rng: random.Random) -> Decimal | None:
        """A number of the same shape, drawn in proportion to its use, not in ``exclude``.

        None when every number of that shape is excluded (a question using all of 2 to 9).
        """
        key = _key(shape)
        values = self._values.get(key, [])
        cumulative = self._cumulative.get(key, [])
        known = self._known.get(key, frozenset())
        # as len(set(values) - exclude), without a set of every value per draw (quadratic on big files)
        allowed = len(values) - sum(1 for value in exclude if value in known)
        for _ in range(4 * len(values) if allowed else 0):
            index = bisect_left(cumulative, rng.randint(1, cumulative[-1]))
            if values[index] not in exclude:
                return values[index]
        return _synthesise(shape, exclude, rng)


def _shape_and_value(literal: str) -> tuple[ShapeKey, Decimal] | None:
    """A number literal's shape and value, or None where it is not one a twin changes."""
    if not is_changeable(literal):
        return None
    return _key(NumberShape.of(literal)), Decimal(literal.replace(",", ""))


def _key(shape: NumberShape) -> ShapeKey:
    return shape.integer_digits, shape.decimals, shape.year_like, shape.trailing_zeros


def _synthesise(shape: NumberShape, exclude: set[Decimal], rng: random.Random) -> Decimal | None:
    """A fresh number of the same shape, for shapes the benchmark uses too rarely."""
    for _ in range(100):
        if shape.year_like:
            integer = str(rng.randint(1900, 2099))
        elif shape.integer_digits == 0:
            integer = "0"
        else:
            zeros = 0 if shape.decimals else shape.trailing_zeros
            integer = _digits(
                shape.integer_digits - zeros, rng, first_min=2 if shape.integer_digits == 1 else 1
            )
            integer += "0" * zeros
            if shape.integer_digits == 4 and not shape.decimals and 1900 <= int(integer) <= 2099:
                continue  # a plain number must not turn into a year
        fraction = ""
        if shape.decimals:
            fraction = (
                _digits(shape.decimals - shape.trailing_zeros, rng, first_min=0) + "0" * shape.trailing_zeros
            )
        value = Decimal(f"{integer}.{fraction}" if fraction else integer)
        if value and value not in exclude:
            return value
    return None


def _digits(count: int, rng: random.Random, first_min: int) -> str:
    """``count`` random digits, the first at least ``first_min``, the last not zero (round stays exact)."""
    if count <= 0:
        return ""
    if count == 1:
        return str(rng.randint(max(first_min, 1), 9))
    middle = "".join(str(rng.randint(0, 9)) for _ in range(count - 2))
    return str(rng.randint(first_min, 9)) + middle + str(rng.randint(1, 9))


MONTHS = (
    "January|February|March|April|May|June|July|August|September|October|November|December"
    "|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec"
)
_MONTH_AFTER = re.compile(rf"\s+(?:{MONTHS})\b\.?")
_MONTH_BEFORE = re.compile(rf"\b(?:{MONTHS})\.?\s+$")


def is_day_of_month(text: str, start: int, end: int) -> bool:
    """A number written with a month's name beside it ("31 January", "March 5"), or followed by the
    Chinese or Japanese day mark ("25日", "5号"): its twin must stay a day every month has (2 to 28),
    or "86 January" reads as no date at all."""
    literal = text[start:end]
    if not (literal.isdigit() and len(literal) <= 2 and 1 <= int(literal) <= 31):  # "March 2023": a year
        return False
    if text[end : end + 1] in ("日", "号"):
        return True
    return bool(_MONTH_AFTER.match(text, end) or _MONTH_BEFORE.search(text[max(0, start - 16) : start]))


def is_month(text: str, start: int, end: int) -> bool:
    """A month written as a number, as Chinese and Japanese do ("12月" is December)."""
    literal = text[start:end]
    return text[end : end + 1] == "月" and literal.isdigit() and 1 <= int(literal) <= 12


_HOUR_AFTER = re.compile(r"[点時时][0-9]{1,2}分")
_HOUR_BEFORE = re.compile(r"[0-9]{1,2}[点時时]$")


def is_clock(text: str, start: int, end: int) -> bool:
    """An hour or minute of a Chinese or Japanese clock time ("3点30分", "3時30分"), left alone as
    "6:30" is: "47点86分" reads as no time at all."""
    if _HOUR_AFTER.match(text, end):
        return True
    return text[end : end + 1] == "分" and bool(_HOUR_BEFORE.search(text[max(0, start - 3) : start]))


Draw = Callable[[NumberShape, set[Decimal], random.Random], Decimal | None]  # a replacement, or None


def _calendar_draw(last: int) -> Draw:
    """A draw of another number from 2 to ``last`` with as many digits as the original: 2-9 (1 is
    never changed, so a twin could meet a 1 it already has), or 10 to ``last``."""

    def draw(shape: NumberShape, exclude: set[Decimal], rng: random.Random) -> Decimal | None:
        values = range(2, 10) if shape.integer_digits == 1 else range(10, last + 1)
        free = [Decimal(value) for value in values if Decimal(value) not in exclude]
        return rng.choice(free) if free else None

    return draw


_draw_month = _calendar_draw(12)  # another month
_draw_day = _calendar_draw(28)  # a day every month has


def is_python_source(text: str) -> bool:
    """Multi-line text that parses as Python: its twin must parse too."""
    if "\n" not in text.strip():
        return False
    try:
        # prose that nearly parses ("1st", "3rd" over lines) warns on stderr: not the user's concern
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)
            ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True


@dataclass(frozen=True)
class _Number:
    """A number a twin changes: where it stands, its canonical value and its shape."""

    start: int
    end: int
    value: str  # normalised
    shape: NumberShape


@dataclass(frozen=True)
class _Changeable:
    """What every twin of one question starts from, found once for all of them."""

    numbers: tuple[_Number, ...]
    originals: frozenset[Decimal]
    # each value's replacement: its shape, and its draw where it is not the pool's (a month, a day)
    draws: dict[str, tuple[NumberShape, Draw | None]]


def _changeable(text: str) -> _Changeable | None:
    """The numbers of ``text`` a twin may change (None when none may be), each with how its
    replacement is drawn."""
    text = ascii_digits(text)
    numbers = tuple(
        _Number(m.start(), m.end(), normalise(m.group(0)), NumberShape.of(m.group(0)))
        for m in NUMBER.finditer(text)
        if is_changeable(m.group(0))
        and not is_version(text, m.start())
        and not is_clock(text, m.start(), m.end())
    )
    if not numbers:
        return None
    # One number may be written in several shapes (16 and 16.0): draw its replacement in the shape
    # with the fewest decimals, so that it can be written exactly in each of them (16.0 -> 24.5
    # would otherwise turn 16 into 24, and the twin would no longer be coherent).
    shapes: dict[str, NumberShape] = {}
    for number in numbers:
        if number.value not in shapes or number.shape.decimals < shapes[number.value].decimals:
            shapes[number.value] = number.shape
    days = {n.value for n in numbers if is_day_of_month(text, n.start, n.end)}
    months = {n.value for n in numbers if is_month(text, n.start, n.end)}
    draws: dict[str, tuple[NumberShape, Draw | None]] = {}
    for value, shape in shapes.items():
        draw: Draw | None = None  # the benchmark's own numbers (the pool's draw)
        if value in months and not shape.decimals:
            draw = _draw_month
        elif value in days and not shape.decimals:
            draw = _draw_day
        draws[value] = (shape, draw)
    originals = frozenset(Decimal(text[n.start : n.end].replace(",", "")) for n in numbers)
    return _Changeable(numbers, originals, draws)


def make_twin(
    text: str, pool: NumberPool, rng: random.Random, changeable: _Changeable | None = None
) -> str | None:
    """One twin of ``text``, or None when it has no number we may change; a number written in
    full-width digits gets its replacement in them. ``changeable``: its numbers, found already."""
    found = changeable or _changeable(text)
    if found is None:
        return None
    mapping: dict[str, Decimal] = {}
    used = set(found.originals)  # never map onto a number the question has, or onto another replacement
    for number in found.numbers:
        value = number.value
        if value not in mapping:
            shape, special = found.draws[value]
            draw: Draw = special or pool.draw
            replacement = draw(shape, used, rng)
            if replacement is None:  # no free number of this shape: reuse the question's own, still injective
                replacement = draw(shape, {Decimal(value), *mapping.values()}, rng)
            if replacement is None:  # not even that (a question using all of 2 to 9): allow repeats
                replacement = draw(shape, {Decimal(value)}, rng)
            if replacement is None:
                return None
            mapping[value] = replacement
            used.add(replacement)
    pieces: list[str] = []
    end = 0
    for number in found.numbers:
        pieces.append(text[end : number.start])
        literal = number.shape.format(mapping[number.value])
        pieces.append(written_as(literal, text[number.start : number.end]))
        end = number.end
    pieces.append(text[end:])
    return "".join(pieces)


def make_twins(text: str, pool: NumberPool, seed: int, count: int = 1) -> list[str]:
    """Up to ``count`` distinct twins of ``text``; fewer (maybe none) when it can't have them.

    Seeded from ``seed`` and the text itself, so the same question always gets the same twins.
    """
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    rng = random.Random(f"{seed}|{digest}")
    changeable = _changeable(text)
    if changeable is None:
        return []
    source = is_python_source(text)
    twins: list[str] = []
    for _ in range(count * MAX_ATTEMPTS):
        twin = make_twin(text, pool, rng, changeable)
        if twin is None:
            return []
        if twin == text or twin in twins:
            continue
        if source and not is_python_source(twin):
            continue
        twins.append(twin)
        if len(twins) == count:
            break
    return twins

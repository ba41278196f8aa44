"""Finding numbers in benchmark text, and comparing them.

A number here is an unsigned decimal written with digits: ``16``, ``3.75``, ``12,500``. Digits that
are part of something else are not numbers we may change: identifiers (``x1``, ``list2``), version
strings and dotted chains (``3.11.7``) and a version named without a dot (``Python 3``: ``is_version``,
which needs the text before it), hex or exponent literals (``0x1F``, ``1e5``), digit groups
with underscores (``1_000``), ordinals (``3rd``) and numbers with leading zeros (``007``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from .split import UNSPACED

# Leading digits with comma groups (1,000) or plain digits, then an optional decimal part.
# The look-arounds keep identifiers, dotted chains and literals like 0x1F, 1e5 or 1_000 out.
# A character of a script without spaces (Chinese, Japanese, Thai) is a word of its own, and Korean
# writes counters onto numbers, so a number beside either ("有37个", "37개") stands alone; letters of
# other scripts glue ("x1", "3rd"), and so do digits of other scripts ("๓7").
_GLUED = rf"[^\W{UNSPACED}\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f]|\d"
# ASCII digits, and the full-width ones of East Asian text read as them (see ascii_digits); digits of
# other scripts (Arabic-Indic, Thai) are not numbers we change.
NUMBER = re.compile(
    rf"(?<!{_GLUED})(?<!\.)(?<!\d:)"  # not glued to a word, an identifier, a preceding dot, or a clock "6:"
    r"(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)"
    r"(?:\.[0-9]+)?"
    rf"(?!{_GLUED}|\.\d|,\d{{3}}(?!\d)|:\d)"  # not followed by letters, dotted digits, a group, or ":30"
)


MAX_DIGITS = 100

FULLWIDTH = "０１２３４５６７８９．"  # the digits and the decimal point of East Asian text
_TO_ASCII = str.maketrans(FULLWIDTH, "0123456789.")
_TO_FULLWIDTH = str.maketrans("0123456789.", FULLWIDTH)


def ascii_digits(text: str) -> str:
    """``text`` with full-width digits and points (``３．５``, common in Chinese and Japanese text)
    written as ASCII ones: one character for one, so a number found here stands at the same place in
    ``text``."""
    return text.translate(_TO_ASCII)


def written_as(literal: str, original: str) -> str:
    """``literal`` (ASCII) in the digits ``original`` was written in."""
    return literal.translate(_TO_FULLWIDTH) if any(c in FULLWIDTH for c in original) else literal


@dataclass(frozen=True)
class NumberShape:
    """What a replacement must keep so the twin reads like the original."""

    integer_digits: int  # 0 for a number below one (0.25), which stays below one
    decimals: int
    grouped: bool  # written with thousands separators
    year_like: bool  # a plain four-digit integer between 1900 and 2099
    trailing_zeros: int = 0  # round numbers stay round: 80,000 -> 50,000, $4.50 -> $2.50

    @classmethod
    def of(cls, literal: str) -> NumberShape:
        integer, _, fraction = literal.partition(".")
        digits = integer.replace(",", "")
        grouped = "," in integer
        year_like = not fraction and not grouped and len(digits) == 4 and 1900 <= int(digits) <= 2099
        significant = fraction if fraction else digits
        zeros = len(significant) - len(significant.rstrip("0"))
        zeros = min(zeros, len(significant) - 1) if not fraction else zeros
        return cls(
            0 if digits == "0" else len(digits), len(fraction), grouped, year_like, 0 if year_like else zeros
        )

    def format(self, value: Decimal) -> str:
        """``value`` written in this shape (decimals and thousands separators)."""
        text = f"{value:.{self.decimals}f}" if self.decimals else str(int(value))
        if self.grouped:
            integer, _, fraction = text.partition(".")
            integer = f"{int(integer):,}"
            text = integer + ("." + fraction if fraction else "")
        return text


_VERSION_BEFORE = re.compile(r"\b(?:Python|version|Windows|Java|HTTP|IPv)\s?$", re.IGNORECASE)


def is_version(text: str, start: int) -> bool:
    """Does the number at ``start`` name a version without a dot ("Python 3", "version 2")? Left
    alone, as dotted versions are ("In Python 2" asks another question)."""
    return bool(_VERSION_BEFORE.search(text[max(0, start - 10) : start]))


def is_changeable(literal: str) -> bool:
    """Numbers we leave alone even when they are numbers: leading zeros, and 0 and 1.

    ``007`` is not valid Python; ``0`` and ``1`` carry grammar ("1 apple") and code meaning
    (indices, identities), so changing them makes twins read wrong for reasons unrelated to recall.
    """
    digits = literal.partition(".")[0].replace(",", "")
    if len(digits) > 1 and digits.startswith("0"):
        return False
    if len(digits) > MAX_DIGITS:  # an identifier or data, not a quantity (and int() refuses 4,300 digits)
        return False
    return normalise(literal) not in {"0", "1"}


def normalise(literal: str) -> str:
    """A canonical form for comparing numbers: ``16.0`` = ``16``, ``1,000`` = ``1000``."""
    try:
        value = Decimal(literal.replace(",", ""))
    except InvalidOperation:
        return literal
    if value == value.to_integral_value():
        integral = value.to_integral_value()
        # int() refuses over 4,300 digits (Python's guard against slow conversions); text compares the same
        return str(int(integral)) if integral.adjusted() < 4000 else format(integral, "f")
    return format(value.normalize(), "f")


def numbers_in(text: str) -> list[str]:
    """The number literals of ``text`` in order, as written, full-width digits as ASCII ones."""
    return [match.group(0) for match in NUMBER.finditer(ascii_digits(text))]


def new_numbers(prefix: str, suffix: str) -> list[str]:
    """Normalised numbers of ``suffix`` that ``prefix`` does not already give away, in order."""
    seen = {normalise(n) for n in numbers_in(prefix)}
    return [value for value in (normalise(n) for n in numbers_in(suffix)) if value not in seen]


def significant_digits(value: str) -> int:
    """Digits that carry information: ``20`` has one, ``150`` two, ``0.25`` two, ``3.25`` three."""
    digits = value.replace(",", "").replace(".", "").lstrip("0").rstrip("0")
    return len(digits)


def hard_new_numbers(prefix: str, suffix: str) -> list[str]:
    """New numbers of the suffix a model could not write by habit: two significant digits or more.

    A model without memory writes small and round numbers (``1, 2, 3``, ``20``) all the time; an
    original question uses them more than its twin, whose numbers come from the benchmark's pool,
    so counting them measures how natural the original is, not whether it was memorised.
    """
    return [n for n in new_numbers(prefix, suffix) if significant_digits(n) >= 2]

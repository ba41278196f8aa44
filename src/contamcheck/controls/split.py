"""Cutting a question in two: the first half is a prompt, the second half is what recall means.

A word is what whitespace delimits, except in scripts written without spaces between words (Chinese,
Japanese, Thai, Lao, Khmer, Burmese), where each character counts as one: whitespace alone would make
a whole question one word there, too short to split.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

UNSPACED = (  # character ranges of scripts written without spaces between words
    "\u0e00-\u0eff"  # Thai, Lao
    "\u1000-\u109f"  # Myanmar
    "\u1780-\u17ff"  # Khmer
    "\u3040-\u30ff\u31f0-\u31ff"  # Hiragana, Katakana
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"  # CJK ideographs
)
WORD = re.compile(rf"[{UNSPACED}]|[^\s{UNSPACED}]+")
MIN_WORDS = 8  # shorter questions have too little of either half to test
MAX_SUFFIX_WORDS = 40  # recall is judged on at most this much of the second half


@dataclass(frozen=True)
class Split:
    prefix: str
    suffix: str


def word_spans(text: str) -> list[tuple[int, int]]:
    """Where each word starts and ends. A combining mark (a Thai vowel sign, a dakuten) stays with
    the character before it, so no cut falls between them."""
    spans: list[tuple[int, int]] = []
    for match in WORD.finditer(text):
        start, end = match.span()
        if spans and spans[-1][1] == start and unicodedata.category(text[start]).startswith("M"):
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((start, end))
    return spans


def word_count(text: str) -> int:
    return len(word_spans(text))


def split_question(text: str, max_suffix_words: int = MAX_SUFFIX_WORDS) -> Split | None:
    """Split at the middle word; None when the question is too short.

    The prefix keeps the original text (newlines and indentation, so code stays code) up to the
    middle word, minus trailing whitespace: a prompt that ends in a space tokenises unnaturally.
    """
    words = word_spans(text)
    if len(words) < MIN_WORDS:
        return None
    middle = len(words) // 2
    start = words[middle][0]
    end = words[min(len(words), middle + max_suffix_words) - 1][1]
    return Split(prefix=text[:start].rstrip(), suffix=text[start:end])

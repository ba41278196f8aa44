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
    "\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f"  # Hiragana, Katakana (and its halfwidth forms)
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U000323af"  # CJK ideographs
)
WORD = re.compile(rf"[{UNSPACED}]|[^\s{UNSPACED}]+")
# Letters that belong to the character before them (besides combining marks): Thai and Lao vowels
# written after their consonant, halfwidth (han)dakuten; to the one after them: Thai and Lao vowels
# written before it; to both: Khmer's coeng and Myanmar's virama, which stack two consonants.
_FOLLOWS = frozenset("\u0e30\u0e32\u0e33\u0e45\u0eb0\u0eb2\u0eb3\uff9e\uff9f")
_LEADS = frozenset("\u0e40\u0e41\u0e42\u0e43\u0e44\u0ec0\u0ec1\u0ec2\u0ec3\u0ec4")
_JOINS = frozenset("\u17d2\u1039")
MIN_WORDS = 8  # shorter questions have too little of either half to test
MAX_SUFFIX_WORDS = 40  # recall is judged on at most this much of the second half


@dataclass(frozen=True)
class Split:
    prefix: str
    suffix: str


def word_spans(text: str) -> list[tuple[int, int]]:
    """Where each word starts and ends. In a script without spaces a character is a word, but one
    with its vowel signs and marks (no cut falls inside a Thai or Khmer syllable), and a number
    written in its digits (๒๕๖๗) is one word."""
    spans: list[tuple[int, int]] = []
    for match in WORD.finditer(text):
        start, end = match.span()
        if spans and spans[-1][1] == start and _belong_together(text[start - 1], text[start]):
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((start, end))
    return spans


def _belong_together(before: str, after: str) -> bool:
    if after in _FOLLOWS or before in _LEADS or before in _JOINS or after in _JOINS:
        return True
    kind = unicodedata.category(after)
    return kind.startswith("M") or (kind == "Nd" and unicodedata.category(before) == "Nd")


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

"""Cutting a question in two: the first half is a prompt, the second half is what recall means."""

from __future__ import annotations

import re
from dataclasses import dataclass

WORD = re.compile(r"\S+")
MIN_WORDS = 8  # shorter questions have too little of either half to test
MAX_SUFFIX_WORDS = 40  # recall is judged on at most this much of the second half


@dataclass(frozen=True)
class Split:
    prefix: str
    suffix: str


def split_question(text: str, max_suffix_words: int = MAX_SUFFIX_WORDS) -> Split | None:
    """Split at the middle word; None when the question is too short.

    The prefix keeps the original text (newlines and indentation, so code stays code) up to the
    middle word, minus trailing whitespace: a prompt that ends in a space tokenises unnaturally.
    """
    words = list(WORD.finditer(text))
    if len(words) < MIN_WORDS:
        return None
    middle = len(words) // 2
    last = words[min(len(words), middle + max_suffix_words) - 1]
    return Split(
        prefix=text[: words[middle].start()].rstrip(),
        suffix=text[words[middle].start() : last.end()],
    )

"""Completion: does the model write the numbers of a question's second half?

From contamcheck 0.1.0 (seed 000). The model gets the first half of the question (split at the
middle word) and continues it greedily. The score is the share of the second half's *new* numbers
(those the first half does not give away) that the continuation writes. Whole-sentence overlap
does not work with twins: a model that memorised the original writes nearly the same words for its
twin. The numbers are what differ, and without memory they can only be guessed.

Only numbers with two significant digits or more count (``37``, ``150``, ``1.25``; not ``3`` or
``20``): a model without memory writes small and round numbers by habit, and originals use them
more than their twins do (on HumanEval, SmolLM2 writing ``[1, 2, 3, 4, 5]`` for both a prompt and
its twin flagged 20% of prompts; counting only such numbers, 8%, p = 0.34).
"""

from __future__ import annotations

import math

from ..controls import hard_new_numbers, normalise, numbers_in, split_question
from ..controls.split import word_count
from ..evidence import Evidence, GenerateRequest, Request
from .base import PerTextTest

MAX_NEW_TOKENS = 128


def generation_budget(suffix: str) -> int:
    """New tokens to allow: about two per word of the second half, plus room, capped."""
    return min(MAX_NEW_TOKENS, 2 * word_count(suffix) + 16)


def number_recall(prefix: str, suffix: str, generated: str) -> float:
    """Share of the suffix's hard new numbers that ``generated`` contains; NaN if there are none."""
    wanted = hard_new_numbers(prefix, suffix)
    if not wanted:
        return math.nan
    written = {normalise(n) for n in numbers_in(generated)}
    return sum(number in written for number in wanted) / len(wanted)


class Completion(PerTextTest):
    name = "completion"
    title = "Model writes the exact numbers from the second half of the question"
    measures = (
        "Share of the second half's new numbers (not given in the first half, with two significant "
        "digits or more) that the model writes when it continues the first half greedily."
    )
    null_hypothesis = (
        "The model never saw the questions, so it is as likely to write a twin's numbers as the "
        "original's: paired differences are symmetric around zero."
    )
    caveat = (
        "Needs numbers in the second half and heavier memorisation than likelihood tests; numbers "
        "that follow from arithmetic on the first half can be written by a model that reasons well."
    )
    citation = "contamcheck 0.1.0 (number-twin completion test)"

    def requests(self, text: str) -> list[Request]:
        split = split_question(text)
        if split is None or not hard_new_numbers(split.prefix, split.suffix):
            return []
        return [GenerateRequest(split.prefix, generation_budget(split.suffix))]

    def score(self, text: str, evidence: Evidence) -> float:
        generated = self.detail(text, evidence)
        split = split_question(text)
        if generated is None or split is None:
            return math.nan
        return number_recall(split.prefix, split.suffix, generated)

    def detail(self, text: str, evidence: Evidence) -> str | None:
        split = split_question(text)
        if split is None or not hard_new_numbers(split.prefix, split.suffix):
            return None
        return evidence.generation(split.prefix, generation_budget(split.suffix))

    def unscored_reason(self) -> str:
        return "the second half has no new number of two significant digits or more"

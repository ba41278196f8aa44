"""Choosing a reference model: one released before the benchmark, of matching size.

The reference's score is subtracted from the tested model's, per question, so what remains is
familiarity specific to the tested model. The GPT-2 family (2019) predates GSM8K, HumanEval and
MBPP (2021). Size matters: a bigger model notices more whether numbers fit together, so a clean
1.4B model looked contaminated against the 124M GPT-2 but not against the 1.5B one (seed 000).
"""

from __future__ import annotations

import math

GPT2_FAMILY: tuple[tuple[int, str], ...] = (
    (124_439_808, "openai-community/gpt2"),
    (354_823_168, "openai-community/gpt2-medium"),
    (774_030_080, "openai-community/gpt2-large"),
    (1_557_611_200, "openai-community/gpt2-xl"),
)


def reference_for_size(num_parameters: int | None) -> str:
    """The GPT-2 closest in size to the tested model (on a log scale); the smallest if unknown."""
    return references_by_size(num_parameters)[0]


def references_by_size(num_parameters: int | None) -> list[str]:
    """The GPT-2 models, closest in size to the tested model first (smallest first if unknown)."""
    if not num_parameters or num_parameters <= 0:
        return [name for _, name in GPT2_FAMILY]
    return [
        name for _, name in sorted(GPT2_FAMILY, key=lambda entry: abs(math.log(entry[0] / num_parameters)))
    ]

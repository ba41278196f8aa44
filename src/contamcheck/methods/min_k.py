"""Min-K% Prob (Shi et al. 2023, "Detecting Pretraining Data from Large Language Models").

The mean log-probability of the k% least likely tokens. Unseen text always holds a few tokens that
surprise the model (a name, an odd number); memorised text does not, so even its rarest tokens are
likely. Higher = more familiar.
"""

from __future__ import annotations

import math

import numpy as np

from ..evidence import Evidence, Request, ScoreRequest
from .base import PerTextTest


def min_k_mean(values: np.ndarray, k: float) -> float:
    """Mean of the lowest ``k`` fraction of ``values`` (at least one); NaN when empty."""
    if len(values) == 0:
        return math.nan
    count = max(1, int(len(values) * k))
    return float(np.partition(values, count - 1)[:count].mean())


class MinK(PerTextTest):
    name = "min-k"
    takes_k = True
    title = "Even the least likely words of the question are likely to the model"
    measures = "Mean log-probability of the k% least likely tokens of each question (Min-K% Prob)."
    null_hypothesis = (
        "The model never saw the questions, so it finds a question no more likely than its control "
        "beyond what a clean model (the reference) also does."
    )
    caveat = (
        "Likelihood depends on how natural the text is, not only on memory: each question is judged "
        "against the bulk of the benchmark's own scores (or a reference model or control file), so a "
        "shift of the whole benchmark reads as familiarity and only questions lifted above the rest "
        "are flagged. A benchmark seen entirely and lightly shifts as one bulk too."
    )
    citation = "Shi et al. 2023, Detecting Pretraining Data from Large Language Models (Min-K% Prob)"
    likelihood = True
    scores = True

    def requests(self, text: str) -> list[Request]:
        return [ScoreRequest(text)]

    def score(self, text: str, evidence: Evidence) -> float:
        return min_k_mean(evidence.stats(text).logprobs, self.settings.k)

    def unscored_reason(self) -> str:
        return "the text has no scored token"

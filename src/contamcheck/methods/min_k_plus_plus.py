"""Min-K%++ (Zhang et al. 2024, "Min-K%++: Improved Baseline for Detecting Pre-Training Data
from Large Language Models").

Each token's log-probability is standardised by the model's own next-token distribution at that
position: z_t = (log p(x_t) − μ_t) / σ_t, with μ_t and σ_t the mean and standard deviation of
log p over the whole vocabulary. Training pushes a seen token towards a local maximum of the
likelihood, so its z is high; the score is the mean of the lowest k% of z (higher = more familiar).
μ_t and σ_t come from the same forward pass as the realised log-probs.
"""

from __future__ import annotations

import math

import numpy as np

from ..evidence import Evidence, Request, ScoreRequest
from .base import PerTextTest
from .min_k import min_k_mean

EPSILON = 1e-6  # a one-hot next-token distribution has σ = 0


def signed_log(value: float) -> float:
    """sign(x) log(1 + |x|): monotone, so rankings are unchanged, but bell-shaped across questions.

    A fine-tuned model's next-token distributions are sharp, σ collapses and the lowest z-scores
    run to −100 and beyond; on the raw scale no bulk is bell-shaped (measured: docs/METHODS.md).
    """
    return math.copysign(math.log1p(abs(value)), value)


def standardised_logprobs(logprobs: np.ndarray, mean: np.ndarray, std: np.ndarray) -> np.ndarray:
    return (logprobs - mean) / np.maximum(std, EPSILON)


class MinKPlusPlus(PerTextTest):
    name = "min-k++"
    takes_k = True
    title = "The question's rarest words are unusually likely for the model's own predictions"
    measures = (
        "Mean of the k% lowest token scores z = (log p(token) − μ) / σ, with μ and σ the mean and "
        "spread of log p over the whole next-token distribution (Min-K%++), on a signed-log scale."
    )
    null_hypothesis = (
        "The model never saw the questions: a question's standardised likelihood is no higher than "
        "its control's beyond what a clean model (the reference) shows."
    )
    caveat = (
        "A likelihood test, judged against the bulk of the benchmark's own scores (or a reference "
        "model or control file): a shift of the whole benchmark reads as familiarity, not "
        "memorisation. Servers that return only the top few log-probs cannot give μ and σ; the "
        "test is then skipped."
    )
    citation = "Zhang et al. 2024, Min-K%++ (arXiv:2404.02936)"
    likelihood = True
    scores = True
    distribution = True

    def requests(self, text: str) -> list[Request]:
        return [ScoreRequest(text)]

    def score(self, text: str, evidence: Evidence) -> float:
        stats = evidence.stats(text)
        if stats.mean is None or stats.std is None:
            return math.nan
        return signed_log(
            min_k_mean(standardised_logprobs(stats.logprobs, stats.mean, stats.std), self.settings.k)
        )

    def unscored_reason(self) -> str:
        return (
            "no statistics of the whole next-token distribution (a server, as the model or as the "
            "reference, gives only the top log-probs), or no scored token"
        )

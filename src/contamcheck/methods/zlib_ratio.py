"""zlib ratio (Carlini et al. 2021, "Extracting Training Data from Large Language Models").

The text's log-probability under the model divided by its zlib-compressed length in bytes: the
compressor knows nothing of the model, so text that is merely repetitive or formulaic is discounted,
while text the model predicts better than its redundancy explains stands out. Higher = more
familiar. The log-probability is summed over tokens, so it does not depend on the tokenizer.
"""

from __future__ import annotations

import math
import zlib

from ..evidence import Evidence, Request, ScoreRequest
from .base import PerTextTest


def zlib_bytes(text: str) -> int:
    return len(zlib.compress(text.encode("utf-8", "surrogatepass")))


class ZlibRatio(PerTextTest):
    name = "zlib"
    title = "The model predicts the question better than its redundancy explains"
    measures = "Sum of token log-probabilities divided by the zlib-compressed length of the text (bytes)."
    null_hypothesis = (
        "The model never saw the questions: relative to what compression explains, a question is no "
        "more likely than its control beyond what a clean model (the reference) shows."
    )
    caveat = (
        "A likelihood test, judged against the bulk of the benchmark's own scores (or a reference "
        "model or control file): a shift of the whole benchmark reads as familiarity, not "
        "memorisation. Weaker than Min-K% on short questions, where compression says little."
    )
    citation = "Carlini et al. 2021, Extracting Training Data from Large Language Models (zlib ratio)"
    likelihood = True
    scores = True

    def requests(self, text: str) -> list[Request]:
        return [ScoreRequest(text)]

    def score(self, text: str, evidence: Evidence) -> float:
        stats = evidence.stats(text)
        if stats.num_tokens == 0:
            return math.nan
        return float(stats.logprobs.sum()) / zlib_bytes(text)

    def unscored_reason(self) -> str:
        return "the text has no scored token"

"""What a test is: evidence it declares, and a pure function from evidence to scores.

Tests never load models, print or touch files. Three kinds share one result model (see
``report.model``):

* **paired** (:class:`PerTextTest`): one score per text; a question's statistic is its score minus
  its control's (its number twin, or the control-file distribution);
* **self-paired**: two scores per question under two conditions (guided vs general instruction);
* **aggregate**: one statistic per shard of the benchmark, no per-question flags.

A higher score always means "more familiar to the model".
"""

from __future__ import annotations

import zlib
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar, Literal

from ..config import DEFAULT_ALPHA, DEFAULT_K, DEFAULT_ORDER_PERMUTATIONS, DEFAULT_ORDER_SHARDS
from ..evidence import Evidence, Request

TestKind = Literal["paired", "self-paired", "aggregate"]


@dataclass(frozen=True)
class MethodSettings:
    """Settings a test may read; they come from the audit's configuration and the benchmark. The
    defaults are an audit's (``config``): a script or test built on ``MethodSettings()`` computes
    what ``contamcheck`` would (the canonical-order null runs of 2026-12-07 used 10 reorderings a
    shard, this class's default then, where an audit's is 5)."""

    k: float = DEFAULT_K  # Min-K fraction
    seed: int = 0
    alpha: float = DEFAULT_ALPHA
    dataset: str = "benchmark"  # how guided instructions name the benchmark
    split: str = "test"
    benchmark_kind: str = "mixed"
    order_shards: int = DEFAULT_ORDER_SHARDS  # canonical-order: shards, reorderings per shard, text per shard
    order_permutations: int = DEFAULT_ORDER_PERMUTATIONS
    shard_chars: int = 2000


def analysis_seed(seed: int, name: str) -> int:
    """The seed of a test's analysis (its permutations, its random draws) in an audit of ``seed``:
    one for each test, so that two tests' draws don't coincide, and a saved report's settings give
    it again (``report.checks`` recomputes canonical-order's p-value with it)."""
    return seed + zlib.crc32(name.encode())


class Test(ABC):
    name: ClassVar[str]
    kind: ClassVar[TestKind]
    title: ClassVar[str]  # what a flag means, in one line a person reads in the terminal
    measures: ClassVar[str]  # what is computed per question
    null_hypothesis: ClassVar[str]
    caveat: ClassVar[str]
    citation: ClassVar[str]
    # A likelihood test needs only a forward pass (it runs under --quick). Twins are a biased null
    # for it (originals read more naturally than twins), so it is judged against the bulk of the
    # benchmark's own scores, a reference model or a control file: see ``stats.verdict.is_calibrated``.
    likelihood: ClassVar[bool] = False
    # What it reads of a model: a text's own token log-probs (a server may give none), and of them
    # the whole next-token distribution's statistics (a server gives only the top log-probs).
    scores: ClassVar[bool] = False
    distribution: ClassVar[bool] = False
    # Whether its score takes the k% least likely tokens (-k): a few words' worth at a small k
    takes_k: ClassVar[bool] = False
    # Whether the test's null is known to hold for a clean model; an uncalibrated test is shown but
    # does not move the verdict (``stats.verdict``).
    calibrated: ClassVar[bool] = True

    @classmethod
    def calibrated_against(cls, control_file: bool) -> bool:
        """Whether the test's own null holds with these controls (number twins, or a control file)."""
        return cls.calibrated

    def __init__(self, settings: MethodSettings | None = None) -> None:
        self.settings = settings or MethodSettings()


class PerTextTest(Test):
    """A paired test: a score per text, compared between a question and its control."""

    kind: ClassVar[TestKind] = "paired"

    @abstractmethod
    def requests(self, text: str) -> list[Request]:
        """The evidence needed to score ``text`` (none when it can't be scored)."""

    @abstractmethod
    def score(self, text: str, evidence: Evidence) -> float:
        """Higher = more familiar. NaN when the text can't be scored by this test."""

    def detail(self, text: str, evidence: Evidence) -> str | None:
        """What the model wrote for ``text``, for tests that generate."""
        return None

    def unscored_reason(self) -> str:
        return "could not be scored"

"""The report: one typed, versioned model that the terminal, JSON, CSV, HTML and web UI render.

Everything about *this run* (times, host, memory, cache use) lives in ``run``; every other field of
a resumed or warm run is identical to an uninterrupted cold run's. Floats that could not be
computed are None (JSON null), never NaN.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..stats.spread import carries

SCHEMA_VERSION = "1.6"  # 1.1: a bulk test's tail (centre, scale) and each question's p_memorised;
# 1.2: a bulk test's count_withheld (a null holding under 40% of the questions); 1.3: the control's
# without_twin and the settings' twinless (--twinless); 1.4: a reference "passed-over" (it looks
# contaminated itself); 1.5: a bulk test's withheld_because ("twins": a tail that stands out with its
# twins) and tail_gain_p_value; 1.6: each canonical-order shard's permuted_logprobs (and its numbers
# null where not finite)


def schema_minor(version: str) -> int:
    """The minor part of a schema version ("1.2" -> 2; 0 where there is none or it is not a number)."""
    parts = version.split(".")
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0


Status = Literal["fail", "warn", "pass", "skipped"]
VerdictCode = Literal["likely", "evidence", "inconclusive", "clean"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


# A rate, a probability or a share: a saved report holding 5.0 or -1 here was edited.
Share = Annotated[float, Field(ge=0, le=1)]
Count = Annotated[int, Field(ge=0)]


class ModelInfo(_Model):
    spec: str
    name: str
    backend: str
    identity: str = Field(description="name and revision, or a hash of the weight files")
    num_parameters: int | None = None
    settings: dict[str, str] = Field(default_factory=dict)


# How an automatic reference that could not be loaded is said in ``ReferenceInfo.reason``; the
# terminal header reads it as "unavailable offline".
NOT_LOADED = "could not be loaded"


class ReferenceInfo(_Model):
    status: Literal["used", "none", "unavailable", "passed-over"]  # passed-over: it looks contaminated itself
    requested: str = Field(description="what --reference said: auto, none, or a name or path")
    model: ModelInfo | None = None
    reason: str = ""


class BenchmarkInfo(_Model):
    spec: str
    name: str
    field: str | None
    source: str
    n_questions: int
    content_hash: str
    ordered: bool


class SampleInfo(_Model):
    requested: Count
    tested: Count
    testable: Count
    seed: int
    set_aside: dict[str, int] = Field(default_factory=dict, description="untestable questions, by reason")


class ControlInfo(_Model):
    kind: Literal["twins", "file"]
    description: str
    spec: str | None = None
    content_hash: str | None = None
    n_controls: int = 0
    twins_per_question: int = 0
    without_twin: Count = Field(
        default=0,
        description="questions tested with no twin (--twinless): judged by the bulk in the likelihood "
        "tests, not scored by the paired ones",
    )


class ShardResult(_Model):
    """One shard of an aggregate test (canonical-order)."""

    index: int
    first_position: int
    n_items: int
    # null where not finite: an ordering the model scored -inf (such a shard is left out of the test)
    canonical_logprob: float | None
    permuted_mean_logprob: float | None
    permuted_std_logprob: float | None
    statistic: float | None = Field(description="canonical minus mean permuted log-probability")
    truncated: bool = False
    permuted_logprobs: list[float | None] = Field(
        default_factory=list,
        description="each reordering's log-probability, in the order drawn (null where not finite): "
        "with canonical_logprob and the settings' seed they give the test's p-value again; empty "
        "before schema 1.6",
    )


class BulkNull(_Model):
    """The null of a bulk test: where the never-seen bulk sits, and what lies beyond it."""

    centre: float
    scale: float
    bulk_share: Share = Field(description="share of questions the bulk accounts for (1 with one component)")
    components: int
    tail_share_low: Share = Field(description="95% lower bound on the share of questions beyond the bulk")
    tail_centre: float | None = Field(default=None, description="with a tail: where the tail sits")
    tail_scale: float | None = Field(default=None, description="with a tail: the tail's SD")
    twin_preference: float | None = Field(
        default=None,
        description="median of score(original) - score(twin): familiarity with this kind of text",
    )
    twin_preference_ci: tuple[float, float] | None = None
    twins_above_threshold: int | None = None
    tail_p_value: Share | None = Field(
        default=None, description="p-value of the flag count alone (the tail beyond the bulk)"
    )
    count_withheld: bool = Field(
        default=False,
        description="no question is flagged and the tail count is not used (only the spread test, with "
        "a reference): see withheld_because",
    )
    withheld_because: Literal["minority", "twins"] | None = Field(
        default=None,
        description="why the count was withheld: minority, the fitted null holds under 40% of the "
        "questions, too few to be the null; twins, the tail beyond the bulk stands out with its twins "
        "(the spread test against them finds nothing): familiarity with part of the benchmark's kind "
        "of text, not memorised questions. Reports before schema 1.5 leave it out (then: minority)",
    )
    spread_correlation: float | None = Field(
        default=None,
        description="with a reference: rank correlation of original + twin with original - twin "
        "(> 0 when the originals spread more than their twins)",
    )
    spread_p_value: Share | None = Field(
        default=None,
        description="with a reference: p-value of the spread test against the twins "
        "(as many swaps as settings.permutations)",
    )
    tail_gain_p_value: Share | None = Field(
        default=None,
        description="with a reference and a tail beyond chance: one-sided Wilcoxon signed-rank p that "
        "the pairs highest by the higher of question and twin (as many as the bulk flags) gain over "
        "their twins; with the spread test, what backs a tail (withheld_because)",
    )


class TestResult(_Model):
    name: str
    title: str
    kind: Literal["paired", "unpaired", "self-paired", "aggregate", "bulk"]
    calibrated: bool
    calibration: str = Field(description="what the null comes from: twins, reference model, control file")
    measures: str
    null_hypothesis: str
    caveat: str
    citation: str
    status: Status
    skip_reason: str | None = None
    n: Count = 0
    n_flagged: Count = 0
    flag_rate: Share | None = None
    flag_rate_ci: tuple[Share, Share] | None = None
    expected_rate: Share = 0.05
    threshold: float | None = None
    p_value: Share | None = None
    p_adjusted: Share | None = None
    min_attainable_p: Share | None = None
    permutations: int | None = Field(
        default=None,
        description="random draws behind the p-value: sign flips or label permutations for a "
        "paired or unpaired test; for a bulk test the simulated never-seen samples of its tail "
        "count, or the spread test's swaps where that alone gives the p-value; for canonical-order "
        "the randomization test's draws (its reorderings per shard are in settings; none before "
        "2026-12-07, when a t-test over shards gave its p-value)",
    )
    mean_difference: float | None = None
    median_difference: float | None = None
    auroc_vs_controls: Share | None = Field(
        default=None,
        description="unpaired: share of (benchmark, control) pairs where the benchmark question scores "
        "higher (0.5 when exchangeable)",
    )
    n_unscored: Count = 0
    unscored_reason: str | None = None
    note: str | None = Field(default=None, description="what this result can and cannot show, in words")
    statistic_name: str | None = None  # aggregate tests: e.g. "one-sided t"
    statistic: float | None = None
    shards: list[ShardResult] = Field(default_factory=list)
    null: BulkNull | None = None

    @model_validator(mode="after")
    def _counts_agree(self) -> TestResult:
        if self.n_flagged > self.n or (
            self.flag_rate is not None and self.n and abs(self.flag_rate - self.n_flagged / self.n) > 1e-9
        ):
            raise ValueError(
                f"{self.name}: {self.n_flagged} of {self.n} flagged does not agree with flag_rate "
                f"{self.flag_rate}: edited after the audit"
            )
        return self

    @property
    def aggregate_evidence(self) -> bool:
        """The p-value rests on a whole-benchmark statistic, not on the flag count (for a bulk test
        with a reference: the spread test against the twins carried it, ``stats.spread.carries``)."""
        if self.kind == "aggregate":
            return True
        null = self.null
        return null is not None and carries(
            null.tail_p_value, null.spread_p_value, null.spread_correlation, null.count_withheld
        )

    @property
    def count_withheld(self) -> bool:
        """A bulk test with no flags and no tail count: its fitted null held a minority of the
        questions, or its tail stood out with its twins (``withheld_because``)."""
        return self.null is not None and self.null.count_withheld

    @property
    def shared_with_twins(self) -> bool:
        """A bulk test whose tail stood out with its twins (``stats.spread.shared_with_twins``)."""
        return self.null is not None and self.null.count_withheld and self.null.withheld_because == "twins"

    @property
    def minority_null(self) -> bool:
        """A bulk test withheld because its fitted null held a minority of the questions (reports
        before schema 1.5 give no reason: every withheld test was that)."""
        return self.count_withheld and not self.shared_with_twins


class ItemTestResult(_Model):
    score: float | None = None
    twin_score: float | None = None
    twin_scores: list[float | None] = Field(default_factory=list)
    reference_score: float | None = None
    reference_twin_score: float | None = None
    diff: float | None = None
    flagged: bool | None = None
    p_memorised: Share | None = Field(
        default=None,
        description="bulk tests where a tail was found and the tail count is beyond chance (its own "
        "p < 0.05): how likely the question is the tail's under the fitted mixture (one less its "
        "local false discovery rate); a flag needs at least 0.8 and a score above the bulk's 95th "
        "percentile",
    )
    generated: str | None = None
    twin_generated: str | None = None
    general_score: float | None = None  # guided: overlap under the general instruction
    general_generated: str | None = None


class ItemRecord(_Model):
    id: str
    position: int
    text: str
    twins: list[str] = Field(default_factory=list)
    is_control: bool = False
    tests: dict[str, ItemTestResult] = Field(default_factory=dict)


class IndexComponent(_Model):
    test: str
    base_weight: float
    weight: float = Field(description="base weight renormalised over the tests that contribute")
    strength: float = Field(description="0 (nothing beyond chance) to 1 (strongest evidence)")
    contributes: bool
    reason: str = ""


class EvidenceIndex(_Model):
    value: Share | None = Field(description="weighted strength in [0, 1]; None when nothing contributes")
    band: Literal["low", "moderate", "high", "n/a"]
    components: list[IndexComponent] = Field(default_factory=list)
    explanation: str = ""


class Verdict(_Model):
    code: VerdictCode
    label: str
    explanation: str
    fail_on: Literal["likely", "evidence"]
    exit_code: int

    @model_validator(mode="after")
    def _exit_code_follows_the_verdict(self) -> Verdict:
        # `contamcheck report` exits with it, so a gate re-reading a saved audit can't be told 0 for
        # a "likely" by an edited file
        from ..stats.verdict import VERDICT_LABELS, exit_code

        if self.label != VERDICT_LABELS[self.code]:
            raise ValueError(
                f"label {self.label!r} is not that of the verdict {self.code!r}: edited after the audit"
            )
        expected = exit_code(self.code, self.fail_on)
        if self.exit_code != expected:
            raise ValueError(
                f"exit_code {self.exit_code} does not follow from the verdict {self.code!r} with "
                f"fail_on {self.fail_on!r} (that is {expected}): edited after the audit"
            )
        return self


Positive = Annotated[int, Field(ge=1)]
Amount = Annotated[float, Field(ge=0)]  # seconds, megabytes


class Settings(_Model):
    tests: list[str]
    quick: bool
    limit: Positive
    seed: int  # negative before 2026-12-05's versions refused it: such reports still read
    alpha: Annotated[float, Field(gt=0, lt=1)]
    k: Annotated[float, Field(gt=0, le=1)]
    permutations: Count
    expected_rate: Share
    twins_per_question: Count
    twinless: bool = False  # absent from reports before schema 1.3
    batch_size: Positive
    generation_batch_size: Positive | None = None  # absent from reports before 2026-12-03: batch_size
    reference: str
    order_shards: Count
    order_permutations: Count


class EvidenceUse(_Model):
    requested: Count = 0
    from_cache: Count = 0
    computed: Count = 0
    batches_computed: Count = 0
    compute_seconds: Amount = 0.0
    tokens_scored: Count = 0
    oom_retries: Count = 0


class RunInfo(_Model):
    started_at: str
    finished_at: str
    duration_s: float  # checked in checks.py, with its own message
    host: str
    threads: Positive | None = Field(
        description="CPU threads for torch: --threads, else the cores this process may use"
    )
    peak_memory_mb: Amount | None
    returns_freed_memory: bool = Field(
        default=False, description="freed memory went back to the system at once (--low-memory)"
    )
    models_loaded: list[str] = Field(default_factory=list)
    cache: str | None = Field(default=None, description="folder of the evidence cache; None with --no-cache")
    evidence: dict[str, EvidenceUse] = Field(default_factory=dict, description="per model role")

    @model_validator(mode="after")
    def _times_are_times(self) -> RunInfo:
        # not compared with each other: the wall clock may be set back during a run (the duration
        # is measured on a monotonic clock)
        for name in ("started_at", "finished_at"):
            value = getattr(self, name)
            try:
                moment = datetime.fromisoformat(value)
            except ValueError:
                moment = None
            if moment is None or moment.tzinfo is None:
                raise ValueError(
                    f"run.{name} {value!r} is not a date and time with its time zone, as an audit "
                    "writes it (2026-12-06T19:20:00+00:00)"
                )
        return self


class Report(_Model):
    """One audit's result: what was audited, each test's result, the verdict and evidence index,
    each question's scores, caveats and how it ran. Saved as JSON (``to_json``), read back with
    ``read_report``, which reads an earlier schema's, and refuses a newer one's or an edit made
    inconsistent."""

    schema_version: str = SCHEMA_VERSION
    tool: str
    version: str
    model: ModelInfo
    reference: ReferenceInfo
    benchmark: BenchmarkInfo
    control: ControlInfo
    sample: SampleInfo
    settings: Settings
    tests: list[TestResult]
    verdict: Verdict
    index: EvidenceIndex
    items: list[ItemRecord]
    caveats: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    versions: dict[str, str] = Field(default_factory=dict)
    run: RunInfo

    @model_validator(mode="after")
    def _questions_without_a_twin_add_up(self) -> Report:
        alone = self.control.without_twin
        if alone > self.sample.tested or (alone and not self.settings.twinless):
            raise ValueError(
                f"control.without_twin is {alone} of {self.sample.tested} questions tested, with "
                f"settings.twinless {self.settings.twinless}: questions without a twin are tested only "
                "with --twinless, and never more than were tested: edited after the audit"
            )
        return self

    @model_validator(mode="after")
    def _verdict_follows_the_tests(self) -> Report:
        # what `judge` guarantees (stats/verdict.py): "likely" exactly when a calibrated test failed,
        # "clean" only when no calibrated test went beyond chance
        strongest = {t.status for t in self.tests if t.calibrated}
        code = self.verdict.code
        if (code == "likely") != ("fail" in strongest) or (code == "clean" and strongest & {"fail", "warn"}):
            statuses = ", ".join(f"{t.name} {t.status}" for t in self.tests if t.calibrated)
            raise ValueError(
                f"the verdict {code!r} does not follow from the tests' statuses "
                f"({statuses or 'none calibrated'}): edited after the audit"
            )
        return self

    @model_validator(mode="after")
    def _numbers_agree(self) -> Report:
        from .checks import contradiction  # the rules of stats.verdict and stats.index, read lazily

        said = contradiction(self)
        if said is not None:
            raise ValueError(f"{said}: edited after the audit")
        return self

    def test(self, name: str) -> TestResult:
        """The result of the test ``name`` (in any case, as ``--tests`` takes it); a ``KeyError``
        naming the tests the report has where it has no such test."""
        for result in self.tests:
            if result.name == name:
                return result
        wanted = name.strip().lower() if isinstance(name, str) else name
        for result in self.tests:
            if result.name.lower() == wanted:
                return result
        raise KeyError(
            f"no test {name!r} in this report; it has {', '.join(t.name for t in self.tests) or 'none'}"
        )

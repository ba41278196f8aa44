"""The standalone HTML report: one file, inline CSS and SVG, nothing fetched from anywhere.

Rendered with Jinja2 (autoescape on) from the report model alone, so it shows the same numbers as
the terminal, JSON and CSV. Every piece of benchmark text and model output reaches the page through
autoescaping or :func:`markupsafe.escape`; the only markup built here is the ``<mark>`` around
the numbers that differ between a question and its twin, and matplotlib's SVG (numbers and fixed
labels only).
"""

from __future__ import annotations

import difflib
import math
import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from markupsafe import Markup, escape

from ..stats.flags import few_controls
from ..stats.verdict import MINORITY_WHY, listed, twins_why
from . import plots
from .io import as_saved
from .model import BulkNull, ItemRecord, ItemTestResult, Report, TestResult

if TYPE_CHECKING:
    import jinja2

FAMILIAR_COUNT = 10
CODE_LABELS = frozenset({"spec", "identity", "content hash", "cache"})  # shown in a monospace font
STATUS_LABELS = {"fail": "fail", "warn": "warning", "pass": "pass", "skipped": "skipped"}
SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def to_html(report: Report) -> str:
    """The whole report as one standalone HTML page."""
    report = as_saved(report)
    template = _environment().get_template("report.html.j2")
    tests = [_test_view(report, result) for result in report.tests]
    familiar, any_flagged = familiar_questions(report)
    return template.render(
        report=report,
        tests=tests,
        familiar=familiar,
        any_flagged=any_flagged,
        withheld=listed([t.name for t in report.tests if t.minority_null]),
        withheld_one=sum(t.minority_null for t in report.tests) == 1,
        shared=listed([t.name for t in report.tests if t.shared_with_twins]),
        shared_one=sum(t.shared_with_twins for t in report.tests) == 1,
        control_file=report.control.kind == "file",
        # --twinless with no question that has a twin: nothing to mark between question and twin
        no_twins=report.control.kind == "twins" and report.control.without_twin >= report.sample.tested,
        index_meter=_index_meter(report),
        reproducibility=reproducibility(report),
        code_labels=CODE_LABELS,
        status_labels=STATUS_LABELS,
    )


def _environment() -> jinja2.Environment:
    import jinja2

    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("contamcheck.report", "templates"),
        autoescape=True,  # every {{ value }} is escaped; benchmark text is never trusted
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters.update(pvalue=format_p, percent=format_percent, when=format_time)
    environment.tests["code"] = looks_like_code
    return environment


# Numbers, in words a reader can take in at a glance.


def format_p(p: float | None) -> str:
    if p is None:
        return "n/a"
    if p >= 0.1:
        return f"{p:.2f}"
    if p >= 0.01:
        return f"{p:.3f}"
    if p >= 0.001:  # two significant digits: 0.0015 is not "0.002"
        return f"{p:#.2g}"
    mantissa, exponent = f"{p:.1e}".split("e")
    return f"{mantissa} × 10{str(int(exponent)).translate(SUPERSCRIPT)}"


def chance(rate: float) -> str:
    """How many of an unseen benchmark's questions a control file's threshold flags by chance: about
    5% from 19 controls on, 1 in m + 1 with fewer (stats.flags.control_rank)."""
    count = few_controls(rate)
    return f"1 in {count + 1}" if count is not None else f"about {format_percent(rate)}"


def format_percent(rate: float | None) -> str:
    if rate is None:
        return "n/a"
    if 0 < rate < 0.01:
        return f"{rate:.1%}"
    return f"{rate:.0%}"


def format_number(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return "–"
    if value != 0 and abs(value) < 0.001:
        text = f"{value:.2e}"
    elif abs(value) >= 1000:
        text = f"{value:,.0f}"
    else:
        text = f"{value:.3f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text.replace("-", "−")  # a typographic minus


def format_time(stamp: str) -> str:
    """An ISO timestamp as "2026-01-31 14:05 UTC" (as given when it doesn't parse)."""
    from datetime import datetime, timezone

    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return stamp
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc)
    return moment.strftime("%Y-%m-%d %H:%M") + (" UTC" if moment.tzinfo is not None else "")


# One section per test.


@dataclass
class SectionView:
    result: TestResult
    numbers: list[tuple[str, str]]  # short figures, shown as tiles
    lines: list[tuple[str, str]]  # longer facts, one per line
    figure: Markup | None = None
    caption: str = ""


BULK_CAPTION = (
    "Each question's own score (filled). Questions the model never saw form one bulk (the grey "
    "curve, fitted from below, since memorisation only lifts scores); memorised questions form "
    "a tail above it. Questions right of the dashed line, the bulk's 95th percentile, are "
    "flagged; about 5% of the bulk would be by chance, wherever the bulk sits. Where a tail "
    "was found, the line moves up to where a question becomes four times as likely the "
    "tail's as the bulk's (a local false discovery rate of 0.2), if that is higher."
)
WITHHELD_CAPTION = (
    "Each question's own score (filled), and the bulk the fit found (the grey curve): it holds only "
    "{share:.0%} of the questions, too few to be the null of questions never seen. "
    + MINORITY_WHY[0].upper()
    + MINORITY_WHY[1:]
    + ", so no question is flagged."
)
SHARED_CAPTION = (
    "Each question's own score (filled), and the bulk the fit found (the grey curve). The questions "
    "above it stand out with their twins (not drawn: the note below says how they compare): "
    "{why}. So no question is flagged."
)


def _test_view(report: Report, result: TestResult) -> SectionView:
    view = SectionView(result, *_facts(result))
    withheld = result.count_withheld
    if result.status == "skipped" and not withheld:
        return view
    salt = f"{report.tests.index(result)}-{result.name}"
    if result.kind == "aggregate":
        if result.shards:
            view.figure = Markup(plots.shard_chart(result.shards, salt))
            view.caption = (
                "Per shard of consecutive questions: the log-probability of the published order minus "
                "the mean over random reorderings of the same questions. A model that saw the benchmark "
                "as a file prefers the published order, so its bars stand above zero. Whiskers: the "
                "spread (standard deviation) of the reorderings."
            )
        return view
    benchmark = [item for item in report.items if not item.is_control]
    if result.kind == "unpaired":
        ours = _values(benchmark, result.name, "score")
        controls = _values([i for i in report.items if i.is_control], result.name, "score")
        if ours and controls:
            view.figure = Markup(
                plots.score_histogram(ours, controls, result.threshold, f"{result.name} score", salt)
            )
            view.caption = (
                "Scores of the benchmark questions (filled) and of the control-file questions the model "
                "cannot have seen (grey outline, the null). Benchmark questions right of the dashed line, "
                f"the control they must beat, are flagged; {chance(result.expected_rate)} would be by chance."
            )
        return view
    if result.kind == "bulk" and result.null is not None:
        scores = _values(benchmark, result.name, "score")
        if scores:
            view.figure = Markup(
                plots.bulk_histogram(scores, result.null, result.threshold, f"{result.name} score", salt)
            )
            view.caption = (
                SHARED_CAPTION.format(why=twins_why(report.reference.status == "used"))
                if result.shared_with_twins
                else WITHHELD_CAPTION.format(share=result.null.bulk_share)
                if withheld
                else BULK_CAPTION
            )
        return view
    differences = _values(benchmark, result.name, "diff")
    if not differences:
        return view
    self_paired = result.kind == "self-paired"
    control_items = [i for i in report.items if i.is_control] if self_paired else []
    control_differences = _values(control_items, result.name, "diff")
    if control_differences:  # guided against a control file
        view.figure = Markup(
            plots.score_histogram(
                differences, control_differences, result.threshold, f"{result.name}: guided − general", salt
            )
        )
        view.caption = (
            "Each question's guided minus general score: the benchmark's (filled) and the control-file "
            "questions' under the same two instructions (grey outline, the null: they name the same "
            "dataset, so the wording helps both alike). Benchmark questions right of the dashed line, "
            f"the control they must beat, are flagged; {chance(result.expected_rate)} would be by chance."
        )
        return view
    if self_paired:
        label, what = f"{result.name}: guided − general", "the guided minus the general score"
    else:
        twins = report.control.twins_per_question
        label = f"{result.name}: original − twin" + (f" (mean of {twins})" if twins > 1 else "")
        what = "the original's score minus its twin's"
    view.figure = Markup(plots.difference_histogram(differences, result.threshold, label, salt))
    view.caption = (
        f"Each question's difference d, {what} (filled). A model that never saw the questions has no "
        "reason to prefer either side, so its differences are symmetric around zero and their mirror "
        "image −d (grey outline) is the null. Questions right of the dashed line, the 95th percentile "
        "of −d, are flagged; about 5% would be by chance."
    )
    return view


def _values(items: list[ItemRecord], test: str, attribute: str) -> list[float]:
    values = []
    for item in items:
        entry = item.tests.get(test)
        value = getattr(entry, attribute) if entry is not None else None
        if value is not None:
            values.append(value)
    return values


def _facts(result: TestResult) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    lines = [("Calibration", _calibration(result))]
    null = result.null
    if null is not None and null.count_withheld:
        beyond = ("Tail beyond the bulk", f"at least {format_percent(null.tail_share_low)}, with its twins")
        too_few = (
            "Never-seen bulk",
            f"{format_percent(null.bulk_share)} of the questions: too few for the null",
        )
        withheld: list[tuple[str, str]] = [
            beyond if result.shared_with_twins else too_few,
            ("Flagged", "none: withheld"),
        ]
        if result.n_unscored:
            lines.append(("Not scored", f"{result.n_unscored}: {result.unscored_reason or 'no score'}"))
        spread = _spread_text(null)
        if spread:
            withheld += [
                ("Spread against the twins", spread),
                ("Holm-adjusted p", format_p(result.p_adjusted)),
            ]
        elif result.p_value is not None:  # without a reference: the twins cleared the tail (see the note)
            withheld += [
                ("p-value", format_p(result.p_value)),
                ("Holm-adjusted p", format_p(result.p_adjusted)),
            ]
        return withheld, lines
    if result.status == "skipped":
        return [], lines
    numbers: list[tuple[str, str]] = []
    if result.kind == "aggregate":
        if result.statistic_name is not None:
            numbers.append(("Statistic", f"{result.statistic_name} = {format_number(result.statistic)}"))
        numbers.append(("Shards used", str(result.n)))
        numbers.append(("Mean shard difference", format_number(result.mean_difference)))
    else:
        numbers.append(("Flagged", f"{result.n_flagged} of {result.n}"))
        interval = ""
        if result.flag_rate_ci is not None:
            low, high = result.flag_rate_ci
            interval = f" ({format_percent(low)}–{format_percent(high)})"
        numbers.append(("Flag rate (95% interval)", format_percent(result.flag_rate) + interval))
        numbers.append(("Expected by chance", format_percent(result.expected_rate)))
    numbers.append(("p-value", format_p(result.p_value)))
    numbers.append(("Holm-adjusted p", format_p(result.p_adjusted)))
    spread = _spread_text(null)
    if null is not None and spread:
        numbers.append(("Spread against the twins", spread))
        numbers.append(("Tail count alone", f"p = {format_p(null.tail_p_value)}"))
    if result.kind != "aggregate":
        numbers.append(("Flag threshold", format_number(result.threshold)))
        against_controls = result.kind == "unpaired" or result.auroc_vs_controls is not None
        if against_controls:
            median_label = "Median above controls"
        elif result.kind == "self-paired":
            median_label = "Median guided − general"
        elif null is not None:  # a bulk test flags on the score itself; this is familiarity
            median_label = "Median above twin"
        else:
            median_label = "Median difference from twin"
        if result.median_difference is not None or null is None:  # none: no question had a twin
            numbers.append((median_label, format_number(result.median_difference)))
        if result.auroc_vs_controls is not None:
            numbers.append(("Beats a control (50% by chance)", format_percent(result.auroc_vs_controls)))
        if result.permutations and null is not None and not result.count_withheld:
            # the tail count's p comes from never-seen samples simulated as many times, read beyond
            # them from a law fitted to them (so it can fall below 1 / (draws + 1)); a withheld
            # count's p is the spread test's, from as many swaps of question and twin
            numbers.append(("Simulated never-seen samples", f"{result.permutations:,}"))
        elif result.permutations:
            numbers.append(("Permutations", f"{result.permutations:,}"))
    if result.n_unscored:
        lines.append(("Not scored", f"{result.n_unscored}: {result.unscored_reason or 'no score'}"))
    return numbers, lines


def _spread_text(null: BulkNull | None) -> str:
    """The spread test against the twins, where a reference gave one ("" otherwise)."""
    if null is None or null.spread_p_value is None or null.spread_correlation is None:
        return ""
    return f"rank correlation {null.spread_correlation:+.2f}, p = {format_p(null.spread_p_value)}"


def _calibration(result: TestResult) -> str:
    if result.calibrated or "uncalibrated" in result.calibration:
        return result.calibration
    return f"{result.calibration} (uncalibrated)"


def _index_meter(report: Report) -> dict[str, float]:
    from ..stats.index import HIGH, MODERATE

    value = report.index.value
    return {"moderate": MODERATE, "high": HIGH, "value": -1.0 if value is None else value}


# The most familiar questions.


@dataclass
class Comparison:
    test: str
    score: str
    against_label: str
    against: str
    difference: str
    flagged: bool | None
    memorised: str = ""  # bulk tests with a tail: how likely the question is the tail's
    withheld: bool = False  # a bulk test whose null held a minority of the questions: no flags


@dataclass
class Writing:
    title: str
    left_label: str
    left: str
    right_label: str | None
    right: str | None


@dataclass
class Familiar:
    rank: int
    item: ItemRecord
    original: Markup
    twins: list[Markup]
    flagged_by: list[str]
    comparisons: list[Comparison] = field(default_factory=list)
    writings: list[Writing] = field(default_factory=list)


def familiar_questions(report: Report, count: int = FAMILIAR_COUNT) -> tuple[list[Familiar], bool]:
    """The questions the model seems to know best, and whether any test flagged any question.

    Ranked by how many calibrated tests flagged the question, then how many tests in all, then the
    mean percentile of its difference (its score, against a control file) across the tests.
    """
    # a test skipped because its null held a minority of the questions still scored them
    tests = [t for t in report.tests if t.kind != "aggregate" and (t.status != "skipped" or t.count_withheld)]
    benchmark = [item for item in report.items if not item.is_control]
    percentiles = [[0.0] * len(benchmark) for _ in tests]
    for column, test in enumerate(tests):
        values = [_statistic(item.tests.get(test.name), test) for item in benchmark]
        ordered = sorted(v for v in values if v is not None)
        for row, value in enumerate(values):
            if value is not None and ordered:
                middle = (bisect_left(ordered, value) + bisect_right(ordered, value)) / 2
                percentiles[column][row] = middle / len(ordered)

    def flagged_by(item: ItemRecord, calibrated_only: bool) -> list[str]:
        return [
            t.name
            for t in tests
            if (t.calibrated or not calibrated_only)
            and (entry := item.tests.get(t.name)) is not None
            and entry.flagged
        ]

    def key(row: int) -> tuple[int, int, float]:
        item = benchmark[row]
        mean_percentile = sum(p[row] for p in percentiles) / len(tests) if tests else 0.0
        return (len(flagged_by(item, True)), len(flagged_by(item, False)), mean_percentile)

    rows = sorted(range(len(benchmark)), key=key, reverse=True)[:count]
    uncalibrated = {t.name for t in tests if not t.calibrated}
    chosen = [
        _familiar(
            report,
            rank,
            benchmark[row],
            tests,
            [f"{n} (uncalibrated)" if n in uncalibrated else n for n in flagged_by(benchmark[row], False)],
        )
        for rank, row in enumerate(rows, start=1)
    ]
    any_flagged = any(flagged_by(item, False) for item in benchmark)
    return chosen, any_flagged


def _probability(value: float | None) -> str:
    """Two places, rounded down: 0.7996 beside "no" must not read as the flag's 0.80."""
    return "" if value is None else f"{math.floor(value * 100) / 100:.2f}"


def _statistic(entry: ItemTestResult | None, test: TestResult) -> float | None:
    if entry is None:
        return None
    return entry.score if test.kind in ("unpaired", "bulk") else entry.diff


def _familiar(
    report: Report, rank: int, item: ItemRecord, tests: list[TestResult], flagged: list[str]
) -> Familiar:
    twins = [highlight_differences(item.text, twin) for twin in item.twins]
    original = twins[0][0] if twins else Markup(escape(item.text))
    view = Familiar(rank, item, original, [pair[1] for pair in twins], flagged)
    for test in tests:
        entry = item.tests.get(test.name)
        if entry is None:
            continue
        difference = entry.diff
        if test.kind == "self-paired":
            label, against = "general", entry.general_score
        elif test.kind == "unpaired":
            label, against = "controls' threshold", test.threshold
        elif test.kind == "bulk" and test.threshold is not None and not test.count_withheld:
            # flagged on its own score against the bulk, not against its twin
            label, against = "bulk's threshold", test.threshold
            difference = None if entry.score is None else entry.score - test.threshold
        else:
            several = len(entry.twin_scores) > 1
            label = ("twins (mean)" if several else "twin") if item.twins else "no twin (--twinless)"
            against = entry.twin_score
        view.comparisons.append(
            Comparison(
                test=test.name,
                score=format_number(entry.score),
                against_label=label,
                against=format_number(against),
                difference=format_number(difference),
                flagged=entry.flagged,
                memorised=_probability(entry.p_memorised),
                withheld=test.count_withheld and entry.score is not None,
            )
        )
        if test.kind == "self-paired" and (entry.generated or entry.general_generated):
            view.writings.append(
                Writing(
                    f"{test.name}: completing the question's second half",
                    "told the dataset's name",
                    written(entry.generated),
                    "general instruction",
                    written(entry.general_generated),
                )
            )
        elif entry.generated is not None or entry.twin_generated is not None:
            paired = test.kind == "paired"
            view.writings.append(
                Writing(
                    f"{test.name}: continuing the first half",
                    "of the original",
                    written(entry.generated),
                    ("of twin 1" if len(item.twins) > 1 else "of the twin") if paired else None,
                    written(entry.twin_generated) if paired else None,
                )
            )
    return view


def written(text: str | None) -> str:
    """What the model wrote, less a character cut in half where generation stopped (decoded as U+FFFD)."""
    return (text or "").rstrip("\ufffd")


_TOKENS = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d_]+|\s+|.", re.S)


def highlight_differences(original: str, twin: str) -> tuple[Markup, Markup]:
    """Both texts, escaped, with the parts that differ (for twins: the numbers) in ``<mark>``."""
    left, right = _TOKENS.findall(original), _TOKENS.findall(twin)
    marked_left, marked_right = [], []
    if len(left) == len(right):
        # A twin is its question with other numbers, token for token: compared in place. An
        # alignment would pair a number with the same number elsewhere (a list of small numbers)
        # and mark the words between them.
        for a, b in zip(left, right, strict=True):
            marked_left.append(_span([a], a != b))
            marked_right.append(_span([b], a != b))
        return Markup("").join(marked_left), Markup("").join(marked_right)
    matcher = difflib.SequenceMatcher(None, left, right, autojunk=False)
    for operation, i1, i2, j1, j2 in matcher.get_opcodes():
        marked_left.append(_span(left[i1:i2], operation != "equal"))
        marked_right.append(_span(right[j1:j2], operation != "equal"))
    return Markup("").join(marked_left), Markup("").join(marked_right)


def _span(tokens: list[str], differs: bool) -> Markup:
    text = "".join(tokens)
    if differs and text.strip():
        return Markup("<mark>{}</mark>").format(text)  # format() escapes the text
    return Markup(escape(text))


def looks_like_code(text: str) -> bool:
    """Code keeps a monospace font, prose reads better without; line breaks are kept either way.

    Indented lines are the sign (a function body, a doctest); a question's font is used for what
    the model wrote about it too, so the two sides of a comparison look alike.
    """
    return bool(_INDENTED.search(text))


_INDENTED = re.compile(r"^(?: {2,}|\t)\S", re.M)


# Everything needed to reproduce the run.


def reproducibility(report: Report) -> list[tuple[str, list[tuple[str, str]]]]:
    model = report.model
    model_rows = [
        ("spec", model.spec),
        ("name", model.name),
        ("backend", model.backend),
        ("identity", model.identity),
        ("parameters", f"{model.num_parameters:,}" if model.num_parameters else "unknown"),
    ]
    shown = {label for label, _ in model_rows}
    model_rows += sorted((k, v) for k, v in model.settings.items() if k not in shown)
    groups: list[tuple[str, list[tuple[str, str]]]] = [("Model", model_rows)]
    reference = report.reference
    reference_rows = [("status", reference.status), ("requested", reference.requested)]
    if reference.model is not None:
        reference_rows += [("name", reference.model.name), ("identity", reference.model.identity)]
    if reference.reason:
        reference_rows.append(("reason", reference.reason))
    groups.append(("Reference model", reference_rows))
    benchmark = report.benchmark
    groups.append(
        (
            "Benchmark",
            [
                ("spec", benchmark.spec),
                ("name", benchmark.name),
                ("field", benchmark.field or "–"),
                ("source", benchmark.source),
                ("questions", str(benchmark.n_questions)),
                ("content hash", benchmark.content_hash),
                ("published order", "yes" if benchmark.ordered else "no"),
            ],
        )
    )
    control = report.control
    control_rows = [("kind", control.kind), ("description", control.description)]
    if control.kind == "file":
        control_rows += [
            ("spec", control.spec or "–"),
            ("content hash", control.content_hash or "–"),
            ("questions", str(control.n_controls)),
        ]
    else:
        control_rows.append(("twins per question", str(control.twins_per_question)))
        if control.without_twin:
            control_rows.append(("tested without a twin (--twinless)", str(control.without_twin)))
    groups.append(("Controls", control_rows))
    sample = report.sample
    sample_rows = [
        ("seed", str(sample.seed)),
        ("requested", str(sample.requested)),
        ("tested", str(sample.tested)),
        ("testable", str(sample.testable)),
    ]
    sample_rows += [(f"set aside: {reason}", str(n)) for reason, n in sample.set_aside.items()]
    groups.append(("Sample", sample_rows))
    settings = [
        (name.replace("_", " "), _setting(value)) for name, value in report.settings if value is not None
    ]
    groups.append(("Settings", [*settings, ("fail on", report.verdict.fail_on)]))
    groups.append(("Versions", [(name, version) for name, version in report.versions.items()]))
    run = report.run
    run_rows = [
        ("started", run.started_at),
        ("finished", run.finished_at),
        ("duration", f"{run.duration_s:.1f} s"),
        ("host", run.host),
        ("threads", "default" if run.threads is None else str(run.threads)),
        ("peak memory", "unknown" if run.peak_memory_mb is None else f"{run.peak_memory_mb:,.0f} MB"),
        ("models loaded", ", ".join(run.models_loaded) or "none (all evidence from the cache)"),
        ("cache", run.cache or "not used (--no-cache)"),
    ]
    for role, use in run.evidence.items():
        run_rows.append(
            (
                f"evidence: {role}",
                f"{use.requested:,} requested, {use.from_cache:,} from the cache, {use.computed:,} "
                f"computed in {use.batches_computed:,} batches ({use.compute_seconds:.1f} s, "
                f"{use.tokens_scored:,} tokens)"
                + (f", {use.oom_retries} out-of-memory retries" if use.oom_retries else ""),
            )
        )
    groups.append(("This run", run_rows))
    return groups


def _setting(value: object) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)

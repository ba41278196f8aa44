"""The report as a person reads it in a terminal (rich), in the spirit of contamcheck 0.1.0."""

from __future__ import annotations

from pydantic import BaseModel
from rich.console import Console
from rich.markup import escape
from rich.text import Text

from .advice import more_questions_caveat, numberless_caveat
from .io import as_saved
from .model import NOT_LOADED, Report, TestResult

MARKS = {
    "fail": ("✗", "bold red"),
    "warn": ("!", "bold yellow"),
    "pass": ("✓", "green"),
    "skipped": ("–", "dim"),
}
# What a terminal would act on rather than show: C0 controls but tab and newline (ESC starts a
# sequence that can clear the screen, set the title or hide text), DEL, C1 controls, and the bidi
# overrides and isolates that reorder a line. A saved report may come from anyone.
UNPRINTABLE = dict.fromkeys(
    [
        *range(0x09),
        *range(0x0B, 0x20),
        0x7F,
        *range(0x80, 0xA0),
        *range(0x202A, 0x202F),
        *range(0x2066, 0x206A),
    ],
    "\ufffd",
)
VERDICT_STYLES = {
    "likely": "bold red",
    "evidence": "bold yellow",
    "inconclusive": "bold magenta",
    "clean": "bold green",
}


def format_p(p: float | None) -> str:
    if p is None:
        return "p = n/a"
    if p < 0.001:
        return "p < 0.001"
    if p < 0.01:  # two significant digits: 0.0015 is not "0.001", which would read as alpha itself
        return f"p = {p:#.2g}"  # 0.0010, not 0.001
    return f"p = {p:.3f}" if p < 0.1 else f"p = {p:.2f}"


def p_text(result: TestResult) -> str:
    """The test's p-value; beside it the Holm-adjusted one the verdict reads, where a reader could
    take the raw one for significant and the adjusted one says otherwise."""
    raw, adjusted = result.p_value, result.p_adjusted
    if raw is None or adjusted is None or raw >= 0.05 or format_p(adjusted) == format_p(raw):
        return format_p(raw)
    return f"{format_p(raw)}; adjusted {format_p(adjusted)}"


def reference_line(report: Report) -> str:
    ref = report.reference
    if ref.status == "used" and ref.model is not None:
        return ref.model.name
    why = []
    if ref.status == "unavailable":  # the automatic one could not be loaded (offline), or is the model
        why.append("unavailable offline" if NOT_LOADED in ref.reason else ref.reason)
    if ref.status == "passed-over" and ref.model is not None:  # the caveats say why
        why.append(f"{ref.model.name} passed over: it looks contaminated itself")
    if any(t.kind == "bulk" and t.status != "skipped" for t in report.tests):
        why.append("likelihood tests judged against the bulk of the benchmark")
    return "none" + (f" ({'; '.join(why)})" if why else "")


def header_lines(report: Report) -> list[str]:
    sample = report.sample
    skipped = sum(sample.set_aside.values())
    skipped_text = ""
    if skipped:
        reasons = "; ".join(f"{count} {reason}" for reason, count in sample.set_aside.items())
        skipped_text = f" (set aside: {reasons})"
    # -n above what the benchmark has: say that these are all, not a sample
    everyone = " (all that can be tested)" if sample.requested > sample.tested else ""
    return [
        f"model: {report.model.name}   benchmark: {report.benchmark.name}   "
        f"reference: {reference_line(report)}",
        f"{sample.tested} question{'s' if sample.tested != 1 else ''}{everyone}, "
        f"control: {report.control.description}{skipped_text}",
    ]


def test_line(result: TestResult) -> str:
    if result.status == "skipped":
        return f"{result.name}: skipped — {result.skip_reason}"
    if result.kind == "aggregate":
        # a finding only where the test went beyond chance; a lean a passing test shows is not one
        if result.status in ("fail", "warn"):
            direction = "prefers the published order"
        elif (result.mean_difference or 0) > 0:
            direction = "no preference for the published order beyond chance"
        else:
            direction = "does not prefer the published order"
        statistic = f"{result.statistic_name or 'statistic'} = {result.statistic or 0:.2f}"
        return f"{result.name}: {direction} over {result.n} shards ({statistic}, {p_text(result)})"
    rate = result.flag_rate or 0.0
    null = result.null
    if result.shared_with_twins and null is not None:
        spread = (
            f"; the questions spread against their twins at rank correlation {null.spread_correlation:+.2f}"
            if null.spread_correlation is not None
            else ""  # without a reference: the twins cleared the tail, the note says how
        )
        return (
            f"{result.name}: no flags (a tail of at least {null.tail_share_low:.0%} stands out with its "
            f"twins: familiarity with part of the benchmark, not memorised questions){spread} "
            f"({p_text(result)})"
        )
    if result.count_withheld and null is not None and null.spread_correlation is not None:
        return (
            f"{result.name}: no flags (the never-seen bulk holds {null.bulk_share:.0%} of the questions, "
            f"too few to be the null); the questions spread against their twins at rank correlation "
            f"{null.spread_correlation:+.2f} ({p_text(result)})"
        )
    if result.aggregate_evidence and null is not None and null.spread_correlation is not None:
        # the p-value is the spread test's: say so first, or "5% flagged, 5% expected" reads as nothing
        return (
            f"{result.name}: the questions spread more than their twins (rank correlation "
            f"{null.spread_correlation:+.2f}, {p_text(result)}); {rate:.0%} flagged "
            f"({result.n_flagged}/{result.n}), {result.expected_rate:.0%} expected by chance"
        )
    line = (
        f"{result.name}: {rate:.0%} of questions flagged ({result.n_flagged}/{result.n}) — "
        f"{result.expected_rate:.0%} expected by chance ({p_text(result)})"
    )
    if result.auroc_vs_controls is not None:
        line += f"; beats a control {result.auroc_vs_controls:.0%} of the time, 50% by chance"
    if not result.calibrated:
        line += " [uncalibrated]" if result.status in ("pass", "skipped") else " [uncalibrated: not counted]"
    return line


def index_line(report: Report) -> str:
    index = report.index
    if index.value is None:
        return f"Evidence index: n/a. {index.explanation}"
    parts = ", ".join(f"{c.test} {c.weight:.0%}" for c in index.components if c.contributes)
    return f"Evidence index: {index.value:.2f} ({index.band}), weighing {parts}."


def render(report: Report, console: Console) -> None:
    """Print the report: header, one line per test with what it means, and the verdict. What a
    terminal would act on in its text (an escape sequence) is shown as \ufffd."""
    report = as_saved(report)  # a copy, checked: cleaned in place
    _printable(report)
    first, second = header_lines(report)
    console.print()
    console.print(Text.assemble(("contamcheck  ", "bold"), first))
    console.print(Text("             " + second))
    console.print()
    first_with: dict[str, str] = {}  # a skip reason -> the first test skipped for it
    for result in report.tests:
        mark, style = MARKS[result.status]
        line = test_line(result)
        if result.status == "skipped":
            first = first_with.setdefault(result.skip_reason or "", result.name)
            if first != result.name:
                line = f"{result.name}: skipped — as {first}"  # a long reason, said once
        console.print(Text.assemble("  ", (mark, style), " ", line))
        if result.status == "skipped":
            continue
        details = [result.title]
        if result.n_unscored:
            details.append(f"{result.n_unscored} not scored: {result.unscored_reason}")
        if result.note:
            details.append(result.note)
        for detail in details:
            console.print(Text(f"      {detail}", style="dim"))
    console.print()
    verdict = report.verdict
    console.print(Text.assemble((verdict.label, VERDICT_STYLES[verdict.code]), " — ", verdict.explanation))
    console.print(Text(index_line(report), style="dim"))
    more = more_questions_caveat(report.tests, report.reference, report.sample.tested, report.sample.testable)
    if more:
        console.print(Text.assemble(("Next: ", "bold"), more))
    sample = report.sample
    paired = report.control.kind == "twins"
    numberless = numberless_caveat(sample.set_aside, sample.testable, paired, report.settings.twinless)
    if numberless:
        console.print(Text.assemble(("Next: ", "bold"), numberless))
    for warning in report.warnings:
        console.print(f"[yellow]warning:[/] {escape(warning)}")
    console.print()


def _printable(value: object) -> object:
    """``value`` with each string's unprintable characters replaced: a model, list or dict in place
    (keys too: a set-aside reason is printed), a string as a new one."""
    if isinstance(value, str):
        return value.translate(UNPRINTABLE)
    if isinstance(value, BaseModel):
        for name in type(value).model_fields:
            object.__setattr__(value, name, _printable(getattr(value, name)))
    elif isinstance(value, list):
        value[:] = [_printable(part) for part in value]
    elif isinstance(value, tuple):
        return tuple(_printable(part) for part in value)
    elif isinstance(value, dict):
        cleaned = {_printable(key): _printable(part) for key, part in value.items()}
        value.clear()
        value.update(cleaned)
    return value

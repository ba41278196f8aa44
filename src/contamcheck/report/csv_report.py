"""The per-example CSV (SPEC §8): one row per question, the columns other tools and checks read.

Columns, in order:

* ``id``, ``text``, then ``twin`` (number twins) or ``control`` ("true"/"false", control-file mode,
  where the control-file questions follow the benchmark questions as extra rows);
* with several twins per question, ``twin2``, ``twin3`` …;
* per per-item test, in report order: ``<test>_score``, ``<test>_twin_score`` (twin mode only),
  ``<test>_twin2_score`` … (several twins), ``<test>_diff``, ``<test>_flagged``; the likelihood
  tests judged against the bulk (min-k, min-k++, zlib with twins) add ``<test>_p_memorised``, how
  likely the question is the tail's under the fitted mixture (empty where no tail was found or its
  count is within chance, or
  where the question was not scored: ``<test>_flagged`` empty too; where the fitted null held under
  40% of the questions, ``<test>_flagged`` is empty for every question and the scores stay);
  ``completion`` adds ``completion_generated`` after its own columns;
* ``guided`` compares with the general instruction instead of a twin: ``guided_score``,
  ``guided_general_score``, ``guided_diff``, ``guided_flagged``, ``guided_generated``,
  ``guided_general_generated``; with a control file the control rows have them too (the same two
  instructions), and ``guided_diff`` stays guided − general for every row, where the unpaired
  tests' ``<test>_diff`` is the score minus the controls' median.

``<test>_twin_score`` belongs with the ``twin`` column (the first twin); ``<test>_diff`` is the
original's score minus the *mean* over all its twins, as in the JSON report. Aggregate tests
(canonical-order) have no per-item values. A skipped test keeps its columns, empty, even where
the JSON holds values computed before it was skipped (guided, when the model cannot follow its
instructions). A likelihood test whose fitted null held under 40% of the questions keeps its
scores and leaves its flag column empty, skipped (no reference) or not. Empty also means "not
scored": a number that could not be computed, a flag for an unscored question (why, for each
test, is its ``unscored_reason`` in the JSON report: one reason per test, so no column here).

Text cells (``id``, the question, its twins, what the model wrote) come from a benchmark file or a
model, and a spreadsheet runs a cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage
return as a formula (``=HYPERLINK(...)`` sends data away when clicked); so do some spreadsheets
after leading spaces, and with the full-width ``＝＋－＠`` of East Asian input. Such a cell is written with
an apostrophe before it, which spreadsheets show as text, as OWASP advises against CSV injection;
the JSON report keeps every text exactly.
"""

from __future__ import annotations

import csv
import io

from .io import as_saved
from .model import ItemRecord, ItemTestResult, Report, TestResult

PER_ITEM_KINDS = ("paired", "unpaired", "bulk")
FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "＝", "＋", "－", "＠")


def to_csv(report: Report) -> str:
    """The report's per-example rows as CSV text (UTF-8 when written; ``\\r\\n`` row ends)."""
    report = as_saved(report)
    control_file = report.control.kind == "file"
    twins = 0 if control_file else max(1, report.control.twins_per_question)
    per_item = [t for t in report.tests if t.kind in (*PER_ITEM_KINDS, "self-paired")]

    header = ["id", "text", "control" if control_file else "twin"]
    header += [f"twin{number}" for number in range(2, twins + 1)]
    for test in per_item:
        header += _test_columns(test, twins)

    buffer = io.StringIO()
    writer = csv.writer(buffer)  # quotes fields with commas, quotes or newlines (code is safe)
    writer.writerow(header)
    benchmark_rows = [item for item in report.items if not item.is_control]
    control_rows = [item for item in report.items if item.is_control]
    for item in [*benchmark_rows, *control_rows]:
        row = [_text(item.id), _text(item.text)]
        if control_file:
            row.append(_bool(item.is_control))
        else:
            row += [_text(item.twins[i]) if i < len(item.twins) else "" for i in range(twins)]
        for test in per_item:
            row += _test_values(test, item, twins)
        writer.writerow(row)
    return buffer.getvalue()


def _twin_label(number: int) -> str:
    return "twin" if number == 1 else f"twin{number}"


def _test_columns(test: TestResult, twins: int) -> list[str]:
    name = test.name
    if test.kind == "self-paired":
        return [
            f"{name}_score",
            f"{name}_general_score",
            f"{name}_diff",
            f"{name}_flagged",
            f"{name}_generated",
            f"{name}_general_generated",
        ]
    columns = [f"{name}_score"]
    columns += [f"{name}_{_twin_label(number)}_score" for number in range(1, twins + 1)]
    columns += [f"{name}_diff", f"{name}_flagged"]
    if test.kind == "bulk":
        columns.append(f"{name}_p_memorised")
    if name == "completion":
        columns.append("completion_generated")
    return columns


def _test_values(test: TestResult, item: ItemRecord, twins: int) -> list[str]:
    withheld = test.null is not None and test.null.count_withheld  # the scores stand, the flags don't
    if test.status == "skipped" and not withheld:  # what was computed before it gave up is no result
        return [""] * len(_test_columns(test, twins))
    entry = item.tests.get(test.name) or ItemTestResult()
    if test.kind == "self-paired":
        return [
            _number(entry.score),
            _number(entry.general_score),
            _number(entry.diff),
            _flag(entry.flagged),
            _text(entry.generated),
            _text(entry.general_generated),
        ]
    values = [_number(entry.score)]
    for index in range(twins):
        if index < len(entry.twin_scores):
            values.append(_number(entry.twin_scores[index]))
        else:  # a report with one twin and no per-twin list still has the twin's score
            values.append(_number(entry.twin_score) if index == 0 else "")
    values += [_number(entry.diff), _flag(entry.flagged)]
    if test.kind == "bulk":
        values.append(_number(entry.p_memorised))
    if test.name == "completion":
        values.append(_text(entry.generated))
    return values


def _number(value: float | None) -> str:
    # repr() is the shortest text that reads back as the same float
    return "" if value is None else repr(float(value))


def _flag(value: bool | None) -> str:
    return "" if value is None else _bool(value)


def _bool(value: bool) -> str:
    return "true" if value else "false"


def _text(value: str | None) -> str:
    """Free text, never a formula (the module's docstring says why)."""
    if not value:
        return ""
    starts = value.lstrip(" \n\u3000")  # tabs and carriage returns are formula starts themselves
    return "'" + value if value.startswith(FORMULA_START) or starts.startswith(FORMULA_START) else value

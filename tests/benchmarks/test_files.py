"""Questions from local files: every format, gzipped or not, and every way a file can be wrong."""

from __future__ import annotations

import codecs
import csv
import gzip
import io
import json
import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from contamcheck.benchmarks import load_benchmark
from contamcheck.benchmarks.files import GUESSED_FIELDS, SUFFIXES
from contamcheck.errors import InputError, UnknownNameError

ROWS = [
    {"id": "q-a", "question": "Tom has 16 apples and eats 3. How many are left?", "answer": "13"},
    {"id": "q-b", "question": "A train covers 120 km in 2 hours. What is its speed?", "answer": "60"},
    {"id": "q-c", "question": "def f(x):\n    return x + 1\n", "answer": "-"},
]
QUESTIONS = [row["question"] for row in ROWS]


def encode(suffix: str, rows: list[dict[str, Any]]) -> bytes:
    if suffix == ".jsonl":
        return "".join(json.dumps(row) + "\n" for row in rows).encode()
    if suffix == ".json":
        return json.dumps(rows, indent=1).encode()
    if suffix == ".csv":
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
        return buffer.getvalue().encode()
    if suffix == ".parquet":
        sink = io.BytesIO()
        pq.write_table(pa.Table.from_pylist(rows), sink)
        return sink.getvalue()
    raise AssertionError(suffix)


def write(path: Path, data: bytes | str) -> Path:
    if isinstance(data, str):
        data = data.encode("utf-8")
    path.write_bytes(gzip.compress(data) if path.name.lower().endswith(".gz") else data)
    return path


def error_of(spec: str | Path, field: str | None = None, kind: type[Exception] = InputError) -> str:
    with pytest.raises(kind) as caught:
        load_benchmark(str(spec), field)
    assert isinstance(caught.value, InputError)
    assert caught.value.exit_code == 2
    return str(caught.value)


# --- every format, plain and gzipped -------------------------------------------------------------


@pytest.mark.parametrize("gz", ["", ".gz"])
@pytest.mark.parametrize("suffix", [".jsonl", ".json", ".csv", ".parquet"])
def test_each_format_reads_ids_and_questions(tmp_path: Path, suffix: str, gz: str) -> None:
    path = write(tmp_path / f"questions{suffix}{gz}", encode(suffix, ROWS))
    benchmark = load_benchmark(str(path))
    assert [item.text for item in benchmark.items] == QUESTIONS  # code keeps its newlines
    assert [item.id for item in benchmark.items] == ["q-a", "q-b", "q-c"]
    assert [item.position for item in benchmark.items] == [0, 1, 2]
    assert benchmark.field == "question"  # guessed
    assert benchmark.name == path.name
    assert benchmark.spec == str(path)
    assert str(path) in benchmark.source
    assert benchmark.set_aside == {}


@pytest.mark.parametrize("gz", ["", ".gz"])
def test_txt_is_one_question_per_line_with_line_numbers_as_ids(tmp_path: Path, gz: str) -> None:
    path = write(tmp_path / f"questions.txt{gz}", "First question here\n\n  Second question  \nThird\n")
    benchmark = load_benchmark(str(path))
    assert [item.text for item in benchmark.items] == ["First question here", "Second question", "Third"]
    assert [item.id for item in benchmark.items] == ["0", "2", "3"]  # 0-based line numbers
    assert benchmark.field is None


def test_a_split_named_file_takes_its_folder_as_the_dataset_name(tmp_path: Path) -> None:
    """gsm8k/test.jsonl is GSM8K's test split: the guided test must not call it "the test dataset"."""
    (tmp_path / "gsm8k").mkdir()
    split_file = load_benchmark(str(write(tmp_path / "gsm8k" / "Train.jsonl.gz", encode(".jsonl", ROWS))))
    assert (split_file.title, split_file.split) == ("gsm8k", "train")
    named = load_benchmark(str(write(tmp_path / "gsm8k" / "questions.jsonl", encode(".jsonl", ROWS))))
    assert (named.title, named.split) == ("questions", "test")


def test_suffixes_are_case_insensitive(tmp_path: Path) -> None:
    path = write(tmp_path / "QUESTIONS.JSONL.GZ", encode(".jsonl", ROWS))
    assert [item.text for item in load_benchmark(str(path)).items] == QUESTIONS


def test_every_documented_suffix_is_supported() -> None:
    assert set(SUFFIXES) == {".jsonl", ".json", ".csv", ".txt", ".parquet"}


def test_json_variants(tmp_path: Path) -> None:
    wrapped = write(tmp_path / "wrapped.json", json.dumps({"version": 2, "data": ROWS}))
    assert [item.text for item in load_benchmark(str(wrapped)).items] == QUESTIONS
    strings = write(tmp_path / "strings.json", json.dumps(QUESTIONS))
    benchmark = load_benchmark(str(strings))
    assert [item.text for item in benchmark.items] == QUESTIONS
    assert benchmark.field == "text"
    assert [item.id for item in benchmark.items] == ["0", "1", "2"]
    lines = write(tmp_path / "lines.json", encode(".jsonl", ROWS))  # JSON Lines named .json
    assert [item.text for item in load_benchmark(str(lines)).items] == QUESTIONS


def test_csv_with_a_byte_order_mark_and_multiline_cells(tmp_path: Path) -> None:
    path = write(tmp_path / "excel.csv", "\ufeff" + encode(".csv", ROWS).decode())
    benchmark = load_benchmark(str(path))
    assert benchmark.field == "question"  # the BOM is not part of the first column's name
    assert [item.text for item in benchmark.items] == QUESTIONS


def test_a_tab_separated_file_named_csv_is_read_by_its_columns(tmp_path: Path) -> None:
    first = "Tom has 12 apples, then buys 30 more. How many now?"  # a comma inside a cell
    lines = ["id\tquestion", f"a\t{first}", "b\tHow many is 7 + 8?"]
    benchmark = load_benchmark(str(write(tmp_path / "tabs.csv", "\n".join(lines) + "\n")))
    assert benchmark.field == "question"
    assert [item.text for item in benchmark.items] == [first, "How many is 7 + 8?"]


def test_a_semicolon_separated_file_named_csv_is_read_by_its_columns(tmp_path: Path) -> None:
    """Excel's CSV where ',' is the decimal mark: read with ',' it was one column named 'id;question',
    and following the advice to pass that name audited each question with its id in front."""
    first = "Tom pays 2,50 € for 3 apples, then 1,20 € more. How much in all?"  # commas in a cell
    lines = ["id;question", f'4;"{first}"', '5;"How many is 7 + 8; and 9 + 1?"']
    benchmark = load_benchmark(str(write(tmp_path / "excel.csv", "\r\n".join(lines) + "\r\n")))
    assert benchmark.field == "question"
    assert [item.text for item in benchmark.items] == [first, "How many is 7 + 8; and 9 + 1?"]
    assert [item.id for item in benchmark.items] == ["4", "5"]


def test_utf8_text_survives(tmp_path: Path) -> None:
    rows = [{"question": "Zoë pays 12 € for 3 crêpes; what does 1 crêpe cost in 日本?"}]
    path = write(tmp_path / "utf8.jsonl", encode(".jsonl", rows))
    assert load_benchmark(str(path)).items[0].text == rows[0]["question"]


# --- fields ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("guessed", GUESSED_FIELDS)
def test_the_question_field_is_guessed(tmp_path: Path, guessed: str) -> None:
    rows = [{"meta": "x", guessed: f"What is {n} plus {n}?"} for n in range(3)]
    benchmark = load_benchmark(str(write(tmp_path / "q.jsonl", encode(".jsonl", rows))))
    assert benchmark.field == guessed
    assert [item.text for item in benchmark.items] == [row[guessed] for row in rows]


def test_guessing_prefers_question_then_text_then_prompt_then_problem(tmp_path: Path) -> None:
    rows = [{"problem": "P", "prompt": "R", "text": "T", "question": "Q"}]
    assert load_benchmark(str(write(tmp_path / "a.jsonl", encode(".jsonl", rows)))).field == "question"
    rows = [{"problem": "P", "prompt": "R", "text": "T"}]
    assert load_benchmark(str(write(tmp_path / "b.jsonl", encode(".jsonl", rows)))).field == "text"
    rows = [{"problem": "P", "prompt": "R"}]
    assert load_benchmark(str(write(tmp_path / "c.jsonl", encode(".jsonl", rows)))).field == "prompt"


def test_field_picks_the_column(tmp_path: Path) -> None:
    rows = [
        {"id": 1, "body": "Question one?", "question": "not this"},
        {"id": 2, "body": "Two?", "question": "no"},
    ]
    path = write(tmp_path / "q.jsonl", encode(".jsonl", rows))
    benchmark = load_benchmark(str(path), field="body")
    assert benchmark.field == "body"
    assert [item.text for item in benchmark.items] == ["Question one?", "Two?"]
    assert [item.id for item in benchmark.items] == ["1", "2"]  # ids written as numbers become text


# --- ids ------------------------------------------------------------------------------------------


def test_task_id_is_an_id(tmp_path: Path) -> None:
    rows = [{"task_id": f"Task/{n}", "prompt": f"def f{n}():\n    pass\n"} for n in range(3)]
    benchmark = load_benchmark(str(write(tmp_path / "tasks.jsonl", encode(".jsonl", rows))))
    assert [item.id for item in benchmark.items] == ["Task/0", "Task/1", "Task/2"]


def test_without_ids_the_id_is_the_0_based_row_number(tmp_path: Path) -> None:
    rows = [{"question": "first"}, {"question": "   "}, {"question": None}, {"question": "fourth"}]
    benchmark = load_benchmark(str(write(tmp_path / "q.jsonl", encode(".jsonl", rows))))
    assert [item.id for item in benchmark.items] == ["0", "3"]  # the file's rows, empty ones counted
    assert [item.position for item in benchmark.items] == [0, 1]
    assert benchmark.set_aside == {"empty text": 2}


def test_duplicated_ids_fall_back_to_row_numbers(tmp_path: Path) -> None:
    rows = [{"id": "x", "question": "one"}, {"id": "y", "question": "two"}, {"id": "x", "question": "three"}]
    benchmark = load_benchmark(str(write(tmp_path / "dup.jsonl", encode(".jsonl", rows))))
    assert [item.id for item in benchmark.items] == ["0", "1", "2"]
    assert [item.text for item in benchmark.items] == ["one", "two", "three"]
    assert "not unique" in benchmark.source
    assert "'x'" in benchmark.source


def test_the_chosen_field_is_never_also_the_id(tmp_path: Path) -> None:
    rows = [{"id": "What is 2 plus 2?"}, {"id": "What is 3 plus 3?"}]
    benchmark = load_benchmark(str(write(tmp_path / "q.jsonl", encode(".jsonl", rows))), field="id")
    assert [item.id for item in benchmark.items] == ["0", "1"]


def test_ordered_is_passed_through(tmp_path: Path) -> None:
    path = write(tmp_path / "q.jsonl", encode(".jsonl", ROWS))
    assert load_benchmark(str(path)).ordered is True
    assert load_benchmark(str(path), ordered=False).ordered is False


# --- content hash ---------------------------------------------------------------------------------


def test_content_hash_is_stable_and_follows_the_questions(tmp_path: Path) -> None:
    first = load_benchmark(str(write(tmp_path / "a.jsonl", encode(".jsonl", ROWS))))
    same_rows_other_format = load_benchmark(str(write(tmp_path / "b.csv", encode(".csv", ROWS))))
    assert first.content_hash == load_benchmark(first.spec).content_hash
    assert first.content_hash == same_rows_other_format.content_hash  # content, not file or format
    assert first.content_hash.startswith("sha256:")
    assert len(first.content_hash) == len("sha256:") + 64

    changed = [dict(row) for row in ROWS]
    changed[1]["question"] = changed[1]["question"].replace("120", "121")
    other = load_benchmark(str(write(tmp_path / "c.jsonl", encode(".jsonl", changed))))
    assert other.content_hash != first.content_hash

    renamed = [dict(row) for row in ROWS]
    renamed[0]["id"] = "q-z"
    assert load_benchmark(str(write(tmp_path / "d.jsonl", encode(".jsonl", renamed)))).content_hash != (
        first.content_hash
    )


def test_content_hash_separates_ids_from_texts(tmp_path: Path) -> None:
    a = load_benchmark(str(write(tmp_path / "a.jsonl", encode(".jsonl", [{"id": "ab", "question": "c"}]))))
    b = load_benchmark(str(write(tmp_path / "b.jsonl", encode(".jsonl", [{"id": "a", "question": "bc"}]))))
    assert a.content_hash != b.content_hash


# --- what can go wrong, and what the message says -------------------------------------------------


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.jsonl"
    message = error_of(path)
    assert str(path) in message
    assert "does not exist" in message
    assert "Check the path" in message


def test_a_link_to_nothing_or_a_loop_of_links_is_named_as_a_link(tmp_path: Path) -> None:
    (tmp_path / "one.jsonl").symlink_to(tmp_path / "two.jsonl")
    (tmp_path / "two.jsonl").symlink_to(tmp_path / "one.jsonl")  # a loop: it "does not exist"
    (tmp_path / "gone.jsonl").symlink_to(tmp_path / "deleted.jsonl")
    for name in ("one.jsonl", "gone.jsonl"):
        message = error_of(tmp_path / name)
        assert "is a link that leads to no file" in message and "does not exist" not in message


def test_missing_file_with_an_unknown_suffix_is_an_unknown_name(tmp_path: Path) -> None:
    message = error_of(tmp_path / "nope.xml", kind=UnknownNameError)
    assert "Unknown benchmark" in message
    assert ".jsonl/.json/.csv/.txt/.parquet" in message


@pytest.mark.parametrize("name", ["folder", "looks_like.jsonl"])
def test_folder_instead_of_file(tmp_path: Path, name: str) -> None:
    folder = tmp_path / name
    folder.mkdir()
    message = error_of(folder)
    assert str(folder) in message
    assert "is a folder" in message
    assert "pass a question file" in message


@pytest.mark.parametrize("name", ["empty.jsonl", "empty.json", "empty.csv", "empty.txt", "empty.jsonl.gz"])
def test_empty_file_yields_no_questions(tmp_path: Path, name: str) -> None:
    path = write(tmp_path / name, b"" if not name.endswith(".json") else b"[]")
    message = error_of(path)
    assert name in message
    assert "yields no questions" in message


def test_csv_with_only_a_header_yields_no_questions(tmp_path: Path) -> None:
    message = error_of(write(tmp_path / "header.csv", "id,question\n"))
    assert "yields no questions" in message
    assert "at least one question" in message


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("blank.jsonl", '{"question": ""}\n{"question": "   "}\n{"question": null}\n'),
        ("blank.txt", "\n   \n\t\n"),
        ("blank.csv", 'id,question\n1,""\n2,"  "\n'),
    ],
)
def test_file_with_only_empty_questions_yields_no_questions(tmp_path: Path, name: str, content: str) -> None:
    message = error_of(write(tmp_path / name, content))
    assert name in message
    assert "yields no questions" in message
    assert "--field" in message  # the fix: perhaps the questions are in another field


@pytest.mark.parametrize(
    ("content", "line", "says"),
    [
        # a question with a comma and no quotes: cut at the comma, the rest a surplus cell
        (
            "id,question\n1,Ann has 3 pens.\n2,Boris makes 50,000 bars a day.\n",
            3,
            "was not put in double quotes",
        ),
        # a line break in an unquoted question begins a row of one cell
        ("id,question\n1,Ann has 3 pens and\n buys 2 more.\n", 3, "a line break in a cell"),
        ("id;question\n1;Ann has 3 pens; Bob 2.\n", 2, "holding a semicolon"),
        ("question,answer,source\nAnn has 3 pens.,3\n", 2, "an empty one is written as nothing"),
    ],
)
def test_csv_row_with_other_cell_count_is_named(tmp_path: Path, content: str, line: int, says: str) -> None:
    path = write(tmp_path / "ragged.csv", content)
    message = error_of(path)
    assert f"Line {line} of {str(path)!r}" in message
    assert says in message
    assert re.search(
        r"has [0-9] cells? where the header has [23] \((id, question|question, answer, source)\)", message
    )
    assert "save the file as .jsonl" in message


@pytest.mark.parametrize(
    ("content", "line", "says"),
    [
        (
            'id,question\n1,"Ann has 3 pens.\n2,"Bob has 4."\n3,Cy has 5.\n',
            2,
            "closes a quote with text after it",
        ),
        ('id,question\n1,Ann has 3 pens.\n2,"Bob has 4.\n', 3, "opens a quote that is never closed"),
        ('id,question\n"unterminated,1\n', 2, "opens a quote that is never closed"),
    ],
)
def test_csv_quote_left_open_is_named(tmp_path: Path, content: str, line: int, says: str) -> None:
    message = error_of(write(tmp_path / "quotes.csv", content))
    assert f"the row starting on line {line} {says}" in message
    assert 'written twice: ""' in message


def test_csv_keeps_what_spreadsheets_read_alike(tmp_path: Path) -> None:
    """Quoted separators (after a space too), doubled quotes, line breaks in quotes, blank lines (of
    spaces, and before the header), and empty or blank trailing cells."""
    content = (
        '\nid, question\n1,"Ann has 3 pens, Bob 2."\n\n   \n2,"She said ""hi""\nto 4 friends."\n'
        '3,Cy has 5.,, \n4, "Dan has 6, Eve 7."\n'
    )
    benchmark = load_benchmark(str(write(tmp_path / "fine.csv", content)))
    assert [item.text for item in benchmark.items] == [
        "Ann has 3 pens, Bob 2.",
        'She said "hi"\nto 4 friends.',
        "Cy has 5.",
        "Dan has 6, Eve 7.",
    ]


def test_malformed_jsonl_line_is_named(tmp_path: Path) -> None:
    path = write(tmp_path / "bad.jsonl", '{"question": "ok"}\n\n{"question": "broken\n{"question": "fine"}\n')
    message = error_of(path)
    assert "Line 3" in message
    assert str(path) in message
    assert "not valid JSON" in message
    assert "must be one JSON object" in message


@pytest.mark.parametrize(
    ("line", "kind"), [("[1, 2]", "a list"), ('"just text"', "text"), ("42", "a number"), ("null", "null")]
)
def test_non_object_jsonl_line(tmp_path: Path, line: str, kind: str) -> None:
    path = write(tmp_path / "rows.jsonl", '{"question": "ok"}\n' + line + "\n")
    message = error_of(path)
    assert "Line 2" in message
    assert f"is {kind}, not an object" in message
    assert '{"question": "..."}' in message


def test_json_document_that_is_not_a_list(tmp_path: Path) -> None:
    two_lists = write(tmp_path / "two.json", json.dumps({"train": ROWS, "test": ROWS}))
    message = error_of(two_lists)
    assert "exactly one list" in message
    entry = write(tmp_path / "entry.json", json.dumps([{"question": "ok"}, 5]))
    assert "Entry 2 of" in error_of(entry) and "(counting from 1)" in error_of(entry)


def test_missing_field_lists_the_available_fields(tmp_path: Path) -> None:
    path = write(tmp_path / "q.jsonl", encode(".jsonl", ROWS))
    message = error_of(path, field="query")
    assert "'query'" in message
    assert "id, question, answer" in message
    assert "--field" in message


def test_field_missing_from_a_later_row_names_the_row(tmp_path: Path) -> None:
    path = write(tmp_path / "q.jsonl", '{"question": "one"}\n{"question": "two"}\n{"prompt": "three"}\n')
    message = error_of(path)
    assert "'question'" in message
    assert "line 3 of" in message  # the line of a .jsonl file
    assert "prompt" in message
    assert "--field" in message


@pytest.mark.parametrize(
    ("suffix", "place"),
    [
        (".jsonl", "line 3 of"),  # as an editor shows the file
        (".json", "entry 3 (counting from 1) of"),
    ],  # a CSV or Parquet cell can't hold a number where text should be, nor lack a column
)
def test_every_format_names_the_third_question_as_a_person_counts(
    tmp_path: Path, suffix: str, place: str
) -> None:
    rows = [{"question": "one", "answer": 1}, {"question": "two", "answer": 2}, {"question": 3, "answer": 3}]
    message = error_of(write(tmp_path / f"q{suffix}", encode(suffix, rows)))
    assert place in message, message


def test_no_field_to_guess(tmp_path: Path) -> None:
    path = write(tmp_path / "q.csv", "query,label\nWhat is 2 plus 2?,4\n")
    message = error_of(path)
    assert "Can't tell which field" in message
    assert "query, label" in message
    assert "--field" in message


def test_a_csv_without_a_header_is_named_as_such(tmp_path: Path) -> None:
    """Its first question read as a column's name, the advice to pass it as --field lost it."""
    path = write(tmp_path / "q.csv", "Ann has 12 cats and 40 dogs.\nHow many minutes are in 3 hours?\n")
    message = error_of(path)
    assert "looks like a question, not the columns' names" in message and "Add one above it" in message
    assert message.endswith(
        "If that line is the header, pass --field with the column that holds the questions."
    )
    assert load_benchmark(str(path), field="Ann has 12 cats and 40 dogs.").items[0].text.startswith("How")


@pytest.mark.parametrize(
    ("name", "content", "says"),
    [
        ("q.csv", "id,question,question\n1,first,second\n", r"header of .* \(line 1\) names the field"),
        ("q.jsonl", '{"question": "a"}\n{"question": "first", "question": "second"}\n', "Line 2 of"),
        ("q.json", '[{"question": "a"}, {"question": "first", "id": 1, "question": "second"}]', "Entry 2 "),
    ],
)
def test_a_field_named_twice_is_refused(tmp_path: Path, name: str, content: str, says: str) -> None:
    """Read as its last value, silently: the audit would test another question than a person reads."""
    message = error_of(write(tmp_path / name, content))
    assert re.search(says, message) and "'question' twice" in message, message


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("q.jsonl", '{"question": "How many?", "meta": {"tag": 1, "tag": 2}}\n'),  # nested
        ("q.jsonl", '{"question": "How many?", "tag": 1, "tag": 2}\n'),
        ("q.csv", "id,question,note,note\n1,How many?,a,b\n"),
    ],
)
def test_a_field_named_twice_that_is_not_read_is_no_matter(tmp_path: Path, name: str, content: str) -> None:
    """Neither the question's nor the id's: nothing read changes."""
    assert [item.text for item in load_benchmark(str(write(tmp_path / name, content))).items] == ["How many?"]


def test_a_list_of_questions_named_twice_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path / "q.json", '{"questions": ["How many?"], "questions": ["How far?"]}')
    assert "names 'questions' twice: only the last list of questions" in error_of(path)


def test_a_csv_with_unnamed_columns_twice_is_read(tmp_path: Path) -> None:
    """Trailing separators (a spreadsheet's empty columns) name no column: nothing to refuse."""
    path = write(tmp_path / "q.csv", "id,question,,\n1,How many?,,\n")
    assert [item.text for item in load_benchmark(str(path)).items] == ["How many?"]


def test_field_on_a_txt_file_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path / "q.txt", "How many?\n")
    assert "with no fields for --field to name: leave --field out" in error_of(path, field="question")


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_a_field_that_is_not_text(tmp_path: Path, suffix: str) -> None:
    rows = [{"question": "fine", "answer": 4}, {"question": "also fine", "answer": 5}]
    path = write(tmp_path / f"q{suffix}", encode(suffix, rows))
    message = error_of(path, field="answer")
    assert "'answer'" in message
    assert "holds a number (4), not text" in message  # JSON's word, not Python's "int"
    assert "Pick a text field with --field" in message


@pytest.mark.parametrize("name", ["latin1.jsonl", "latin1.csv", "latin1.txt", "latin1.jsonl.gz"])
def test_non_utf8_bytes(tmp_path: Path, name: str) -> None:
    content = '{"question": "Zoë has 5 apples"}\n' if ".jsonl" in name else "question\nZoë has 5 apples\n"
    path = write(tmp_path / name, content.encode("latin-1"))
    message = error_of(path)
    assert "not UTF-8" in message
    assert "offset" in message
    assert "Convert it to UTF-8" in message


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32", "utf-8-sig"])
@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".txt"])
def test_a_byte_order_mark_says_the_encoding(tmp_path: Path, encoding: str, suffix: str) -> None:
    """Windows saves "Unicode" text as UTF-16 with a BOM, Excel's "CSV UTF-8" as UTF-8 with one."""
    if suffix == ".txt":
        text = "".join(question.replace("\n", " ") + "\n" for question in QUESTIONS)
    else:
        text = encode(suffix, ROWS).decode()
    data = text.encode(encoding)
    if encoding == "utf-16-be":  # Python writes no mark for an explicit byte order
        data = codecs.BOM_UTF16_BE + data
    path = write(tmp_path / f"q{suffix}", data)
    expected = load_benchmark(str(write(tmp_path / f"plain{suffix}", text)))
    assert [item.text for item in load_benchmark(str(path)).items] == [item.text for item in expected.items]


def test_a_byte_order_mark_that_lies_is_named(tmp_path: Path) -> None:
    path = write(tmp_path / "q.jsonl", codecs.BOM_UTF16_LE + b'{"question": "odd"}\n\x00\xd8')
    message = error_of(path)
    assert "not UTF-16 as its byte-order mark says" in message
    assert "Convert it to UTF-8" in message


def test_bad_gzip(tmp_path: Path) -> None:
    path = tmp_path / "plain.jsonl.gz"
    path.write_bytes(encode(".jsonl", ROWS))  # not compressed at all
    message = error_of(path)
    assert str(path) in message
    assert "gzip" in message.lower()
    assert "drop the .gz suffix" in message


def test_truncated_gzip(tmp_path: Path) -> None:
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(gzip.compress(encode(".jsonl", ROWS))[:-10])
    message = error_of(path)
    assert str(path) in message
    assert "complete gzip file" in message


def test_broken_parquet(tmp_path: Path) -> None:
    path = write(tmp_path / "broken.parquet", b"PAR1 this is not really parquet")
    message = error_of(path)
    assert "as Parquet" in message
    assert "convert it to .jsonl" in message


@pytest.mark.parametrize(
    ("name", "shown"), [("q.xml", "'.xml'"), ("q.xml.gz", "'.xml'"), ("questions", "'(none)'")]
)
def test_unsupported_suffix(tmp_path: Path, name: str, shown: str) -> None:
    path = write(tmp_path / name, "question\nWhat?\n")
    message = error_of(path)
    assert f"unsupported type {shown}" in message
    assert ".jsonl, .json, .csv, .txt, .parquet" in message
    assert "gzipped" in message

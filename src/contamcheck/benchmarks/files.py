"""Questions from a local file: .jsonl, .json, .csv, .txt or .parquet, each optionally gzipped."""

from __future__ import annotations

import codecs
import csv
import gzip
import io
import json
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ..errors import InputError
from ._types import Question

SUFFIXES = (".jsonl", ".json", ".csv", ".txt", ".parquet")
GUESSED_FIELDS = ("question", "text", "prompt", "problem")
ID_FIELDS = ("id", "task_id", "question_id", "qid", "uid")

# (where the row is, for messages: "line 3" of a text file, as an editor counts; "entry 3" of a
# JSON list or "row 3" of a Parquet table, counting from 1, as a person does; the row)
Row = tuple[str, dict[str, Any]]
# UTF-32's marks first: UTF-32-LE's starts with UTF-16-LE's
BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def file_format(path: Path) -> tuple[str, bool]:
    """The format of ``path`` from its suffixes, and whether it is gzipped."""
    suffixes = [s.lower() for s in path.suffixes]
    gzipped = bool(suffixes) and suffixes[-1] == ".gz"
    if gzipped:
        suffixes = suffixes[:-1]
    suffix = suffixes[-1] if suffixes else ""
    if suffix not in SUFFIXES:
        raise InputError(
            f"Can't read benchmark file {str(path)!r}: unsupported type {suffix or '(none)'!r}. "
            f"Use one of {', '.join(SUFFIXES)} (optionally gzipped, e.g. questions.jsonl.gz)."
        )
    return suffix, gzipped


Questions = list[Question]


def read_questions(path: Path, field: str | None) -> tuple[Questions, str | None, dict[str, int]]:
    """Read ``(id, text)`` pairs from a file; the id is the file's own, else the 0-based row.

    Returns the pairs, the field used (None for .txt) and counts of rows set aside (empty text).
    """
    suffix, gzipped = file_format(path)
    if not path.is_file():
        raise InputError(f"Benchmark file {str(path)!r} is not a file.")
    if suffix == ".txt":
        if field is not None:
            raise InputError(
                f"{str(path)!r} is a .txt file, one question per line, with no fields for --field to "
                "name: leave --field out, or save the file as .jsonl or .csv with named columns."
            )
        lines = [line.strip() for line in _text(path, gzipped).splitlines()]
        questions = [Question(str(index), line, index) for index, line in enumerate(lines) if line]
        return questions, None, {}
    if suffix == ".parquet":
        rows: Iterable[Row] = _parquet_rows(path, gzipped)
    elif suffix == ".csv":
        rows = _csv_rows(path, gzipped)
    else:
        rows = _json_rows(path, gzipped, suffix)
    rows = list(rows)
    if not rows:
        raise InputError(
            f"Benchmark file {str(path)!r} yields no questions: it holds no rows. "
            "Pass a file with at least one question in it."
        )
    columns = list(rows[0][1])
    if field is None and suffix == ".csv" and not set(GUESSED_FIELDS) & set(columns):
        _no_header(columns, str(path))
    key = field or guess_field(columns, str(path))
    return _extract(rows, key, str(path))


def _no_header(columns: list[str], where: str) -> None:
    """A CSV whose first line reads as a question (four words or more in a cell) has no header: its
    first question would be taken for a column's name, and lost."""
    if any(len(column.split()) >= 4 for column in columns):
        raise InputError(
            f"The first line of {where!r} looks like a question, not the columns' names "
            f"({_preview(', '.join(columns))}): a CSV file starts with a header. Add one above it "
            "(question, or id,question for two columns), or save one question per line as .txt. If "
            "that line is the header, pass --field with the column that holds the questions."
        )


def guess_field(columns: list[str], where: str) -> str:
    for candidate in GUESSED_FIELDS:
        if candidate in columns:
            return candidate
    raise InputError(
        f"Can't tell which field of {where!r} holds the question. "
        f"Pass --field with one of: {', '.join(columns) or '(no fields)'}."
    )


def _extract(rows: list[Row], key: str, where: str) -> tuple[Questions, str, dict[str, int]]:
    id_key = next((k for k in ID_FIELDS if k in rows[0][1] and k != key), None)
    questions: Questions = []
    empty = 0
    for index, (place, row) in enumerate(rows):
        _read_once(row, (key, id_key), place, where)
        if key not in row:
            raise InputError(
                f"Field {key!r} is missing from {place} of {where!r}. "
                f"Fields there: {', '.join(map(str, row)) or '(none)'}. Pick one with --field."
            )
        value = row[key]
        if value is None or (isinstance(value, str) and not value.strip()):
            empty += 1
            continue
        if not isinstance(value, str):
            raise InputError(
                f"Field {key!r} in {place} of {where!r} holds {_kind(value)} "
                f"({_preview(value)}), not text. Pick a text field with --field."
            )
        item_id = row.get(id_key) if id_key else None
        questions.append(Question(str(index) if item_id is None else str(item_id), value, index))
    return questions, key, ({"empty text": empty} if empty else {})


def _preview(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _open_binary(path: Path, gzipped: bool) -> io.BufferedIOBase:
    if gzipped:
        return gzip.open(path, "rb")
    return path.open("rb")


def _text(path: Path, gzipped: bool) -> str:
    try:
        with _open_binary(path, gzipped) as handle:
            data = handle.read()
    except (OSError, EOFError) as exc:  # gzip.BadGzipFile is an OSError
        fix = (
            "Check that it is a complete gzip file, or drop the .gz suffix if it is not compressed."
            if gzipped
            else "Check that the file is readable."
        )
        raise InputError(f"Can't read benchmark file {str(path)!r}: {exc}. {fix}") from None
    # a byte-order mark says the encoding (Windows' "Unicode" text is UTF-16 with one); else UTF-8
    encoding = next((name for mark, name in BOMS if data.startswith(mark)), "utf-8-sig")
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        said = "UTF-8" if encoding == "utf-8-sig" else f"{encoding.upper()} as its byte-order mark says"
        raise InputError(
            f"Benchmark file {str(path)!r} is not {said} (bad byte at offset {exc.start}). "
            "Convert it to UTF-8."
        ) from None


def _json_rows(path: Path, gzipped: bool, suffix: str) -> Iterator[Row]:
    text = _text(path, gzipped)
    if suffix == ".json":
        try:
            data = json.loads(text, object_pairs_hook=_Object.of)
        except json.JSONDecodeError:
            data = None  # perhaps JSON Lines named .json; read it line by line below
        except RecursionError:
            raise InputError(f"{str(path)!r} is not a question file: its JSON nests too deeply.") from None
        if data is not None:
            yield from _json_document_rows(data, str(path))
            return
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line, object_pairs_hook=_Object.of)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"Line {number} of {str(path)!r} is not valid JSON ({exc.msg}, column {exc.colno}). "
                "Each line of a .jsonl file must be one JSON object."
            ) from None
        except RecursionError:
            raise InputError(f"Line {number} of {str(path)!r} nests JSON too deeply.") from None
        if not isinstance(row, dict):
            raise InputError(
                f"Line {number} of {str(path)!r} is {_kind(row)}, not an object "
                '(expected e.g. {"question": "..."}).'
            )
        yield f"line {number}", row


class _Object(dict[str, Any]):
    """A row, and the fields it names twice (``twice``: a JSON object's, or a CSV header's), which
    json and csv read as their last value, silently. ``said`` says where, for a CSV header."""

    twice: frozenset[str] = frozenset()
    said: str | None = None

    @classmethod
    def of(cls, pairs: list[tuple[str, Any]]) -> _Object:
        made = cls(pairs)
        if len(made) < len(pairs):
            made.twice = frozenset(key for index, (key, _) in enumerate(pairs) if key in dict(pairs[:index]))
        return made


def _read_once(row: dict[str, Any], read: tuple[str | None, ...], place: str, where: str) -> None:
    """Refuse a row that names a field it is read by twice (the question's, the id's), so that its
    question is the one a person reads first, not the last of two; other fields may repeat."""
    twice = next((name for name in read if name in getattr(row, "twice", ())), None)
    if twice is not None:
        said = getattr(row, "said", None) or f"{place[0].upper()}{place[1:]} of {where!r}"
        raise InputError(
            f"{said} names the field {twice!r} twice: only the last would be read. Give each field "
            "once, or rename one."
        )


def _json_document_rows(data: Any, where: str) -> Iterator[Row]:
    if isinstance(data, dict):
        repeated = [key for key in getattr(data, "twice", ()) if isinstance(data[key], list)]
        if repeated:
            raise InputError(
                f"{where!r} names {repeated[0]!r} twice: only the last list of questions would be "
                "read. Give it once."
            )
        lists = [value for value in data.values() if isinstance(value, list)]
        if len(lists) != 1:
            raise InputError(
                f"{where!r} is a JSON object; expected a list of questions, or an object with "
                "exactly one list of questions in it."
            )
        data = lists[0]
    if not isinstance(data, list):
        raise InputError(f"{where!r} holds {_kind(data)}; expected a list of questions.")
    for number, row in enumerate(data, start=1):
        if isinstance(row, str):
            row = {"text": row}
        if not isinstance(row, dict):
            raise InputError(f"Entry {number} of {where!r} (counting from 1) is {_kind(row)}, not an object.")
        yield f"entry {number} (counting from 1)", row


def _csv_rows(path: Path, gzipped: bool) -> Iterator[Row]:
    """Rows of a CSV file, refusing one that a spreadsheet would read otherwise than we would.

    A question with the separator in it and no quotes around it would be cut at the separator (a
    row with more cells than the header), and a quote left open would swallow the lines after it:
    both would audit other text than the benchmark's, so both stop with the line to mend.
    """
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    text = _text(path, gzipped)
    header = next((line for line in text.splitlines() if line.strip()), "")
    # a tab- or semicolon-separated file named .csv (Excel writes ';' where ',' is the decimal
    # mark): its header has that separator and no comma, and read with ',' it would be one column
    # whose name holds the separator, and whose questions start with the id
    delimiter = next((d for d in ("\t", ";") if d in header and "," not in header), ",")
    # spaces after a separator are skipped, so `1, "Ann, Bob"` is quoted as a spreadsheet reads it
    reader = csv.reader(
        io.StringIO(text, newline=""), delimiter=delimiter, strict=True, skipinitialspace=True
    )
    where = str(path)
    start = 1  # the line the next row starts on
    columns: list[str] | None = None
    try:
        for cells in reader:
            line = start
            start = reader.line_num + 1
            if not any(cell.strip() for cell in cells):  # a blank line
                continue
            if columns is None:
                columns = cells
                twice = frozenset(cell for cell in cells if cell.strip() and cells.count(cell) > 1)
                header = f"The header of {where!r} (line {line})"
                continue
            surplus = cells[len(columns) :]
            if len(cells) < len(columns) or any(cell.strip() for cell in surplus):
                raise InputError(_cell_count(where, line, len(cells), columns, delimiter))
            row = _Object(zip(columns, cells, strict=False))  # any surplus is blank
            row.twice, row.said = twice, header
            yield f"line {line}", row
    except csv.Error as exc:
        raise InputError(
            f"Can't parse {where!r} as CSV: the row starting on line {start} {_csv_problem(exc)}. "
            'Mend that line (a quote inside a quoted cell is written twice: ""), or save the file '
            "as .jsonl."
        ) from None


def _cell_count(where: str, line: int, cells: int, columns: list[str], delimiter: str) -> str:
    separator = {"\t": "a tab", ";": "a semicolon"}.get(delimiter, "a comma")
    more = cells > len(columns)
    return (
        f"Line {line} of {where!r} has {cells} cell{'s' if cells != 1 else ''} where the header has "
        f"{len(columns)} ({', '.join(columns)}): "
        + (
            f"a cell holding {separator} was not put in double quotes, so it was cut there"
            if more
            else "cells are missing (an empty one is written as nothing between two separators: "
            "a,,c), or a line break in a cell without quotes began a new row"
        )
        + '. Quote every cell that holds the separator or a line break ("like, this"), or save the file '
        "as .jsonl."
    )


def _csv_problem(exc: csv.Error) -> str:
    message = str(exc)
    if "unexpected end of data" in message:
        return "opens a quote that is never closed"
    if "expected after" in message:
        return "closes a quote with text after it"
    return f"can't be read ({message})"


def _parquet_rows(path: Path, gzipped: bool) -> Iterator[Row]:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError("Reading .parquet files needs pyarrow: pip install pyarrow") from None
    try:
        with _open_binary(path, gzipped) as handle:
            table = pq.read_table(handle)
    except Exception as exc:  # pyarrow raises its own ArrowInvalid for a broken file
        raise InputError(
            f"Can't read {str(path)!r} as Parquet: {str(exc).rstrip('.')}. Check that the file is complete, "
            "or convert it to .jsonl or .csv."
        ) from None
    for number, row in enumerate(table.to_pylist(), start=1):
        yield f"row {number} (counting from 1)", row


def _kind(value: object) -> str:
    """What a value is, in JSON's words ("a number", not Python's "a int")."""
    if isinstance(value, bool):
        return "true or false"
    kinds = {str: "text", int: "a number", float: "a number", list: "a list", dict: "an object"}
    for kind, said in kinds.items():
        if isinstance(value, kind):
            return said
    return "null" if value is None else f"a {type(value).__name__}"

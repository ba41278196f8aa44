"""Loading benchmark questions: built-in names, local files and Hugging Face datasets."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from ..errors import InputError, UnknownNameError
from ._types import Benchmark, Item, Question
from .builtin import BUILTINS, BuiltinBenchmark, read_builtin
from .files import SUFFIXES
from .files import read_questions as read_file_questions
from .hf_datasets import parse_spec
from .hf_datasets import read_questions as read_hub_questions

__all__ = ["BUILTINS", "Benchmark", "BuiltinBenchmark", "Item", "load_benchmark"]


SPLIT_NAMES = {"test", "train", "validation", "valid", "val", "dev", "eval"}


def load_benchmark(
    spec: str, field: str | None = None, ordered: bool = True, role: str = "benchmark"
) -> Benchmark:
    """Load a benchmark from a built-in name, a local file, or ``hf:dataset[:config]:split:field``.

    ``ordered`` says whether the rows are in the benchmark's published order (the canonical-order
    test needs that); pass False when the file was shuffled. ``role`` "control" words the errors for
    ``--control``'s questions.
    """
    if not spec or not spec.strip():
        raise InputError(f"The {role} is empty. Pass a built-in name, a file, or an hf: spec.")
    path = Path(spec).expanduser()
    if spec not in BUILTINS and spec.lower() in BUILTINS and not path.exists():
        spec = spec.lower()  # GSM8K and HumanEval name the built-ins too
    if spec in BUILTINS:  # a file or folder of the same name is reached as ./NAME
        builtin = BUILTINS[spec]
        questions, builtin_field, source = read_builtin(builtin, field, role)
        used_field: str | None = builtin_field
        name = spec
        about = {"title": builtin.short_title or spec, "split": builtin.split, "kind": builtin.kind}
    elif spec.startswith("hf:"):
        dataset, config, split, hub_field = parse_spec(spec)
        if field and field != hub_field:
            raise InputError(
                f"--field {field!r} disagrees with the field {hub_field!r} in {spec!r}; give one."
            )
        questions = read_hub_questions(
            dataset, config, split, hub_field, "Download it and pass the local file."
        )
        used_field, source, name = hub_field, f"Hugging Face dataset {dataset} ({split})", dataset
        about = {"title": dataset.split("/")[-1], "split": split, "kind": _guess_kind(questions)}
    elif path.exists() or any(s in SUFFIXES for s in (x.lower() for x in path.suffixes)):
        if not path.exists() and path.is_symlink():  # a link to nothing, or a loop of links
            what = "Control file" if role == "control" else "Benchmark file"
            raise InputError(
                f"{what} {spec!r} is a link that leads to no file (a broken link, or links that point "
                "at each other). Pass the file itself."
            )
        if not path.exists():
            if role == "control":
                raise InputError(f"Control file {spec!r} (--control) does not exist. Check the path.")
            raise InputError(
                f"Benchmark file {spec!r} does not exist. Check the path, or pass a built-in "
                f"benchmark ({', '.join(BUILTINS)})."
            )
        if path.is_dir():
            raise InputError(
                f"{spec!r} is a folder; pass a question file (.jsonl, .json, .csv, .txt, .parquet)."
            )
        try:
            questions, used_field, set_aside = read_file_questions(path, field)
            about = {**_file_title(path), "kind": _guess_kind(questions)}
            return _build(
                path.name, spec, used_field, questions, f"local file {path}", ordered, set_aside, about
            )
        except InputError as exc:
            if role != "control":
                raise
            raise InputError(_for_control(str(exc))) from None
    else:
        raise UnknownNameError(
            role,
            spec,
            BUILTINS,
            hint="Or pass a .jsonl/.json/.csv/.txt/.parquet file, or hf:dataset[:config]:split:field.",
        )
    return _build(name, spec, used_field, questions, source, ordered, {}, about)


def _file_title(path: Path) -> dict[str, str]:
    """How the guided test names a file's dataset: gsm8k/test.jsonl is GSM8K's test split, not "test"."""
    stem = path.name.split(".")[0]
    folder = path.resolve().parent.name
    if stem.lower() in SPLIT_NAMES and folder:
        return {"title": folder, "split": stem.lower()}
    return {"title": stem, "split": "test"}


def _guess_kind(questions: list[Question]) -> str:
    """ "code" when most questions are Python source, else "mixed"."""
    from ..controls.twins import is_python_source

    sample = questions[:50]
    code = sum(is_python_source(q.text) for q in sample)
    return "code" if sample and code > len(sample) / 2 else "mixed"


def _build(
    name: str,
    spec: str,
    field: str | None,
    questions: list[Question],
    source: str,
    ordered: bool,
    set_aside: dict[str, int],
    about: dict[str, str],
) -> Benchmark:
    if not questions:
        raise InputError(
            f"The benchmark {spec!r} yields no questions (every row is empty): nothing to test. "
            "Check the file, or pick the field that holds the questions with --field."
        )
    ids = [question.id for question in questions]
    duplicated = [i for i, count in Counter(ids).items() if count > 1]
    if duplicated:
        # Ids must name one question each; fall back to row numbers rather than guess.
        ids = [str(question.row) for question in questions]
        source += f" (ids not unique, e.g. {duplicated[0]!r}: using row numbers)"
    items = tuple(
        Item(id=i, text=question.text, position=position)
        for position, (i, question) in enumerate(zip(ids, questions, strict=True))
    )
    return Benchmark(
        name=name,
        spec=spec,
        field=field,
        items=items,
        source=source,
        ordered=ordered,
        set_aside=set_aside,
        title=about["title"],
        split=about["split"],
        kind=about["kind"],
    )


def _for_control(message: str) -> str:
    """A file reader's error, worded for ``--control``: its file and its own field option. Only the
    readers' own phrases change (each before a quoted path or after a space), never a path in them."""
    for said, meant in (
        ("Benchmark file '", "Control file '"),
        ("benchmark file '", "control file '"),
        ("The benchmark '", "The control file '"),
        (" --field", " --control-field"),
    ):
        message = message.replace(said, meant)
    return message

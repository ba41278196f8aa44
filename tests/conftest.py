"""Shared fixtures: the bundled sample questions split three ways, and tiny trained models.

The split mirrors the validation experiment in miniature: a benchmark of 60 questions of which 30
leak to the "cheater"; a clean model trained the same way on 30 *other* questions of the same kind;
30 more questions as a control file neither model saw.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import random
from collections.abc import Iterator
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


# The longest test files, longest first (seconds on one of two pinned workers, 2026-12-07, with
# SmolLM2 dequantised once: 883, 379, 127, 111, 93, 71, 67, 50, 49; `bench/suite_timeline.py`). `make
# test` hands out files in this order, so the longest start first and none starts last on one worker
# while the other one idles (the web jobs' file did, 93 s, before it was listed here).
LONGEST_FIRST = (
    "backends/test_server.py",
    "test_slow_smollm2.py",
    "test_experiment_miniature.py",
    "test_resume.py",
    "web/test_jobs.py",
    "test_end_to_end.py",
    "cli/test_cli.py",
    "web/test_browser.py",
    "stats/test_bulk.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    rank = {name: place for place, name in enumerate(LONGEST_FIRST)}

    def place(item: pytest.Item) -> int:
        inside = item.path.is_relative_to(here)
        return rank.get(item.path.relative_to(here).as_posix(), len(rank)) if inside else len(rank)

    items.sort(key=place)  # stable: the other files keep their order


@pytest.fixture(scope="session")
def tiny_setup(tmp_path_factory: pytest.TempPathFactory) -> TinySetup:
    rows = sample_rows()
    rng = random.Random(7)
    rng.shuffle(rows)
    benchmark_rows, other_rows, control_rows = rows[:60], rows[60:90], rows[90:120]
    leaked_ids = {row["id"] for row in rng.sample(benchmark_rows, 30)}
    leaked = [row["question"] for row in benchmark_rows if row["id"] in leaked_ids]
    held_out = [row["question"] for row in benchmark_rows if row["id"] not in leaked_ids]
    with _built_once(tmp_path_factory, "tiny") as root:  # one worker trains them (1.5 min)
        if not (root / "built").exists():
            tokenizer = train_tokenizer([row["question"] for row in rows])
            trained_model_folder(root / "cheater", tokenizer, leaked, epochs=EPOCHS)
            trained_model_folder(
                root / "clean", tokenizer, [r["question"] for r in other_rows], epochs=EPOCHS
            )
            write_jsonl(root / "benchmark.jsonl", benchmark_rows)
            write_jsonl(root / "control.jsonl", control_rows)
            (root / "built").touch()
    return TinySetup(
        benchmark=root / "benchmark.jsonl",
        control=root / "control.jsonl",
        leaked=leaked,
        held_out=held_out,
        cheater=root / "cheater",
        clean=root / "clean",
    )


@pytest.fixture(scope="session")
def smollm2_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache folder holding the packaged SmolLM2's GGUF dequantised, made once and shared by the
    session's workers: each dequantisation took 40-50 s, and the server tests alone made six
    (`servers.sharing_smollm2` puts it in another cache folder, `servers.served_copy` serves it)."""
    with _built_once(tmp_path_factory, "smollm2-cache") as root:
        return servers.dequantised_once(root)


@contextlib.contextmanager
def _built_once(factory: pytest.TempPathFactory, name: str) -> Iterator[Path]:
    """A folder for what the session builds, shared by ``make test``'s workers (the run's temporary
    folder holds one folder per worker), held under a file lock while the block runs: the first
    worker builds, the other waits and finds it built. A folder of its own without workers."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        yield factory.mktemp(name)
        return
    root = factory.getbasetemp().parent / name
    root.mkdir(exist_ok=True)
    with root.with_suffix(".lock").open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        try:
            yield root
        finally:
            fcntl.flock(held, fcntl.LOCK_UN)


@pytest.fixture(autouse=True, scope="session")
def _private_evidence_cache(tmp_path_factory: pytest.TempPathFactory):
    """Tests never touch the user's cache: every test session gets its own."""
    folder = tmp_path_factory.mktemp("cache")
    patcher = pytest.MonkeyPatch()
    patcher.setenv("CONTAMCHECK_CACHE", str(folder))
    yield folder
    patcher.undo()


@pytest.fixture(scope="session")
def vllm_server(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest):
    """The API root of vLLM's server on SmolLM2 (tests/servers.py), started once per session."""
    servers.require_servers()  # before SmolLM2 is dequantised (40-50 s): a skip takes no time
    yield from servers.vllm_server(tmp_path_factory, request.getfixturevalue("smollm2_cache"))


@pytest.fixture(scope="session")
def llama_cpp_server(tmp_path_factory: pytest.TempPathFactory):
    """The API root of llama-cpp-python's server on SmolLM2's GGUF (tests/servers.py)."""
    yield from servers.llama_cpp_server(tmp_path_factory)

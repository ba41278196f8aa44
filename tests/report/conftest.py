"""Real reports to render: audits of the fake backend in each control mode, made once per session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from audits import CHEATER, CODE_QUESTION, HOSTILE_QUESTION, SAMPLE, quick_audit, write_jsonl

from contamcheck import Report


@pytest.fixture(scope="session")
def twin_report() -> Report:
    return quick_audit(CHEATER, "sample", limit=40)


@pytest.fixture(scope="session")
def two_twin_report() -> Report:
    return quick_audit(CHEATER, "sample", limit=30, twins=2)


@pytest.fixture(scope="session")
def control_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rows = [
        {
            "question": f"A train leaves at {7 + i % 5}:{10 + i:02d} and travels {40 + 3 * i} km at "
            f"{60 + i} km/h. A second train leaves {15 + i} minutes later at {80 + i} km/h. "
            f"When does the second train catch up, if it ever does within {i + 2} hours?"
        }
        for i in range(30)
    ]
    return write_jsonl(tmp_path_factory.mktemp("control") / "control.jsonl", rows)


@pytest.fixture(scope="session")
def control_report(control_file: Path) -> Report:
    return quick_audit(CHEATER, "sample", limit=30, control=str(control_file))


@pytest.fixture(scope="session")
def hostile_benchmark(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Questions that are HTML (a script tag) or code (newlines, quotes, commas), with numbers."""
    rows = [
        {"id": f"html-{n}", "question": HOSTILE_QUESTION.format(n=n, a=n + 3, b=n + 2, c=2 * n + 7)}
        for n in range(20)
    ]
    rows += [
        {"id": f"code-{n}", "question": CODE_QUESTION.format(n=n, a=n + 2, b=n + 3, c=n + 6)}
        for n in range(20)
    ]
    return write_jsonl(tmp_path_factory.mktemp("hostile") / "hostile.jsonl", rows)


@pytest.fixture(scope="session")
def hostile_report(hostile_benchmark: Path) -> Report:
    """A model that memorised the hostile questions, so it also writes them back."""
    return quick_audit(f"fake:memorise={hostile_benchmark}", hostile_benchmark, limit=40)


@pytest.fixture(scope="session")
def partial_report(tmp_path_factory: pytest.TempPathFactory) -> Report:
    """A model that memorised a quarter of the sample: the likelihood tests find a tail."""
    rows = [json.loads(line) for line in Path(SAMPLE).read_text(encoding="utf-8").splitlines()]
    seen = write_jsonl(tmp_path_factory.mktemp("partial") / "seen.jsonl", rows[::4])
    return quick_audit(f"fake:memorise={seen}", "sample", tests=["min-k", "zlib"])

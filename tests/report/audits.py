"""Helpers for the report tests: quick audits with the fake backend, and awkward questions."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from contamcheck import AuditConfig, Report, audit

SAMPLE = str(resources.files("contamcheck.benchmarks").joinpath("data/sample.jsonl"))
CHEATER = f"fake:memorise={SAMPLE}"
HOSTILE_QUESTION = (
    "<script>alert({n})</script> A shop sells {a} apples at ${b}.50 each and {c} pears. How many fruits?"
)
CODE_QUESTION = (
    'def add_{n}(a, b):\n    """Return a + b + {a}, as in "sum, plus {a}".\n\n'
    '    >>> add_{n}(1, {b})\n    {c}\n    """\n    return a + b + {a}\n'
)


def write_jsonl(path: Path, rows: list[dict[str, str]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def quick_audit(model: str, benchmark: str | Path, **options: object) -> Report:
    config = AuditConfig(
        model=model,
        benchmark=str(benchmark),
        no_cache=True,
        permutations=2000,
        **options,  # type: ignore[arg-type]
    )
    return audit(config)

"""Every JSON report the docs publish still reads with this version's report model.

The validation tables and the example are read back by `contamcheck report` and by the experiments
(`experiments/reanalyse.py` and others); a field renamed in the model must not strand them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contamcheck.report import read_report

ROOT = Path(__file__).resolve().parents[1]


def saved_reports() -> list[Path]:
    reports = []
    for path in sorted((ROOT / "docs").rglob("*.json")):
        with path.open(encoding="utf-8") as handle:
            head = handle.read(400)
        if '"tool": "contamcheck"' in head:
            reports.append(path)
    return reports


def test_the_docs_publish_reports():
    assert len(saved_reports()) >= 70  # the validation audits and the example


@pytest.mark.parametrize("path", saved_reports(), ids=lambda p: str(p.relative_to(ROOT / "docs")))
def test_a_published_report_reads_back(path: Path):
    report = read_report(path)
    assert report.items and report.tests
    assert json.loads(path.read_text(encoding="utf-8"))["schema_version"] == report.schema_version

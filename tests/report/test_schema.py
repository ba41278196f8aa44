"""The report's published JSON Schema: the committed copy is this version's, and real reports (the
example in docs/, fresh audits in each control mode) validate against it with an independent
validator; edits a reader must refuse fail it."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from contamcheck.report import to_json
from contamcheck.report.schema import report_schema

DOCS = Path(__file__).parents[2] / "docs"


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = json.loads((DOCS / "report.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_the_committed_schema_is_this_versions():
    committed = json.loads((DOCS / "report.schema.json").read_text(encoding="utf-8"))
    regenerate = "python -m contamcheck.report.schema > docs/report.schema.json"
    assert committed == report_schema(), f"docs/report.schema.json is out of date: {regenerate}"
    printed = subprocess.run(
        [sys.executable, "-m", "contamcheck.report.schema"], capture_output=True, text=True, check=True
    )
    assert json.loads(printed.stdout) == committed


@pytest.mark.parametrize("name", ["twin_report", "two_twin_report", "control_report", "partial_report"])
def test_real_reports_validate(validator, name, request):
    report = json.loads(to_json(request.getfixturevalue(name)))
    assert list(validator.iter_errors(report)) == []


def test_the_example_report_validates_and_edits_out_of_range_do_not(validator):
    example = json.loads((DOCS / "example" / "report.json").read_text(encoding="utf-8"))
    assert list(validator.iter_errors(example)) == []
    broken = {
        "a rate above 1": lambda r: r["tests"][0].update(flag_rate=5.0),
        "an unknown verdict": lambda r: r["verdict"].update(code="maybe"),
        "a field that is not in the schema": lambda r: r.update(score=99),
        "a missing field": lambda r: r.pop("benchmark"),
    }
    for what, edit in broken.items():
        edited = copy.deepcopy(example)
        edit(edited)
        assert list(validator.iter_errors(edited)), what

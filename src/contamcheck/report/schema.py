"""The JSON Schema of a saved report (``--json``, ``--output``, ``to_json``), for whoever reads one
without contamcheck: a CI step, a dashboard. ``python -m contamcheck.report.schema`` prints it;
docs/report.schema.json is its copy for this version (a test keeps the two the same).

It is the report model's own schema as written (pydantic's serialization schema, JSON Schema 2020-12),
so it says each field's type, range and description; ``read_report`` checks more than a schema can
(that the verdict follows from the tests, that a flag count agrees with its rate).
"""

from __future__ import annotations

import json
from typing import Any

from .model import SCHEMA_VERSION, Report

DIALECT = "https://json-schema.org/draft/2020-12/schema"


def report_schema() -> dict[str, Any]:
    schema = Report.model_json_schema(mode="serialization")
    return {
        "$schema": DIALECT,
        "title": f"contamcheck report, schema {SCHEMA_VERSION}",
        **{key: value for key, value in schema.items() if key != "title"},
    }


def main() -> None:
    print(json.dumps(report_schema(), indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()

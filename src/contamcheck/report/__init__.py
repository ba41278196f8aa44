"""The report model and its renderings (terminal, JSON, CSV, HTML).

``to_html`` imports Jinja2 and matplotlib only when called, so importing this package stays light.
"""

from .csv_report import to_csv
from .html_report import to_html
from .io import read_report, to_json
from .model import SCHEMA_VERSION, Report

__all__ = ["SCHEMA_VERSION", "Report", "read_report", "to_csv", "to_html", "to_json"]

"""The report model and its renderings (terminal, JSON, CSV, HTML)."""

from .model import SCHEMA_VERSION, Report

__all__ = ["SCHEMA_VERSION", "Report"]

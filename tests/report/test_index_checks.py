"""The saved report's index check against what the index itself computes, at its band's edges."""

from __future__ import annotations

from types import SimpleNamespace

from contamcheck.report.checks import _index
from contamcheck.stats.index import evidence_index


def _result(name: str, status: str, flag_rate: float = 0.0, calibrated: bool = True) -> SimpleNamespace:
    return SimpleNamespace(
        name=name,
        kind="paired" if name == "completion" else "bulk",
        calibrated=calibrated,
        status=status,
        flag_rate=flag_rate,
        expected_rate=0.05,
        aggregate_evidence=False,
    )


def test_an_index_of_exactly_045_keeps_the_band_it_was_given():
    """0.3 x 0.7733 + 0.15 x 0.8533 over 0.8 is 0.45 on paper and 0.4499999... in floating point:
    banded "moderate" before rounding, saved as 0.45, which reads "high" (a real audit crashed)."""
    tests = [
        _result("completion", "fail", 9 / 50),
        _result("min-k", "pass"),
        _result("min-k++", "fail", 12 / 50),
        _result("zlib", "pass"),
        _result("guided", "pass", calibrated=False),
        _result("canonical-order", "pass"),
    ]
    index = evidence_index(tests, "likely")  # type: ignore[arg-type]
    assert index.value == 0.45 and index.band == "moderate"
    report = SimpleNamespace(index=index, verdict=SimpleNamespace(code="likely"), tests=tests)
    assert _index(report) is None  # type: ignore[arg-type]
    edited = SimpleNamespace(
        index=SimpleNamespace(**{**vars(index), "band": "low"}), verdict=report.verdict, tests=tests
    )
    assert "is not what its components weigh" in (_index(edited) or "")  # type: ignore[arg-type]


def test_an_audit_whose_report_breaks_a_rule_says_so_not_internal_error(monkeypatch, capsys):
    from contamcheck.cli import main

    monkeypatch.setattr("contamcheck.report.checks.contradiction", lambda report: "a rule missed a case")
    assert main(["fake:clean", "sample", "-n", "20", "--no-cache", "--quick"]) == 3
    err = capsys.readouterr().err
    assert "breaks one of its own rules (a rule missed a case: edited after the audit)" in err
    assert "Internal error" not in err and "Traceback" not in err

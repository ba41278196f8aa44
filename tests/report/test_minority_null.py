"""A bulk null holding a minority of the questions: no flags and no tail count, said everywhere.

Most of the benchmark memorised (70% of the sample) leaves the never-seen questions a minority, the
same shape a skewed clean bulk split in the wrong place gives (docs/METHODS.md, "A minority null").
The likelihood tests must not flag or count there; completion, which needs no null, still sees it.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from audits import SAMPLE, quick_audit, write_jsonl
from rich.console import Console

from contamcheck import Report
from contamcheck.report import to_html
from contamcheck.report.csv_report import to_csv
from contamcheck.report.terminal import render
from contamcheck.stats.bulk import MINORITY_BULK, BulkFit, minority
from contamcheck.stats.spread import SMALL_EFFECT, carries

TESTS = ["completion", "min-k", "zlib"]


@pytest.fixture(scope="module")
def mostly_seen(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rows = [json.loads(line) for line in Path(SAMPLE).read_text(encoding="utf-8").splitlines()]
    seen = [row for index, row in enumerate(rows) if index % 10 < 7]  # 70% of the questions
    return write_jsonl(tmp_path_factory.mktemp("mostly") / "seen.jsonl", seen)


@pytest.fixture(scope="module")
def alone(mostly_seen: Path) -> Report:
    return quick_audit(f"fake:memorise={mostly_seen}", "sample", tests=TESTS)


@pytest.fixture(scope="module")
def with_reference(mostly_seen: Path) -> Report:
    return quick_audit(f"fake:memorise={mostly_seen}", "sample", tests=TESTS, reference="fake:clean")


def _withheld(report: Report) -> list[str]:
    return [t.name for t in report.tests if t.null is not None and t.null.count_withheld]


def test_the_rule_is_a_share_under_forty_percent_of_a_two_component_fit() -> None:
    assert minority(BulkFit(0.0, 1.0, MINORITY_BULK - 0.01, 2))
    assert not minority(BulkFit(0.0, 1.0, MINORITY_BULK, 2))
    assert not minority(BulkFit(0.0, 1.0, 1.0, 1))


def test_without_a_count_the_spread_test_alone_decides_whether_it_carries() -> None:
    assert carries(None, 0.001, SMALL_EFFECT, count_withheld=True)
    assert not carries(None, 0.001, SMALL_EFFECT - 0.01, count_withheld=True)
    assert not carries(None, None, None, count_withheld=True)
    assert not carries(None, 0.001, SMALL_EFFECT)  # an old report with no count keeps the old reading


def test_without_a_reference_the_likelihood_tests_neither_flag_nor_count(alone: Report) -> None:
    withheld = _withheld(alone)
    assert withheld == ["min-k", "zlib"], [(t.name, t.null) for t in alone.tests]
    for name in withheld:
        result = next(t for t in alone.tests if t.name == name)
        assert result.null is not None and result.null.bulk_share < MINORITY_BULK
        assert result.status == "skipped" and result.p_value is None and result.flag_rate is None
        assert result.skip_reason is not None and f"holds {result.null.bulk_share:.0%}" in result.skip_reason
        entries = [item.tests[name] for item in alone.items if name in item.tests]
        assert entries and all(e.flagged is None and e.p_memorised is None for e in entries)
        assert sum(e.score is not None for e in entries) == result.n  # the scores stay, for a reader
    completion = next(t for t in alone.tests if t.name == "completion")
    assert completion.status == "fail"
    assert alone.verdict.code == "likely"
    assert any("min-k and zlib: the never-seen bulk holds under 40%" in note for note in alone.caveats)


def test_with_a_reference_the_spread_test_is_the_p_value(with_reference: Report) -> None:
    withheld = [t for t in with_reference.tests if t.name in _withheld(with_reference)]
    assert withheld, [(t.name, t.null) for t in with_reference.tests]
    for result in withheld:
        null = result.null
        assert null is not None and null.spread_p_value is not None
        assert result.p_value == null.spread_p_value  # one statistic: not doubled
        assert result.flag_rate is None and result.n_flagged == 0
        assert result.aggregate_evidence == (null.spread_correlation >= SMALL_EFFECT)
        assert result.note is not None and result.note.startswith("No flags and no tail count")


def test_every_output_says_no_flags(alone: Report, with_reference: Report) -> None:
    console = Console(width=200, record=True, color_system=None)
    render(with_reference, console)
    text = console.export_text()
    (name,) = _withheld(with_reference)[:1]
    assert f"{name}: no flags (the never-seen bulk holds" in text
    html = to_html(with_reference)
    assert "none: withheld" in html and "too few for the null" in html
    skipped_html = to_html(alone)
    assert "too few to be the null of questions never seen" in skipped_html  # the fit is still drawn
    rows = list(csv.DictReader(io.StringIO(to_csv(alone))))
    scored = [row for row in rows if row["min-k_score"]]
    assert scored and all(row["min-k_flagged"] == "" for row in scored)


def test_a_quiet_audit_with_a_test_that_could_not_judge_is_inconclusive(tmp_path: Path) -> None:
    """80 questions of two kinds, 24 and 56: min-k++, by the scripted clean model, fits a never-seen
    bulk of the 24 below the rest, under 40% of them; min-k and zlib find nothing. Before 2026-12-05
    such a shape read "likely contaminated" (tests/cli/test_cli.py); silence elsewhere is not "clean"."""
    tom = "Tom has {} apples and {} plums in {} baskets. How many fruits does Tom have?"
    bakery = "A bakery sells {} loaves a day at {} cents each over {} days. What is the total?"
    rows = [{"question": tom.format(12 + i, 30 + 2 * i, 2 + i % 8)} for i in range(24)]
    rows += [{"question": bakery.format(40 + i, 15 + i, 2 + i % 7)} for i in range(56)]
    kinds = write_jsonl(tmp_path / "two-kinds.jsonl", rows)
    report = quick_audit("fake:clean", kinds, tests=["min-k", "min-k++", "zlib"])
    assert _withheld(report) == ["min-k++"], [(t.name, t.null) for t in report.tests]
    assert [t.status for t in report.tests if t.name != "min-k++"] == ["pass", "pass"]
    assert report.verdict.code == "inconclusive" and report.verdict.exit_code == 4
    assert "min-k++ could not judge" in report.verdict.explanation
    assert report.index.value is None and "inconclusive" in report.index.explanation
    html = to_html(report)
    assert "withheld" in html  # its scores still rank the most familiar questions
    # a withheld test has no threshold: its rows compare with the twin, not with "bulk's threshold –"
    rows = html.split('id="familiar"')[-1]
    assert "bulk&#39;s threshold</span> –" not in rows and "bulk's threshold</span> –" not in rows


def test_a_withheld_test_survives_the_json_round_trip(with_reference: Report, tmp_path: Path) -> None:
    from contamcheck.report.io import read_report, to_json

    path = tmp_path / "report.json"
    path.write_text(to_json(with_reference), encoding="utf-8")
    again = read_report(path)
    assert _withheld(again) == _withheld(with_reference) != []
    assert to_html(again) == to_html(with_reference) and to_csv(again) == to_csv(with_reference)


def test_a_withheld_test_is_not_called_one_bulk_nor_its_questions_unscored(with_reference: Report) -> None:
    from contamcheck.pipeline.assemble import whole_benchmark_caveat

    quiet = [t.model_copy(update={"status": "pass"}) if t.kind == "bulk" else t for t in with_reference.tests]
    note = whole_benchmark_caveat(quiet)
    withheld = _withheld(with_reference)
    others = [t.name for t in quiet if t.kind == "bulk" and t.name not in withheld]
    assert note is not None and all(name not in note.split(".")[0] for name in withheld), note
    assert all(name in note for name in others)
    html = to_html(with_reference)
    assert '<span class="flag-no">withheld</span>' in html  # the most familiar questions' table
    # as audited, the withheld test went beyond chance on its spread: no "one bulk" note beside that
    assert any(t.count_withheld and t.status in ("warn", "fail") for t in with_reference.tests)
    assert whole_benchmark_caveat(with_reference.tests) is None
    (caveat,) = [note for note in with_reference.caveats if "never-seen bulk holds under" in note]
    assert "spread test against the twins still is" in caveat and "--reference MODEL" not in caveat

"""A tail that stands out with its twins is familiarity, not memorised questions: no flags, said everywhere.

The scripted model learned 30% of the sample's questions with other numbers (text of the same kind,
as a model trained on similar problems knows some templates of a benchmark better than its
reference does): question and twin gain alike, and, judged against a reference that never saw
either, the likelihood tests find a tail of about 30% beyond the bulk (they failed on it before
2026-12-06). The same questions learned as they are gain over their twins and are caught.
docs/METHODS.md, "A tail its twins share".
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest
from audits import SAMPLE, write_jsonl
from rich.console import Console

from contamcheck import AuditConfig, Report, audit
from contamcheck.report import to_html
from contamcheck.report.io import read_report, to_json
from contamcheck.report.terminal import render
from contamcheck.stats.spread import TWINS_BACK

TESTS = ["min-k", "min-k++", "zlib"]


def _rows() -> list[dict[str, str]]:
    return [json.loads(line) for line in Path(SAMPLE).read_text(encoding="utf-8").splitlines()]


def _audit(memorised: Path, reference: str = "fake:clean") -> Report:
    config = AuditConfig(
        model=f"fake:memorise={memorised}",
        benchmark="sample",
        reference=reference,
        tests=TESTS,
        permutations=5000,  # enough for alpha / 3: a quiet audit reads "no evidence", not "inconclusive"
        no_cache=True,
    )
    return audit(config)


def _renumbered(folder: Path) -> Path:
    rng = random.Random(0)
    renumbered = [
        dict(
            row, question=re.sub(r"\d+", lambda m: str(int(m.group()) + rng.randint(11, 97)), row["question"])
        )
        for index, row in enumerate(_rows())
        if index % 10 < 3
    ]
    return write_jsonl(folder / "similar.jsonl", renumbered)


def _same(folder: Path) -> Path:
    return write_jsonl(folder / "seen.jsonl", [row for index, row in enumerate(_rows()) if index % 10 < 3])


@pytest.fixture(scope="module")
def kind(tmp_path_factory: pytest.TempPathFactory) -> Report:
    return _audit(_renumbered(tmp_path_factory.mktemp("kind")))


@pytest.fixture(scope="module")
def seen(tmp_path_factory: pytest.TempPathFactory) -> Report:
    return _audit(_same(tmp_path_factory.mktemp("seen")))


def test_a_kind_the_model_knows_better_is_not_called_contamination(kind: Report) -> None:
    for result in kind.tests:
        null = result.null
        assert null is not None and null.tail_p_value is not None and null.spread_p_value is not None
        assert null.tail_p_value < 1e-6  # the tail is there: the count alone called it "likely"
        assert null.withheld_because == "twins" and result.shared_with_twins, (result.name, null)
        assert null.spread_p_value >= TWINS_BACK and result.p_value == null.spread_p_value  # not doubled
        assert result.status == "pass" and result.flag_rate is None and result.n_flagged == 0
        entries = [item.tests[result.name] for item in kind.items if result.name in item.tests]
        assert entries and all(e.flagged is None and e.p_memorised is None for e in entries)
        assert result.note is not None and "stands out with its twins" in result.note
        assert null.tail_gain_p_value is not None and null.tail_gain_p_value >= TWINS_BACK / 2
    assert kind.verdict.code == "clean", kind.verdict.explanation
    assert (
        "min-k, min-k++ and zlib found questions above the never-seen bulk, standing out with their twins"
        in (kind.verdict.explanation)
    )


def test_the_same_questions_memorised_are_caught(seen: Report) -> None:
    assert seen.verdict.code == "likely", seen.verdict.explanation
    for result in seen.tests:
        null = result.null
        assert null is not None and null.withheld_because is None and not result.count_withheld
        assert null.spread_p_value is not None and null.spread_p_value < TWINS_BACK
        assert result.flag_rate is not None and result.flag_rate > 0.2


def test_every_output_says_why(kind: Report, tmp_path: Path) -> None:
    console = Console(width=200, record=True, color_system=None)
    render(kind, console)
    text = console.export_text()
    assert "min-k: no flags (a tail of at least" in text and "stands out with its twins" in text
    (caveat,) = [note for note in kind.caveats if "stand out with their twins" in note]
    assert all(name in caveat for name in TESTS) and "--control FILE" in caveat
    assert (
        "better than the reference does" in caveat
        and "the spread test against the twins still judges" in caveat
    )
    assert not any("never-seen bulk holds under" in note for note in kind.caveats)  # not a minority
    html = to_html(kind)
    assert "better than the reference does" in html
    assert "Tail beyond the bulk" in html and "none: withheld" in html and "too few for the null" not in html
    assert "familiarity, not memorised questions" in html
    assert "min-k, min-k++ and zlib flagged none because the questions above their bulk stand out" in html
    path = tmp_path / "report.json"
    path.write_text(to_json(kind), encoding="utf-8")
    again = read_report(path)
    assert [t.null.withheld_because for t in again.tests if t.null] == ["twins"] * 3
    assert to_html(again) == html


def test_a_tail_of_questions_without_twins_is_not_taken_for_familiarity(tmp_path: Path) -> None:
    """--twinless with a reference: the twins can speak only for the questions that have one. Here
    the sample (with twins) and 40 questions without numbers, 12 of which the model memorised: the
    tail is those 12, and the twins, which none of them has, must not withhold it (found by review)."""
    words = []
    for row in _rows()[:40]:
        text = re.sub(r"\s+", " ", re.sub(r"[\d$%.,]*\d", "some", row["question"])).strip()
        words.append({"question": f"In words: {text}"})
    benchmark = write_jsonl(tmp_path / "mixed.jsonl", [{"question": r["question"]} for r in _rows()] + words)
    memorised = write_jsonl(tmp_path / "memorised.jsonl", words[:12])
    config = AuditConfig(
        model=f"fake:memorise={memorised}",
        benchmark=str(benchmark),
        reference="fake:clean",
        tests=TESTS,
        twinless=True,
        limit=160,
        permutations=5000,
        no_cache=True,
    )
    report = audit(config)
    assert not any(t.shared_with_twins for t in report.tests), [(t.name, t.null) for t in report.tests]
    assert report.verdict.code in ("evidence", "likely"), report.verdict.explanation


def test_without_a_reference_a_kind_is_cleared_by_its_twins_and_the_questions_seen_are_caught(
    tmp_path: Path,
) -> None:
    """Without a reference the rule holds too (2026-12-06, evening): the spread test leans toward a
    gain there (never-seen originals spread more than their twins), so it may clear a tail, never
    condemn one. The kind read "likely contaminated" before; the questions seen still do."""
    kind = _audit(_renumbered(tmp_path), reference="none")
    for result in kind.tests:
        null = result.null
        assert null is not None and null.tail_p_value is not None and null.tail_p_value < 1e-6
        assert null.withheld_because == "twins" and result.status == "pass", (result.name, null)
        # no spread test in the JSON: without a reference it is no evidence of its own
        assert null.spread_p_value is None and not result.aggregate_evidence
        assert result.p_value is not None and result.p_value >= max(null.tail_p_value, TWINS_BACK / 2)
        assert result.note is not None and "it can clear a tail, not condemn one" in result.note
        assert "especially well" in result.note and "reference does" not in result.note
    assert kind.verdict.code == "clean", kind.verdict.explanation
    # every output says so in the words of this setting: no reference to compare with, and the spread
    # test clears, never judges alone (review found the reference setting's words printed here)
    (caveat,) = [note for note in kind.caveats if "stand out with their twins" in note]
    assert "larger of its tail count's and its spread test's" in caveat and "still judges" not in caveat
    html = to_html(kind)
    assert "kind of text especially well: familiarity" in html
    assert "better than the reference" not in html and "with a reference:" not in html
    seen = _audit(_same(tmp_path), reference="none")
    assert seen.verdict.code == "likely", seen.verdict.explanation
    for result in seen.tests:
        null = result.null
        assert null is not None and null.withheld_because is None and null.spread_p_value is None
        assert null.tail_gain_p_value is None  # backed: the twins only ever clear a tail without one
        assert result.flag_rate is not None and result.flag_rate > 0.15


def test_a_model_that_saw_nothing_stays_at_chance_on_a_templated_benchmark(tmp_path: Path) -> None:
    """fake:clean, offered for trying the tool, read "likely contaminated" (min-k: 38% flagged, exit 1)
    on a benchmark of one template without a reference: its scores clump by template, and the twins
    clumped with them (found by a new user's black-box pass)."""
    rng = random.Random(2)
    rows = [
        {
            "question": f"Sam has {rng.randint(10, 999)} marbles and {rng.randint(10, 999)} cards; question "
            f"number {i} asks how many items there are after {rng.randint(10, 99)} more arrive."
        }
        for i in range(300)
    ]
    path = write_jsonl(tmp_path / "template.jsonl", rows)
    report = audit(AuditConfig(model="fake:clean", benchmark=str(path), quick=True, no_cache=True))
    assert report.verdict.code == "clean", report.verdict.explanation
    (min_k,) = [t for t in report.tests if t.name == "min-k"]
    assert min_k.shared_with_twins and min_k.n_flagged == 0

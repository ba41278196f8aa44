"""The standalone HTML report: one self-contained file, every text escaped, a figure per test."""

from __future__ import annotations

import io
import math
import re
import warnings
from collections import Counter
from html.parser import HTMLParser

import pytest
from markupsafe import escape

from contamcheck.report import Report, to_html
from contamcheck.report.html_report import _probability, format_p, highlight_differences


class Page(HTMLParser):
    """Tags, ids and every attribute value of a page, as a browser's parser sees them."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: Counter[str] = Counter()
        self.ids: list[str] = []
        self.attributes: list[tuple[str, str, str]] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags[tag] += 1
        for name, value in attrs:
            self.attributes.append((tag, name, value or ""))
            if name == "id" and value:
                self.ids.append(value)


def sections(html: str) -> dict[str, str]:
    """Each test's <article>, by test name."""
    parts = re.split(r'<article class="test" id="test-', html)[1:]
    return {part.split('"', 1)[0]: part.split("</article>", 1)[0] for part in parts}


@pytest.mark.parametrize("fixture", ["twin_report", "control_report", "hostile_report"])
def test_one_standalone_file_that_fetches_nothing(fixture, request):
    html = to_html(request.getfixturevalue(fixture))
    page = Page(html)
    assert html.startswith("<!DOCTYPE html>") and page.tags["html"] == 1
    assert page.tags["style"] >= 1 and "@media print" in html
    assert page.tags["script"] == 0 and page.tags["link"] == 0 and page.tags["img"] == 0
    for tag, name, value in page.attributes:
        assert name not in ("src", "srcset", "xlink:href"), (tag, name, value)
        if name == "href":
            assert value.startswith("#"), (tag, value)  # links inside the page only
    assert not re.search(r"url\(\s*['\"]?(?!#)", html)  # CSS/SVG urls point inside the page
    assert "@import" not in html
    # None of these reports' text has a web address, so none may appear at all (namespaces included).
    assert "http://" not in html and "https://" not in html


def test_ids_are_unique_and_rendering_is_deterministic(twin_report):
    html = to_html(twin_report)
    ids = Page(html).ids
    assert len(ids) == len(set(ids)), [i for i, n in Counter(ids).items() if n > 1]
    assert to_html(twin_report) == html


def test_verdict_index_and_sections_in_order(twin_report):
    html = to_html(twin_report)
    verdict = twin_report.verdict
    assert f'class="verdict verdict-{verdict.code}"' in html
    assert verdict.label in html
    headings = ["Evidence index", "Tests", "Most familiar questions", "Caveats and warnings"]
    headings.append("Reproducibility")
    positions = [html.index(f">{heading}</h2>") for heading in headings]
    assert positions == sorted(positions) and html.index(verdict.label) < positions[0]
    assert f"{twin_report.index.value:.2f}" in html
    for component in twin_report.index.components:
        assert f'href="#test-{component.test}"' in html
    assert "Strength is read off each test's status" in html  # the column says what it holds


def test_each_median_tile_says_what_it_is_the_median_of(twin_report):
    from contamcheck.report.html_report import _facts

    labels = {
        result.name: [label for label, _ in _facts(result)[0] if label.startswith("Median")]
        for result in twin_report.tests
    }
    assert labels["guided"] == ["Median guided − general"]  # it read "Median difference from twin"
    assert labels["min-k"] == ["Median above twin"] and labels["completion"] == [
        "Median difference from twin"
    ]


def test_an_inconclusive_report_shows_no_index_table(twin_report):
    """ "n/a" above a table of weights that "count" read as a contradiction."""
    verdict = twin_report.verdict.model_copy(
        update={"code": "inconclusive", "label": "Inconclusive", "exit_code": 4}
    )
    index = twin_report.index.model_copy(update={"band": "n/a", "value": None})
    html = to_html(twin_report.model_copy(update={"verdict": verdict, "index": index}))
    assert "<th>Counts?</th>" not in html and "Strength is read off" not in html


def test_each_test_has_its_section_and_each_test_that_ran_a_figure(twin_report, control_report):
    for report in (twin_report, control_report):
        html = to_html(report)
        by_name = sections(html)
        assert list(by_name) == [t.name for t in report.tests]
        for result in report.tests:
            section = by_name[result.name]
            assert str(escape(result.measures)) in section
            assert (section.count("<svg") == 1) == (result.status != "skipped"), result.name
            if result.p_adjusted is not None and result.status != "skipped":
                assert format_p(result.p_adjusted) in section
        assert html.count("<svg") == sum(1 for t in report.tests if t.status != "skipped")


def test_control_file_figures_compare_with_the_controls(control_report):
    section = sections(to_html(control_report))["min-k"]
    assert "null: control-file questions" in section and "controls&#39; 95th percentile" in section


def test_a_hostile_question_is_shown_as_text(hostile_report):
    html = to_html(hostile_report)
    assert "<script>alert" not in html and "</script>" not in html
    assert "&lt;script&gt;alert(" in html
    assert Page(html).tags["script"] == 0
    # the model's own output (it memorised the questions, markup included) is escaped too
    written = [
        entry.general_generated
        for item in hostile_report.items
        for entry in item.tests.values()
        if entry.general_generated and "</script>" in entry.general_generated
    ]
    assert written, "the fake model should have written some of the markup back"
    assert any(str(escape(text)) in html for text in written)  # only the top questions are shown
    assert not any(text in html for text in written)


def test_familiar_questions_show_original_twin_and_what_the_model_wrote(twin_report):
    html = to_html(twin_report)
    familiar = html.split('id="familiar"', 1)[1].split('id="caveats"', 1)[0]
    assert 1 <= familiar.count('class="question"') <= 10
    assert "<mark>" in familiar and "Twin" in familiar
    assert "continuing the first half" in familiar and "general instruction" in familiar
    calibrated = [t.name for t in twin_report.tests if t.calibrated and t.kind != "aggregate"]

    def flags(item_id: str) -> int:
        item = next(i for i in twin_report.items if i.id == item_id)
        return sum(bool(item.tests[name].flagged) for name in calibrated if name in item.tests)

    shown = re.findall(r'<strong class="break">(.*?)</strong>', familiar)
    assert flags(shown[0]) == max(flags(item.id) for item in twin_report.items)
    assert [flags(i) for i in shown] == sorted((flags(i) for i in shown), reverse=True)


def test_a_bulk_test_with_a_tail_says_how_likely_each_question_is_memorised(partial_report, twin_report):
    familiar = to_html(partial_report).split('id="familiar"', 1)[1].split('id="caveats"', 1)[0]
    # the memorised quarter leads the list, flagged, each (almost) certainly the tail's
    questions = familiar.split('class="question"')[1:]
    assert questions and all(
        q.count("P(memorised) 0.9") + q.count("P(memorised) 1.00") == 2 for q in questions
    )
    # no tail (everything memorised, so no bulk apart from it): no probability is claimed
    assert "P(memorised)" not in to_html(twin_report).split('id="familiar"', 1)[1]


def test_a_probability_just_under_the_flag_s_is_not_shown_as_it():
    assert _probability(0.7996) == "0.79" and _probability(0.8) == "0.80" and _probability(None) == ""


def test_differing_numbers_are_marked_and_everything_escaped():
    original, twin = highlight_differences("If <b>3</b> & 12 apples", "If <b>5</b> & 12 apples")
    assert str(original) == "If &lt;b&gt;<mark>3</mark>&lt;/b&gt; &amp; 12 apples"
    assert str(twin) == "If &lt;b&gt;<mark>5</mark>&lt;/b&gt; &amp; 12 apples"


def test_only_the_numbers_a_twin_changed_are_marked_where_small_numbers_repeat():
    """An alignment paired a twin's 8 with an 8 elsewhere and marked the words between (HumanEval/126,
    found by a new user's black-box pass): a twin is compared token for token."""
    question = "is_sorted([1, 2, 3, 4, 5]) ➞ True\nis_sorted([1, 3, 2, 4, 5]) ➞ False"
    twin = "is_sorted([1, 8, 2, 3, 9]) ➞ True\nis_sorted([1, 3, 8, 4, 2]) ➞ False"
    original, changed = highlight_differences(question, twin)
    assert re.findall(r"<mark>(.*?)</mark>", str(original)) == ["2", "3", "4", "5", "2", "5"]
    assert re.findall(r"<mark>(.*?)</mark>", str(changed)) == ["8", "2", "3", "9", "8", "2"]
    shifted, _ = highlight_differences("Tom has 3 apples", "Tom has 1,250 red apples")  # not token for token
    assert "<mark>" in str(shifted)


def test_reproducibility_block_carries_what_a_rerun_needs(twin_report: Report):
    block = to_html(twin_report).split('id="reproducibility"', 1)[1]
    for value in (
        twin_report.model.identity,
        twin_report.benchmark.content_hash,
        twin_report.benchmark.source,
        str(twin_report.settings.permutations),
        twin_report.versions["contamcheck"],
        twin_report.run.host,
    ):
        assert value in block


def test_a_setting_older_reports_lack_is_left_out_not_shown_as_none(twin_report: Report):
    older = twin_report.model_copy(deep=True)
    older.settings.generation_batch_size = None
    assert "generation batch size" not in to_html(older)
    assert "generation batch size" in to_html(twin_report)


def test_p_values_are_never_shown_as_zero():
    assert format_p(1.7e-5) == "1.7 × 10⁻⁵"
    assert format_p(0.0004) == "4.0 × 10⁻⁴"
    assert format_p(0.0123) == "0.012" and format_p(0.5) == "0.50" and format_p(None) == "n/a"
    # not "0.002" nor "0.001": two significant digits between 0.001 and 0.01
    assert format_p(0.0015) == "0.0015" and format_p(0.00104) == "0.0010"


def test_a_character_cut_off_where_generation_stopped_is_not_shown():
    from contamcheck.report.html_report import written

    assert written("she has 20 apples\ufffd") == "she has 20 apples"  # the last token ended mid-character
    assert written("a\ufffdb") == "a\ufffdb" and written(None) == ""  # only at the end, where it was cut


def test_a_report_changed_in_memory_renders_as_its_file_would(twin_report: Report):
    from rich.console import Console

    from contamcheck import ReportInvalid
    from contamcheck.report import to_csv, to_json
    from contamcheck.report.terminal import render

    report = twin_report.model_copy(deep=True)
    first = report.tests[0]
    first.p_value = float("nan")  # what a script computing its own numbers can leave
    report.items[0].tests[first.name].score = float("inf")
    html, csv_text = to_html(report), to_csv(report)
    console = Console(file=io.StringIO(), width=100)
    render(report, console)
    assert "nan" not in console.file.getvalue().lower()
    assert "nan" not in sections(html)[first.name].lower()
    assert ",inf," not in csv_text and ",nan," not in csv_text  # not computed: empty, as in the file
    assert math.isnan(report.tests[0].p_value)  # a copy was rendered: the report stays as it was
    report.run.duration_s = float("nan")  # a number every report holds: left as it is, still rendered
    assert "nan" in to_html(report)
    # but not saved: JSON has no NaN, and the null written for it made a file read_report refused
    with pytest.raises(ReportInvalid, match=r"can't be saved: run\.duration_s is not a number"):
        to_json(report)


def test_a_shard_scored_minus_infinity_is_saved_read_and_drawn(tmp_path):
    """canonical-order leaves out a shard one of whose orderings the model scored -inf; its numbers
    were written as null where the report's model wanted a number, so the audit's own file could
    not be read back ("Input should be a valid number")."""
    import dataclasses

    from contamcheck import AuditConfig, audit
    from contamcheck.benchmarks import load_benchmark
    from contamcheck.evidence import MemoryStore, ScoreRequest
    from contamcheck.methods import MethodSettings, create_test
    from contamcheck.report import read_report, to_json

    shards = create_test("canonical-order", MethodSettings()).plan(load_benchmark("sample"))
    assert isinstance(shards, list)
    impossible = ScoreRequest(shards[0].permuted[1]).key

    class Impossible(MemoryStore):
        """The model's score of one reordering of the first shard, a token of it at -inf."""

        def put_many(self, namespace, entries):
            if impossible in entries:
                stats = entries[impossible]
                logprobs = stats.logprobs.copy()
                logprobs[2] = -math.inf
                entries = {**entries, impossible: dataclasses.replace(stats, logprobs=logprobs)}
            super().put_many(namespace, entries)

    config = AuditConfig(model="fake:clean", benchmark="sample", tests=("canonical-order",))
    report = audit(config, store=Impossible())
    (order,) = report.tests
    assert order.status != "skipped" and order.n == len(shards) - 1
    assert order.note is not None and order.note.endswith("1 shard left out: scored not finite.")
    path = tmp_path / "report.json"
    path.write_text(to_json(report))
    again = read_report(path)
    (read,) = again.tests
    first = read.shards[0]
    assert (
        first.permuted_mean_logprob is None and first.statistic is None and first.permuted_logprobs[1] is None
    )
    assert first.canonical_logprob == order.shards[0].canonical_logprob  # finite: kept
    assert read.shards[1] == order.shards[1] and read.p_value == order.p_value
    assert "canonical-order" in sections(to_html(again))
    # its place in the chart was an empty gap, unexplained: a cross on the axis and the legend say why
    unscored = "scored not finite (not used)"
    assert unscored in to_html(again) and unscored in to_html(report)  # saved (null), in memory
    assert unscored not in to_html(audit(config))


def test_a_report_changed_in_memory_to_contradict_itself_is_refused_by_every_rendering(twin_report: Report):
    from contamcheck import ReportInvalid
    from contamcheck.report import to_csv, to_json

    report = twin_report.model_copy(deep=True)
    passing = next(t for t in report.tests if t.status == "pass")
    passing.p_value = passing.p_adjusted = 1e-9  # its p-values changed, its status left as it was
    for render in (to_json, to_html, to_csv):
        with pytest.raises(
            ReportInvalid, match=rf"{passing.name}: status 'pass' with an adjusted p of 1e-09"
        ):
            render(report)
    passing.p_adjusted = 1.0  # the p-value alone changed, as the README's example: Holm can't give this
    family = sum(t.p_adjusted is not None for t in report.tests)
    with pytest.raises(ReportInvalid, match=rf"adjusted p 1 is more than {family} times its p-value 1e-09"):
        to_json(report)
    report.tests[1].flag_rate = 5.0  # a value no report holds
    with pytest.raises(ReportInvalid, match=r"tests.1.flag_rate: Input should be less than or equal to 1"):
        to_json(report)
    report.tests[1].flag_rate = "high"  # type: ignore[assignment]  # a type no report holds: said once,
    with warnings.catch_warnings():  # as the error, not first as pydantic's serializer warning too
        warnings.simplefilter("error")
        with pytest.raises(ReportInvalid, match=r"tests.1.flag_rate: Input should be a valid number"):
            to_json(report)
    with pytest.raises(TypeError, match="expected a contamcheck Report, got dict"):
        to_json(report.model_dump(warnings=False))  # type: ignore[arg-type]

"""--twinless: questions without a number twin judged by the bulk in the likelihood tests.

A benchmark without numbers (MMLU-like) gets no twins, so by default every question is set aside
and the audit reads "inconclusive". With --twinless the likelihood tests judge each question's own
score against the bulk of the benchmark, which needs no twin; completion, which compares a question
with its twin, scores only those that have one.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest

from contamcheck import AuditConfig, audit
from contamcheck.benchmarks import load_benchmark
from contamcheck.cli.app import main
from contamcheck.controls import NO_TWIN
from contamcheck.errors import InputError
from contamcheck.report import to_csv, to_html

# Questions that differ in their words as real ones do: templated ones share their least likely
# words, so the fake model gives many of them one Min-K% score, a pile no bulk can be fitted to.
WITH_NUMBERS = [item.text for item in load_benchmark("sample").items[:30]]  # each has a twin
NO_NUMBERS = [
    "Why does ice float on water while most solids sink in their own liquid form?",
    "Which gas do green plants take in from the air to make their food in sunlight?",
    "What makes the sky look blue on a clear afternoon but red at the sunset?",
    "How does a vaccine teach the immune system to recognise a virus it never met?",
    "Why do metal spoons feel colder than wooden ones lying in the same room?",
    "What causes the seasons to change as the earth travels around the sun each year?",
    "Which organ of the human body filters the blood and makes urine all day long?",
]


@pytest.fixture(scope="module")
def words(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, set[str]]:
    """The bundled sample's questions with their numbers taken out (120 questions, none with a
    twin), and a file of every other one, for a model that memorised half of them."""
    folder = tmp_path_factory.mktemp("words")
    texts = []
    for item in load_benchmark("sample").items:
        text = re.sub(r"\s+", " ", re.sub(r"[\d$%.,]*\d", "", item.text)).strip()
        if len(text.split()) >= 8:
            texts.append(text)
    texts = list(dict.fromkeys(texts))
    assert len(texts) >= 100 and not any(re.search(r"\d", t) for t in texts)
    benchmark, leaked = folder / "words.jsonl", folder / "leaked.jsonl"
    benchmark.write_text("".join(json.dumps({"question": t}) + "\n" for t in texts), encoding="utf-8")
    leaked.write_text("".join(json.dumps({"question": t}) + "\n" for t in texts[::2]), encoding="utf-8")
    return benchmark, leaked, set(texts[::2])


def test_twinless_with_a_control_file_is_refused() -> None:
    with pytest.raises(InputError, match=r"--twinless.*--control"):
        AuditConfig(model="fake:clean", benchmark="sample", twinless=True, control="late.jsonl")
    with pytest.raises(InputError, match="twinless must be True or False"):
        AuditConfig(model="fake:clean", benchmark="sample", twinless="yes")  # type: ignore[arg-type]


def test_a_benchmark_without_numbers_is_judged_by_the_bulk(words, capsys) -> None:
    benchmark, leaked, leaked_texts = words
    # without --twinless: every question is set aside, and the refusal (no test left to judge)
    # names both ways out
    code = main([f"fake:memorise={leaked}", str(benchmark), "--quick", "--no-cache", "--json"])
    assert code == 2
    said = capsys.readouterr().err
    assert "no number to change" in said and "--twinless" in said and "--control" in said

    code = main([f"fake:memorise={leaked}", str(benchmark), "--quick", "--twinless", "--no-cache", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1 and report["verdict"]["code"] == "likely"
    assert report["control"]["without_twin"] == report["sample"]["tested"] == 120
    assert report["control"]["description"].startswith("no twins: no question has one")
    for test in report["tests"]:
        assert test["kind"] == "bulk"
        assert (
            test["calibration"]
            == "the bulk of the benchmark's own scores (no twins, so no familiarity measured)"
        )
        flags = {item["text"]: item["tests"][test["name"]]["flagged"] for item in report["items"]}
        leaked_rate = sum(flags[t] for t in flags if t in leaked_texts) / len(leaked_texts)
        held_out = [flags[t] for t in flags if t not in leaked_texts]
        assert leaked_rate >= 0.9, test["name"]
        assert sum(held_out) / len(held_out) <= 0.1, test["name"]
        assert "not measured (no question has a twin and there is no reference" in test["note"]
        assert test["null"]["twin_preference"] is None and test["null"]["twins_above_threshold"] is None


def test_a_clean_model_on_a_benchmark_without_numbers_stays_at_chance(words) -> None:
    benchmark, _, _ = words
    config = AuditConfig(model="fake:clean", benchmark=str(benchmark), twinless=True, no_cache=True)
    report = audit(config)
    # nothing stands out, and nothing here could see a benchmark memorised whole: not a pass
    assert report.verdict.code == "inconclusive" and "--control FILE, instead of --twinless" in (
        report.verdict.explanation
    )
    by_name = {t.name: t for t in report.tests}
    assert all(t.flag_rate is not None and t.flag_rate <= 0.1 for t in by_name.values() if t.kind == "bulk")
    said = " ".join(report.caveats)
    assert "No question had a twin (--twinless)" in said and "Without a reference a question" in said
    # completion compares a question with its twin: with none, it is skipped and says why
    assert by_name["completion"].status == "skipped"
    assert by_name["completion"].skip_reason == f"no question could be scored: {NO_TWIN}"
    # the renderers take questions without twins: no twin column values, no twin pane
    header, *rows = list(csv.reader(io.StringIO(to_csv(report))))
    assert header[:3] == ["id", "text", "twin"] and "min-k_twin_score" in header
    assert len(rows) == 120 and all(row[2] == "" and row[header.index("min-k_score")] for row in rows)
    html = to_html(report)
    assert "no twins: no question has one" in html and "Twin</div>" not in html
    assert "Median above twin" not in html and "between a question and its twin" not in html


def test_a_benchmark_with_some_numbers_keeps_its_twins_for_familiarity(tmp_path) -> None:
    rows = [{"question": t} for t in (*WITH_NUMBERS, *NO_NUMBERS)]
    path = tmp_path / "mixed.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    config = AuditConfig(
        model="fake:clean", benchmark=str(path), tests=["completion", "min-k"], twinless=True, no_cache=True
    )
    report = audit(config)
    assert report.control.without_twin == len(NO_NUMBERS)
    assert f"{len(NO_NUMBERS)} of {len(rows)} questions had no twin (--twinless)" in " ".join(report.caveats)
    completion, min_k = report.tests
    # completion scores only questions with a twin; the rest are counted, with both reasons
    assert completion.n_unscored >= len(NO_NUMBERS)
    assert completion.unscored_reason is not None and completion.unscored_reason.endswith(
        "or no twin (--twinless)"
    )
    assert min_k.n == len(rows)  # every question in the bulk
    assert min_k.note is not None
    assert f"the {len(WITH_NUMBERS)} of {len(rows)} questions with a twin score" in min_k.note
    without = [i for i in report.items if not i.twins]
    assert len(without) == len(NO_NUMBERS)
    assert all(i.tests["min-k"].twin_score is None and i.tests["min-k"].flagged is not None for i in without)
    assert all("completion" not in i.tests for i in without)  # asked nothing, so no entry
    assert completion.n == len(WITH_NUMBERS) - completion.n_unscored + len(NO_NUMBERS)


def test_with_a_reference_the_bulk_s_centre_stands_for_familiarity(words) -> None:
    benchmark, leaked, _ = words
    config = AuditConfig(
        model=f"fake:memorise={leaked}",
        benchmark=str(benchmark),
        reference="fake:clean",
        quick=True,
        twinless=True,
        no_cache=True,
    )
    report = audit(config)
    assert report.reference.status == "used" and report.verdict.code == "likely"
    for test in report.tests:
        assert test.null is not None and test.note is not None
        # no twins: no spread test against them, and the bulk's centre says where the model sits
        assert test.null.spread_p_value is None and test.null.twin_preference is None
        assert f"(no question has a twin); the bulk sits at {test.null.centre:+.3g}" in test.note
    said = " ".join(report.caveats)
    assert "No question had a twin (--twinless)" in said and "Without a reference" not in said


def test_the_default_draws_the_same_questions_as_before_twinless() -> None:
    """Sampled ids pinned from before --twinless existed: the default must not move a published number."""
    from contamcheck.controls import build_controls

    sample = build_controls(load_benchmark("sample"), 10, 0)
    assert [i.id for i in sample.items] == [
        "sample-006", "sample-034", "sample-050", "sample-052", "sample-054",
        "sample-063", "sample-066", "sample-098", "sample-109", "sample-114",
    ]  # fmt: skip
    humaneval = build_controls(load_benchmark("humaneval"), 8, 3)
    assert [i.id for i in humaneval.items] == [
        "HumanEval/4", "HumanEval/22", "HumanEval/43", "HumanEval/75",
        "HumanEval/81", "HumanEval/117", "HumanEval/147", "HumanEval/150",
    ]  # fmt: skip


def test_completion_asks_nothing_about_a_question_without_a_twin(tmp_path) -> None:
    from contamcheck.pipeline import plan_audit

    # the sample's questions have new numbers in their second half: completion asks about them
    rows = [{"question": i.text} for i in load_benchmark("sample").items[:40]]
    # no number we may change (clock times, leading zeros), yet new numbers in the second half:
    # completion would ask about these if it were not kept to questions with a twin
    alone = [
        "The first train leaves the old station early in the morning and the last at 06:45 and 07:30",
        "Agent 007 met agent 0099 in the bar, and later that night they met agents 0042 and 0077 again",
    ]
    rows += [{"question": t} for t in alone]
    path = tmp_path / "mixed.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    plan = plan_audit(
        AuditConfig(model="fake:clean", benchmark=str(path), tests=["completion", "min-k"], twinless=True)
    )
    assert plan.controls.without_twin == len(alone)
    asked = " ".join(repr(r) for r in plan.requests)
    generated = [r for r in plan.requests if type(r).__name__ == "GenerateRequest"]
    assert generated, "completion asks for the questions with twins"
    for text in alone:
        first_words = " ".join(text.split()[:4])
        assert not any(first_words in repr(r) for r in generated)
        assert first_words in asked  # min-k scores it


def test_a_reference_with_too_few_twins_says_there_is_no_spread_test(words, tmp_path) -> None:
    plain = [json.loads(line)["question"] for line in words[0].read_text(encoding="utf-8").splitlines()]
    rows = [{"question": t} for t in (*WITH_NUMBERS[:5], *NO_NUMBERS, *plain[:20])]
    path = tmp_path / "few.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    # a model that memorised them: another identity than the reference's, and other scores (one that
    # memorised something else scores every question as the reference does: a pile at 0)
    config = AuditConfig(
        model=f"fake:memorise={path}", benchmark=str(path), reference="fake:clean", tests=["min-k"],
        twinless=True, no_cache=True,
    )  # fmt: skip
    (min_k,) = audit(config).tests
    assert min_k.null is not None and min_k.null.spread_p_value is None
    said = min_k.note if min_k.note is not None else (min_k.skip_reason or "")
    assert "no spread test against the twins" in said.lower() and "5 questions have" in said


def test_a_benchmark_mostly_seen_without_twins_is_withheld_and_says_why(words, tmp_path) -> None:
    """70% memorised: the fitted null holds a minority, so no flags; with a reference there is no
    spread test to fall back on (no twins), and neither the reason nor the caveats claim one."""
    benchmark, _, _ = words
    rows = benchmark.read_text(encoding="utf-8").splitlines()
    seen = tmp_path / "seen.jsonl"
    seen.write_text("\n".join(r for i, r in enumerate(rows) if i % 10 < 7) + "\n", encoding="utf-8")
    config = AuditConfig(
        model=f"fake:memorise={seen}", benchmark=str(benchmark), reference="fake:clean", quick=True,
        twinless=True, no_cache=True,
    )  # fmt: skip
    report = audit(config)
    withheld = [t for t in report.tests if t.count_withheld]
    assert withheld, [(t.name, t.null) for t in report.tests]
    for test in withheld:
        assert test.status == "skipped" and test.skip_reason is not None
        assert "no spread test against the twins (0 questions have a twin, 20 needed)" in test.skip_reason
        assert "--reference MODEL" not in test.skip_reason  # it has one
    said = " ".join(report.caveats)
    assert "the spread test against the twins still is" not in said
    html = to_html(report)
    assert "no twin (--twinless)" in html  # the comparison beside each question, not "twin –"


def test_an_audit_that_set_aside_most_questions_says_twinless_would_test_them(words, capsys) -> None:
    benchmark, _, _ = words
    rows = benchmark.read_text(encoding="utf-8").splitlines()
    numbered = [json.dumps({"question": t}) for t in WITH_NUMBERS]
    mixed = benchmark.with_name("mostly-words.jsonl")
    mixed.write_text("\n".join([*rows, *numbered]) + "\n", encoding="utf-8")
    args = ["--tests", "min-k", "--no-cache"]
    assert main(["fake:clean", str(mixed), *args]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "Next: 120 of the benchmark's 150 questions long enough to test have no number" in out
    assert "tested only the 30 with numbers" in out and "--twinless tests them too" in out
    main(["fake:clean", str(mixed), *args, "--json"])
    assert any("--twinless tests them too" in c for c in json.loads(capsys.readouterr().out)["caveats"])
    # not with --twinless, nor where most questions have numbers
    main(["fake:clean", str(mixed), *args, "--twinless"])
    assert "--twinless tests them too" not in capsys.readouterr().out
    main(["fake:clean", "sample", *args, "-n", "30"])
    assert "Next:" not in capsys.readouterr().out


def test_a_benchmark_memorised_whole_is_not_cleared(words) -> None:
    """Every question memorised makes one bulk, as none does: the audit can't clear it (exit 4)."""
    benchmark, _, _ = words
    args = [f"fake:memorise={benchmark}", str(benchmark), "--twinless", "--quick", "--no-cache", "--json"]
    assert main(args) == 4

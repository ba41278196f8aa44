"""Every JSON report the docs publish still reads with this version's report model.

The validation tables and the example are read back by `contamcheck report` and by the experiments
(`experiments/reanalyse.py` and others); a field renamed in the model must not strand them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contamcheck.report import read_report

ROOT = Path(__file__).resolve().parents[1]


def saved_reports() -> list[Path]:
    reports = []
    for path in sorted((ROOT / "docs").rglob("*.json")):
        with path.open(encoding="utf-8") as handle:
            head = handle.read(400)
        if '"tool": "contamcheck"' in head:
            reports.append(path)
    return reports


def test_the_docs_publish_reports():
    assert len(saved_reports()) >= 172  # the validation audits and the example (README counts them)


@pytest.mark.parametrize("path", saved_reports(), ids=lambda p: str(p.relative_to(ROOT / "docs")))
def test_a_published_report_reads_back(path: Path):
    report = read_report(path)
    assert report.items and report.tests
    assert json.loads(path.read_text(encoding="utf-8"))["schema_version"] == report.schema_version


@pytest.mark.parametrize(
    ("version", "message"),
    [
        ("1.1", None),
        ("1.9", "newer than this contamcheck reads"),
        ("2.0", "newer than this contamcheck reads"),
        ("0.9", "Re-run the audit"),
    ],
)
def test_an_older_minor_schema_reads_and_a_newer_one_says_to_upgrade(tmp_path: Path, version, message):
    """1.1 reports lack count_withheld (added in 1.2) and read with it False; a newer schema's
    fields are unknown here, so it is refused with what to do, not a validation error."""
    from contamcheck.errors import InputError

    data = json.loads((ROOT / "docs" / "example" / "report.json").read_text(encoding="utf-8"))
    data["schema_version"] = version
    for test in data["tests"]:
        if test.get("null") and version == "1.1":
            del test["null"]["count_withheld"]
    path = tmp_path / "report.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    if message is None:
        report = read_report(path)
        assert all(t.null is None or not t.null.count_withheld for t in report.tests)
    else:
        with pytest.raises(InputError, match=message):
            read_report(path)


SAVED = {  # a published audit of each verdict
    "likely": ROOT / "docs" / "validation" / "gsm8k-seed0" / "default-leak-3.json",
    "clean": ROOT / "docs" / "example" / "report.json",
}


def _edited(tmp_path: Path, data: dict) -> Path:
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        # "likely" laundered into "clean", its label and exit code made to match
        (
            lambda d: d["verdict"].update(code="clean", label="No evidence found", exit_code=0),
            "the verdict 'clean' does not follow from the tests' statuses",
        ),
        (lambda d: d["verdict"].update(label="No evidence found"), "is not that of the verdict 'likely'"),
        (
            lambda d: d["tests"][2].update(flag_rate=5.0),
            "tests.2.flag_rate: Input should be less than or equal to 1",
        ),
        (
            lambda d: d["tests"][2].update(n_flagged=3),
            "min-k++: 3 of 195 flagged does not agree with flag_rate",
        ),
        (
            lambda d: d["tests"][2].update(p_value=-1),
            "tests.2.p_value: Input should be greater than or equal to 0",
        ),
        (lambda d: d["index"].update(value=99), "index.value: Input should be less than or equal to 1"),
        (
            lambda d: d.update(tests=[]),
            "the verdict 'likely' does not follow from the tests' statuses (none calibrated)",
        ),
        # the failing tests passed, the verdict laundered to match: their p-values give them away
        (
            lambda d: (
                [t.update(status="pass") for t in d["tests"] if t["status"] == "fail"],
                d["verdict"].update(code="clean", label="No evidence found", exit_code=0),
            ),
            "min-k++: status 'pass' with an adjusted p of 5.35e-79, below 0.05",
        ),
        (
            lambda d: (
                d.update(tests=[]),
                d["verdict"].update(code="clean", label="No evidence found", exit_code=0),
            ),
            "the verdict is 'clean' but no calibrated test ran",
        ),
        (
            lambda d: d["tests"][3].update(p_value=0.9, p_adjusted=0.9),
            "zlib: status 'fail' needs an adjusted p below alpha 0.001 (it is 0.9)",
        ),
        (lambda d: d["tests"][3].update(p_adjusted=1e-61), "zlib: adjusted p 1e-61 is below its p-value"),
        (
            lambda d: d["tests"][0].update(p_value=1e-12),  # a p-value changed alone, its adjusted one kept
            "completion: adjusted p 0.994 is more than 4 times its p-value 1e-12",
        ),
        (lambda d: d["index"].update(value=0.0, band="low"), "the evidence index 0.0 (low) is not what"),
        (lambda d: d["index"].update(band="low"), "the evidence index 0.3571 (low) is not what"),
        (
            lambda d: d["index"]["components"][2].update(strength=0.0),
            "the evidence index weighs min-k++ other than its status 'fail' says",
        ),
        (lambda d: d["tests"][2].update(flag_rate_ci=[0.9, 0.1]), "min-k++: flag rate 0.528"),
        # a test renamed to one no version runs: said as that, not as the flags or weights it misses
        (
            lambda d: d["tests"][1].update(name="min-kk"),
            "'min-kk' is no test contamcheck runs (it runs completion, min-k,",
        ),
        (
            lambda d: d["items"][0]["tests"].update(extra=d["items"][0]["tests"]["zlib"]),
            "has results of 'extra', a test the report does not list",
        ),
        (
            lambda d: [item["tests"]["zlib"].update(flagged=False) for item in d["items"]],
            "zlib: 88 flagged, but 0 of its questions are marked flagged",
        ),
        (lambda d: d["tests"].append(d["tests"][0]), "the test 'completion' is listed twice"),
        # read as the schema says, not coerced to what an edit might have meant (read until 2026-12-07)
        (lambda d: d["tests"][2].update(p_value="0.5"), "tests.2.p_value: Input should be a valid number"),
        (
            lambda d: d["tests"][2].update(n_flagged=103.0),
            "tests.2.n_flagged: Input should be a valid integer",
        ),
        (
            lambda d: d["items"][0]["tests"]["zlib"].update(flagged="yes"),
            "items.0.tests.zlib.flagged: Input should be a valid boolean",
        ),
        (lambda d: d["sample"].update(tested=999), "sample.tested 999 is more than the 195"),
        (lambda d: d["settings"].update(alpha=2), "settings.alpha: Input should be less than 1"),
        (
            lambda d: d["settings"].update(limit=-3),
            "settings.limit: Input should be greater than or equal to 1",
        ),
        (lambda d: d["settings"].update(k=0), "settings.k: Input should be greater than 0"),
        (lambda d: d["run"].update(threads=-1), "run.threads: Input should be greater than or equal to 1"),
        (
            lambda d: d["run"]["evidence"]["model"].update(computed=-2),
            "run.evidence.model.computed: Input should be greater than or equal to 0",
        ),
        (lambda d: d["run"].update(duration_s=-5), "run.duration_s is negative"),
        (
            lambda d: d["run"].update(started_at="yesterday"),
            "run.started_at 'yesterday' is not a date and time with its time zone",
        ),
        (
            lambda d: d["run"].update(finished_at="2026-12-06T19:20:00"),  # which zone?
            "run.finished_at '2026-12-06T19:20:00' is not a date and time with its time zone",
        ),
        # questions without a twin (--twinless): only with the setting, never more than were tested
        (
            lambda d: d["control"].update(without_twin=5),
            "control.without_twin is 5 of 195 questions tested, with settings.twinless False",
        ),
        (
            lambda d: (d["control"].update(without_twin=999), d["settings"].update(twinless=True)),
            "control.without_twin is 999 of 195 questions tested",
        ),
    ],
)
def test_an_edited_report_that_contradicts_itself_is_refused(tmp_path: Path, capsys, edit, message):
    """A saved audit re-read by a gate: impossible numbers, or a verdict its own tests don't give."""
    from contamcheck.cli import main

    data = json.loads(SAVED["likely"].read_text(encoding="utf-8"))
    edit(data)
    path = _edited(tmp_path, data)
    assert main(["report", str(path), "-q"]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err, err


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.update(p_value=0.5), "its shards give p = 0.9068509314906851, not the 0.5 it says"),
        (  # the draws are the audit's again (the same numpy): a p-value moved by a hair is refused too
            lambda t: t.update(p_value=t["p_value"] + 1e-5),
            "its shards give p = 0.9068509314906851, not the 0.906860931490685 it says",
        ),
        (lambda t: t.update(statistic=2.5), "its shards give z = -1.3167264350439698, not the 2.5 it says"),
        (lambda t: t.update(statistic=None), "it gives no z or no p-value, though it ran"),
        (
            lambda t: t.update(min_attainable_p=0.01),
            "its shards give no p below 9.99990000099999e-06, not 0.01",
        ),
        (
            lambda t: t.update(mean_difference=0.1),
            "the mean difference 0.1 is not its shards' (-4.1447509765625)",
        ),
        # a shard's numbers follow from its log-probabilities (the published order's raised in one)
        (
            lambda t: t["shards"][3].update(canonical_logprob=-100.0),
            "shard 3's statistic -5.5166015625 is not what its log-probabilities give (822.0616455078125)",
        ),
        (
            lambda t: t["shards"][2].update(permuted_std_logprob=1.0),
            "shard 2's permuted_std_logprob 1.0 is not what its log-probabilities give (9.448823797575143)",
        ),
        (
            lambda t: t["shards"][3].update(truncated=True),
            "9 of its shards can be judged, but it says it judged 10",
        ),
        # the check can't be switched off: a shard without its reorderings, or no shard at all
        (
            lambda t: t["shards"][3].update(permuted_logprobs=[]),
            "shard 3 gives 0 reorderings' log-probabilities, not 5",
        ),
        (lambda t: t["shards"][2]["permuted_logprobs"].append(-1118.0), "shard 2 gives 6 reorderings'"),
        (lambda t: t.update(shards=[]), "it ran on no shard"),
        (
            lambda t: t["shards"][2].update(index=1),
            "shard 2 is numbered 1 and holds 5 questions, not 2 and 5",
        ),
        # counts edited to hold the reader for hours are refused before anything is drawn
        (
            lambda t: t.update(permutations=10**12),
            "its p-value is said to come from 1,000,000,000,000 draws, where alpha 0.001 takes 100,000",
        ),
        (lambda t: t.update(shards=t["shards"] * 30), "300 shards, where settings.order_shards is 10"),
    ],
)
def test_canonical_orders_p_value_is_what_its_shards_give(tmp_path: Path, capsys, edit, message):
    """Since schema 1.6 a report keeps each reordering's log-probability, so canonical-order's
    randomization test is run again where the report is read: a p-value or a shard edited alone is
    refused. The example is such a report."""
    from contamcheck.cli import main

    data = json.loads(SAVED["clean"].read_text(encoding="utf-8"))
    (order,) = [t for t in data["tests"] if t["name"] == "canonical-order"]
    assert order["statistic_name"] == "z" and all(s["permuted_logprobs"] for s in order["shards"])
    assert main(["report", str(_edited(tmp_path, data)), "-q"]) == 0  # as saved: it holds
    edit(order)
    assert main(["report", str(_edited(tmp_path, data)), "-q"]) == 2
    err = capsys.readouterr().err
    assert f"canonical-order: {message}" in err and "Traceback" not in err, err


def test_canonical_orders_p_value_from_another_numpy_is_held_to_the_draws_error(tmp_path: Path):
    """Another numpy may draw its integers otherwise: the p-value is then held to within the draws'
    own error (two estimates, five standard errors), not to the last bit."""
    from contamcheck.errors import InputError

    data = json.loads(SAVED["clean"].read_text(encoding="utf-8"))
    data["versions"]["numpy"] = "0.0"
    (order,) = [t for t in data["tests"] if t["name"] == "canonical-order"]
    order["p_value"] += 1e-3  # 0.9069 -> 0.9079: five standard errors of 100,000 draws are 0.0065
    (read,) = [t for t in read_report(_edited(tmp_path, data)).tests if t.name == "canonical-order"]
    assert read.p_value == order["p_value"]
    order["p_value"] = 0.89
    with pytest.raises(InputError, match=r"its shards give p = 0\.9068509314906851, not the 0\.89 it says"):
        read_report(_edited(tmp_path, data))


def test_a_number_too_large_for_a_float_is_refused_where_the_report_is_read(tmp_path: Path):
    """JSON's 1e400 reads as infinity: the report read, then could not be written again ("can't be
    saved ... run the audit again", for a report only re-rendered)."""
    from contamcheck.errors import InputError

    text = SAVED["clean"].read_text(encoding="utf-8")
    path = tmp_path / "huge.json"
    path.write_text(text.replace('"duration_s": ', '"duration_s": 1e400, "was": ', 1), encoding="utf-8")
    with pytest.raises(InputError, match="the number 1e400 is too large for a report"):
        read_report(path)


def test_a_negative_seed_earlier_versions_took_still_reads(tmp_path: Path) -> None:
    """--seed -1 was taken until 2026-12-05: such a report is no edit, and reads back."""
    from contamcheck.report import read_report

    data = json.loads(SAVED["likely"].read_text(encoding="utf-8"))
    data["settings"]["seed"] = -1
    assert read_report(_edited(tmp_path, data)).settings.seed == -1


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"tool": "contamcheck", "x": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deeply"),
        ('{"tool": "contamcheck", "p": NaN}', "NaN is not a number a report holds"),
        # a second verdict after the first: Python reads the last, other readers the first
        (
            '{"tool": "contamcheck", "verdict": {"code": "likely", "code": "clean"}}',
            "the key 'code' appears twice",
        ),
        ('{"tool": "contamcheck", "p": -Infinity}', "-Infinity is not a number a report holds"),
        (
            '{"tool": "contamcheck", "n": ' + "9" * 5000 + "}",
            "a number in it is too long (over 4,300 digits)",
        ),
    ],
)
def test_json_no_report_can_hold_is_an_input_error(tmp_path: Path, capsys, text, message):
    from contamcheck.cli import main

    path = tmp_path / "odd.json"
    path.write_text(text, encoding="utf-8")
    assert (
        main(["report", str(path), "--html", str(tmp_path / "r.html"), "--csv", str(tmp_path / "r.csv")]) == 2
    )
    err = capsys.readouterr().err
    assert "is not a JSON report" in err and message in err and "Traceback" not in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["odd.json"]  # no output half written


@pytest.mark.parametrize(("code", "fail_on", "edited"), [("likely", "likely", 0), ("clean", "likely", 7)])
def test_an_exit_code_that_does_not_follow_the_verdict_is_refused(
    tmp_path: Path, capsys, code, fail_on, edited
):
    """`contamcheck report` exits with the saved exit code, so a gate can re-read a saved audit: an
    edited one must not turn a "likely" into 0."""
    from contamcheck.cli import main

    data = json.loads(SAVED[code].read_text(encoding="utf-8"))
    assert data["verdict"]["code"] == code and data["verdict"]["fail_on"] == fail_on
    data["verdict"]["exit_code"] = edited
    path = tmp_path / "report.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert main(["report", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"exit_code {edited} does not follow from the verdict {code!r}" in err and "edited" in err
    data["verdict"]["exit_code"] = 1 if code == "likely" else 0  # as the audit wrote it
    path.write_text(json.dumps(data), encoding="utf-8")
    assert main(["report", str(path), "-q"]) == data["verdict"]["exit_code"]


def test_a_folder_is_said_to_be_a_folder(tmp_path):
    from contamcheck import ReportUnreadable

    with pytest.raises(ReportUnreadable, match=r"is a folder; pass the report's \.json file in it"):
        read_report(tmp_path)  # was "does not exist", of a folder that does


def test_a_device_is_no_report_file_and_a_read_error_is_said():
    from contamcheck import ReportUnreadable

    with pytest.raises(ReportUnreadable, match=r"'/dev/zero' is not a regular file \(a device or a pipe\)"):
        read_report("/dev/zero")  # was "does not exist"
    if Path("/proc/self/mem").exists():  # Linux: a file that can't be read from its start
        with pytest.raises(ReportUnreadable, match="Can't read the report '/proc/self/mem'"):
            read_report("/proc/self/mem")  # was a raw OSError


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_report_rendered_again_that_cant_be_written_says_so_without_an_audit(capsys):
    from contamcheck.cli import main

    assert main(["report", str(SAVED["clean"]), "--csv", "/dev/full", "-q"]) == 3
    err = capsys.readouterr().err
    assert "Can't write '/dev/full'" in err and "Make room or pick another path" in err
    assert "cache" not in err and "audit" not in err


def test_a_path_too_long_json_text_for_a_path_and_a_byte_order_mark(tmp_path: Path):
    from contamcheck.errors import ReportUnreadable

    with pytest.raises(ReportUnreadable, match=r"A path is too long for this system: 'a{200}…'"):
        read_report("a" * 5000 + ".json")
    with pytest.raises(ReportUnreadable, match=r"Can't read the report 'a\\x00b.json': embedded null byte"):
        read_report("a\0b.json")
    with pytest.raises(ReportUnreadable, match="takes the path of a saved report, not its JSON text"):
        read_report(SAVED["clean"].read_text(encoding="utf-8"))
    with pytest.raises(ReportUnreadable, match="takes the path of a saved report, not its JSON text"):
        read_report('{"a": 1}')
    marked = tmp_path / "saved-by-an-editor.json"  # a byte-order mark first, as some editors write
    marked.write_bytes(b"\xef\xbb\xbf" + SAVED["clean"].read_bytes())
    assert read_report(marked) == read_report(SAVED["clean"])

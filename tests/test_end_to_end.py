"""The whole audit on tiny real transformers models: a cheater is caught, a clean model passes."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from contamcheck.cli import main
from contamcheck.evidence.cache import EvidenceCache

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict]:
    code = main([*args, "--json", "--threads", "2"])
    out = capsys.readouterr().out
    return code, json.loads(out)


def flag_rates(report: dict, test: str, leaked: list[str], held_out: list[str]) -> tuple[float, float]:
    def rate(texts: list[str]) -> float:
        flags = [
            item["tests"][test]["flagged"]
            for item in report["items"]
            if item["text"] in texts and item["tests"][test]["flagged"] is not None
        ]
        return sum(flags) / len(flags)

    return rate(leaked), rate(held_out)


def test_cheater_is_caught_by_completion_with_twins(tiny_setup, capsys):
    code, report = run_json(capsys, str(tiny_setup.cheater), str(tiny_setup.benchmark), "--reference", "none")
    assert code == 1
    assert report["verdict"]["code"] == "likely"
    completion = report["tests"][0]
    assert completion["name"] == "completion" and completion["calibrated"] and completion["status"] == "fail"
    leaked_rate, held_out_rate = flag_rates(report, "completion", tiny_setup.leaked, tiny_setup.held_out)
    assert leaked_rate >= 0.5
    assert held_out_rate <= 0.15


def test_clean_model_of_the_same_recipe_is_not_called_contaminated(tiny_setup, capsys):
    code, report = run_json(capsys, str(tiny_setup.clean), str(tiny_setup.benchmark), "--reference", "none")
    assert report["verdict"]["code"] != "likely"
    assert code != 1
    completion = next(t for t in report["tests"] if t["name"] == "completion")
    assert completion["flag_rate"] <= 0.15


def test_control_file_catches_the_cheater_with_both_tests(tiny_setup, capsys):
    code, report = run_json(
        capsys, str(tiny_setup.cheater), str(tiny_setup.benchmark), "--control", str(tiny_setup.control)
    )
    assert code == 1
    statuses = {t["name"]: (t["status"], t["calibrated"]) for t in report["tests"]}
    assert statuses["min-k"] == ("fail", True)  # calibrated by the control file
    assert report["control"]["kind"] == "file"
    min_k = next(t for t in report["tests"] if t["name"] == "min-k")
    assert min_k["auroc_vs_controls"] > 0.7  # memorised questions outscore controls


def test_control_file_passes_the_clean_model_with_power(tiny_setup, capsys):
    code, report = run_json(
        capsys, str(tiny_setup.clean), str(tiny_setup.benchmark), "--control", str(tiny_setup.control)
    )
    assert code == 0
    assert report["verdict"]["code"] == "clean"
    min_k = next(t for t in report["tests"] if t["name"] == "min-k")
    assert min_k["calibrated"]
    assert min_k["min_attainable_p"] < report["settings"]["alpha"] / 2  # it could have failed
    assert 0.25 < min_k["auroc_vs_controls"] < 0.75


def test_reference_path_calibrates_min_k(tiny_setup, capsys):
    # The clean model as reference for the cheater: the loading path of --reference PATH.
    code, report = run_json(
        capsys, str(tiny_setup.cheater), str(tiny_setup.benchmark), "--reference", str(tiny_setup.clean)
    )
    assert report["reference"]["status"] == "used"
    assert report["reference"]["model"]["name"].endswith("clean")
    min_k = next(t for t in report["tests"] if t["name"] == "min-k")
    assert min_k["calibrated"] and "reference" in min_k["calibration"]
    item = report["items"][0]["tests"]["min-k"]
    assert item["reference_score"] is not None
    assert code == 1
    # With a reference, the spread test against the twins runs beside the tail count.
    null = min_k["null"]
    assert null["spread_p_value"] is not None and null["tail_p_value"] is not None
    assert min_k["p_value"] == pytest.approx(min(1.0, 2 * min(null["tail_p_value"], null["spread_p_value"])))
    assert "Spread against the twins" in min_k["note"]


def same_weights_renamed(model: Path, folder: Path) -> Path:
    """The model's folder copied with a note added to its config: the same weights, another identity."""
    shutil.copytree(model, folder)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "_note": "a copy"}))
    return folder


def test_a_reference_that_gives_the_models_own_numbers_is_refused(tiny_setup, tmp_path, capsys):
    # Each score less its own is zero: the audit said "no evidence found" for the cheater.
    copy = same_weights_renamed(tiny_setup.cheater, tmp_path / "copy")
    args = [str(tiny_setup.cheater), str(tiny_setup.benchmark), "--tests", "min-k", "--threads", "2"]
    args += ["--reference", str(copy), "--cache", str(tmp_path / "cache"), "--batch-size", "4"]
    code = main(args)
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert f"--reference {str(copy)!r} gives the model's own numbers" in err
    assert "of another family that never saw the benchmark" in err and "or --reference none" in err
    assert "What was computed is kept in the cache." in err
    assert any(re.fullmatch(r"reference: scoring: failed \(\d+ s\)", line) for line in err.splitlines())
    # Only the reference's first batch was computed, and it was kept.
    stored = EvidenceCache(tmp_path / "cache", audit=False).summary()["models"]
    entries = sorted(m["entries"] for m in stored)
    assert len(entries) == 2 and entries[0] == 4 and entries[1] > 4  # the reference's, then the model's
    # Again: refused from what the cache holds, loading neither model.
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "gives the model's own numbers" in err and "loading" not in err
    # Without a cache nothing is kept, and the message does not say it is.
    assert main([*args, "--no-cache"]) == 2
    assert "kept in the cache" not in capsys.readouterr().err


def test_an_automatic_reference_that_gives_the_models_own_numbers_is_passed_over(
    tiny_setup, tmp_path, capsys, monkeypatch
):
    # The closest GPT-2 under another name (a local copy of it audited): the next one is used.
    copy = same_weights_renamed(tiny_setup.cheater, tmp_path / "copy")
    candidates = [str(copy), str(tiny_setup.clean)]
    monkeypatch.setattr("contamcheck.pipeline.handles.references_by_size", lambda size: candidates)
    args = [str(tiny_setup.cheater), str(tiny_setup.benchmark), "--tests", "min-k", "--reference", "auto"]
    saved = tmp_path / "report.json"
    main([*args, "--threads", "2", "--cache", str(tmp_path / "cache"), "--output", str(saved)])
    err = capsys.readouterr().err.splitlines()
    # The copy's scoring line ends as failed; the next reference's starts afresh and ends as done.
    failed = next(
        i for i, line in enumerate(err) if re.fullmatch(r"reference: scoring: failed \(\d+ s\)", line)
    )
    again = err[failed + 1 :]
    assert any(re.fullmatch(r"reference: scoring: \d+ to do", line) for line in again), err
    assert any(re.fullmatch(r"reference: scoring: (\d+)/\1 done \(\d+ s\)", line) for line in again), err
    report = json.loads(saved.read_text())
    assert [Path(name).name for name in report["run"]["models_loaded"][1:]] == ["copy", "clean"]
    # what the passed-over copy computed (its first batch) is counted in the run, under its own role
    roles = list(report["run"]["evidence"])
    assert roles == ["model", f"reference passed over ({copy})", "reference"]
    first = report["run"]["evidence"][f"reference passed over ({copy})"]
    assert 0 < first["computed"] < report["run"]["evidence"]["reference"]["requested"]
    assert report["reference"]["status"] == "used"
    assert report["reference"]["model"]["name"].endswith("clean")
    passed = f"({copy} gave the model's own numbers: the same weights)"
    assert report["reference"]["reason"] == f"closest GPT-2 in size: {tiny_setup.clean} {passed}"
    assert report["items"][0]["tests"]["min-k"]["reference_score"] is not None
    # With no other: no reference, and the report says why.
    candidates.pop()
    _, report = run_json(capsys, *args)
    reason = f"no GPT-2 but the tested model itself {passed}"
    assert report["reference"] == {
        "status": "unavailable",
        "requested": "auto",
        "reason": reason,
        "model": None,
    }
    min_k = report["tests"][0]
    assert min_k["calibrated"] and "reference" not in min_k["calibration"]
    assert report["items"][0]["tests"]["min-k"]["reference_score"] is None
    assert f"No reference model: {reason}. To calibrate offline" in " ".join(report["caveats"])
    main([*args[:-2], "--reference", "auto", "--threads", "2"])
    assert f"reference: none ({reason};" in " ".join(capsys.readouterr().out.split())


def test_a_reference_that_saw_half_the_benchmark_is_passed_over(tiny_setup, capsys):
    """The cheater, which saw 30 of the 60 questions, as the clean model's reference: alone it reads
    likely contaminated and the clean model does not, so the clean model is judged without it."""
    args = [str(tiny_setup.clean), str(tiny_setup.benchmark), "--tests", "min-k,zlib"]
    code, report = run_json(capsys, *args, "--reference", str(tiny_setup.cheater))
    assert report["reference"]["status"] == "passed-over" and code == 0
    assert "reads likely contaminated (questions flagged:" in report["reference"]["reason"]
    assert all(not item["tests"]["zlib"]["reference_score"] for item in report["items"])


def test_a_reference_close_to_the_models_own_numbers_is_named_in_a_warning(tiny_setup, capsys, monkeypatch):
    monkeypatch.setattr("contamcheck.pipeline.handles.CLOSE_NUMBERS_NATS", 1000.0)  # any reference is close
    # the clean model as the cheater's reference: kept (alone it reads clean), so the warning stands
    args = [str(tiny_setup.cheater), str(tiny_setup.benchmark), "--tests", "min-k"]
    _, report = run_json(capsys, *args, "--reference", str(tiny_setup.clean))
    assert report["reference"]["status"] == "used"
    (warning,) = [w for w in report["warnings"] if "nearly the model's own numbers" in w]
    assert warning.startswith(f"The reference {tiny_setup.clean} gives nearly the model's own numbers")
    assert warning.endswith("pass a model of another family that never saw the benchmark.")
    # the cheater as the clean model's reference is passed over: how close its numbers lie is moot
    args = [str(tiny_setup.clean), str(tiny_setup.benchmark), "--tests", "min-k"]
    _, report = run_json(capsys, *args, "--reference", str(tiny_setup.cheater))
    assert report["reference"]["status"] == "passed-over"
    assert not [w for w in report["warnings"] if "nearly the model's own numbers" in w]
    assert list(report["run"]["evidence"]) == ["model", f"reference passed over ({tiny_setup.cheater})"]


def test_without_a_reference_the_spread_test_does_not_run(tiny_setup, capsys):
    # Measured: without a reference the originals' own spread over their twins reads as a leak.
    _, report = run_json(capsys, str(tiny_setup.clean), str(tiny_setup.benchmark), "--reference", "none")
    for test in report["tests"]:
        if test["kind"] == "bulk" and test["null"] is not None:
            assert test["null"]["spread_p_value"] is None
            assert test["p_value"] == test["null"]["tail_p_value"]


def test_more_threads_than_cores_run_as_many_as_cores_and_say_so(tiny_setup, capsys):
    from contamcheck.backends import default_threads

    asked = default_threads() + 1000
    args = [str(tiny_setup.clean), str(tiny_setup.benchmark), "--tests", "min-k", "--reference", "none"]
    main([*args, "--json", "--threads", str(asked)])
    report = json.loads(capsys.readouterr().out)
    assert report["run"]["threads"] == default_threads()
    said = f"--threads {asked} is more than the {default_threads()} CPU cores this process may use"
    assert any(warning.startswith(said) for warning in report["warnings"])
    main([*args, "--json", "--threads", "1"])
    report = json.loads(capsys.readouterr().out)
    assert report["run"]["threads"] == 1 and not any("--threads" in w for w in report["warnings"])

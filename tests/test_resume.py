"""Resume and reuse: an audit killed with SIGKILL mid-batch resumes to the same report; a warm
run does no model work; the reference's evidence is shared between audits."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from importlib import resources
from pathlib import Path

import pytest

from contamcheck.backends import hf
from contamcheck.cli import main

SAMPLE = str(resources.files("contamcheck.benchmarks").joinpath("data/sample.jsonl"))
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def without_run(report: dict) -> dict:
    return {key: value for key, value in report.items() if key != "run"}


def stored(cache: Path) -> int:
    database = cache / "evidence.sqlite3"
    if not database.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=5) as db:
            return int(db.execute("SELECT COUNT(*) FROM evidence").fetchone()[0])
    except sqlite3.OperationalError:  # tables not created yet
        return 0


def audit_command(cache: Path, output: Path) -> list[str]:
    model = f"fake:memorise={SAMPLE}:delay=0.1"
    return [
        sys.executable, "-m", "contamcheck", model, "sample", "-n", "60", "--batch-size", "4",
        "--permutations", "10000", "--cache", str(cache), "--output", str(output), "--quiet",
    ]  # fmt: skip


def test_sigkill_in_the_middle_resumes_to_the_same_report(tmp_path):
    cache, output = tmp_path / "cache", tmp_path / "report.json"
    process = subprocess.Popen(
        audit_command(cache, output), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 60
    while stored(cache) < 4 and time.monotonic() < deadline:  # at least one batch of 4 committed
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    kept = stored(cache)
    assert process.returncode == -signal.SIGKILL
    assert kept >= 4, "killed before any batch was stored"
    assert not output.exists(), "the audit had already finished before the kill"

    resumed = subprocess.run(audit_command(cache, output), capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 1, resumed.stderr
    report = json.loads(output.read_text())
    use = report["run"]["evidence"]["model"]
    assert use["from_cache"] == kept and use["computed"] == use["requested"] - kept > 0

    cold_output = tmp_path / "cold.json"
    cold = subprocess.run(
        audit_command(tmp_path / "cold-cache", cold_output), capture_output=True, timeout=300
    )
    assert cold.returncode == 1
    assert without_run(report) == without_run(json.loads(cold_output.read_text()))


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_sigterm_or_sighup_stops_like_ctrl_c_and_the_same_command_resumes(tmp_path, stop):
    """A CI timeout or docker stop sends SIGTERM, a closed terminal or a lost SSH session SIGHUP:
    one line, exit 128 + the signal, nothing computed lost (each was a silent death by the signal,
    found by black-box passes)."""
    cache, output = tmp_path / "cache", tmp_path / "report.json"
    process = subprocess.Popen(
        audit_command(cache, output),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        # as from a terminal: a test run itself under nohup (a CI job) would pass SIGHUP on ignored
        preexec_fn=lambda: signal.signal(stop, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 60
    while stored(cache) < 4 and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(stop)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 128 + stop, err
    assert err.decode().strip() == (
        f"contamcheck: error: Terminated ({stop.name}). Evidence computed so far is kept; run the "
        "same command to resume."
    )
    kept = stored(cache)
    assert kept >= 4 and not output.exists()
    resumed = subprocess.run(audit_command(cache, output), capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 1, resumed.stderr
    assert json.loads(output.read_text())["run"]["evidence"]["model"]["from_cache"] >= kept


def test_an_audit_started_with_nohup_outlives_the_terminal(tmp_path):
    """`nohup` ignores SIGHUP: the audit must go on, not stop at the first hangup (found by review)."""
    cache, output = tmp_path / "cache", tmp_path / "report.json"
    process = subprocess.Popen(
        audit_command(cache, output),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN),  # as nohup starts it
    )
    deadline = time.monotonic() + 60
    while stored(cache) < 4 and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGHUP)
    _, err = process.communicate(timeout=300)
    assert process.returncode == 1, err  # the audit's own verdict: it ran to its end
    assert output.exists()


def run_json(capsys, *args: str) -> dict:
    main([*args, "--json", "--threads", "2"])
    return json.loads(capsys.readouterr().out)


def test_warm_run_loads_no_model_and_reports_the_same(tiny_setup, tmp_path, capsys, monkeypatch):
    args = [str(tiny_setup.cheater), str(tiny_setup.benchmark), "-n", "20", "--cache", str(tmp_path)]
    cold = run_json(capsys, *args, "--reference", "none")
    assert cold["run"]["evidence"]["model"]["computed"] > 0 and cold["run"]["models_loaded"]

    def no_loading(*args, **kwargs):
        raise AssertionError("a warm run loaded a model")

    monkeypatch.setattr(hf.HFModel, "load", no_loading)
    monkeypatch.setattr("transformers.AutoTokenizer.from_pretrained", no_loading)
    warm = run_json(capsys, *args, "--reference", "none")
    assert warm["run"]["evidence"]["model"]["computed"] == 0 and warm["run"]["models_loaded"] == []
    assert without_run(warm) == without_run(cold)

    # Another threshold re-uses the same evidence: only the statistics change.
    stricter = run_json(capsys, *args, "--reference", "none", "--alpha", "0.0001")
    assert stricter["run"]["evidence"]["model"]["computed"] == 0
    assert stricter["settings"]["alpha"] == 0.0001


WARM_PROBE = """
import json, sys
from contamcheck.backends.hf import torch_is_cpu_only
cpu_only = torch_is_cpu_only()
from contamcheck.cli import main
code = main(json.loads(sys.argv[1]))
print(json.dumps({"code": code, "cpu_only": cpu_only, "torch": "torch" in sys.modules}), file=sys.stderr)
"""


def test_a_warm_run_on_a_cpu_only_torch_never_imports_torch(tiny_setup, tmp_path, capsys):
    # Importing torch was most of a warm run (docs/PERFORMANCE.md); the default reference, a Hub
    # model, is checked for reachability first, and the device is told from torch's build.
    args = [str(tiny_setup.cheater), str(tiny_setup.benchmark), "-n", "20", "--cache", str(tmp_path)]
    run_json(capsys, *args, "--reference", "none")  # cold, in this process
    env = {**os.environ, "HF_ENDPOINT": "http://127.0.0.1:9"}  # the Hub can't be reached, as offline
    for reference in ("none", "auto"):
        done = subprocess.run(
            [sys.executable, "-c", WARM_PROBE, json.dumps([*args, "--reference", reference, "--json"])],
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
        )
        probe = json.loads(done.stderr.strip().splitlines()[-1])
        if not probe["cpu_only"]:
            pytest.skip("this torch can use a GPU, so the device is asked of torch itself")
        report = json.loads(done.stdout)
        assert probe["code"] in (0, 1)  # 1: the verdict reached --fail-on (this model cheats)
        assert report["run"]["evidence"]["model"]["computed"] == 0
        assert probe["torch"] is False, reference


def test_reference_evidence_is_shared_between_audits_of_different_models(tiny_setup, tmp_path, capsys):
    common = [
        str(tiny_setup.benchmark),
        "-n",
        "20",
        "--cache",
        str(tmp_path),
        "--reference",
        str(tiny_setup.clean),
    ]
    first = run_json(capsys, str(tiny_setup.cheater), *common)
    second = run_json(capsys, "fake:clean", *common)  # another model (not the reference), the same reference
    assert first["run"]["evidence"]["reference"]["computed"] > 0
    assert second["run"]["evidence"]["reference"]["computed"] == 0


def test_report_subcommand_rerenders_without_a_model(tmp_path, capsys, monkeypatch):
    saved = tmp_path / "r.json"
    main([f"fake:memorise={SAMPLE}", "sample", "-n", "30", "--permutations", "10000", "-o", str(saved), "-q"])
    monkeypatch.setattr("contamcheck.pipeline.audit", lambda *a, **k: pytest.fail("audit ran"))
    code = main(["report", str(saved)])
    out = capsys.readouterr().out
    assert code == 1 and "Likely contaminated" in out
    code = main(["report", str(saved), "--json"])
    assert code == 1 and json.loads(capsys.readouterr().out) == json.loads(saved.read_text())


def test_report_subcommand_rejects_what_is_not_a_report(tmp_path, capsys):
    bad = tmp_path / "x.json"
    bad.write_text('{"hello": 1}')
    assert main(["report", str(bad)]) == 2
    assert "not a contamcheck report" in capsys.readouterr().err
    assert main(["report", str(tmp_path / "missing.json")]) == 2


def test_cache_info_and_clear(tmp_path, capsys):
    main(
        [
            f"fake:memorise={SAMPLE}",
            "sample",
            "-n",
            "25",
            "--permutations",
            "500",
            "-q",
            "--cache",
            str(tmp_path),
        ]
    )
    converted = tmp_path / "converted" / "abc"  # as a .gguf model's dequantised copy is kept
    converted.mkdir(parents=True)
    (converted / "model.safetensors").write_bytes(b"\0" * 2**20)
    assert main(["cache", "info", "--cache", str(tmp_path)]) == 0
    shown = capsys.readouterr().out
    assert "fake:memorise" in shown and "entries" in shown  # the model by its name
    assert "converted from .gguf files: 1 (1.0 MiB" in shown and "null tables: 1" in shown
    assert main(["cache", "clear", "--cache", str(tmp_path)]) == 0
    cleared = capsys.readouterr().out
    assert "and 2 other files (converted models, null tables, damaged caches set aside: 1.0 MiB)" in cleared
    assert not (tmp_path / "converted").exists() and not (tmp_path / "nulls").exists()
    main(["cache", "info", "--cache", str(tmp_path)])
    assert "no evidence stored" in capsys.readouterr().out


def test_cache_info_on_a_missing_folder_creates_nothing(tmp_path, capsys):
    missing = tmp_path / "not-yet"
    assert main(["cache", "info", "--cache", str(missing)]) == 0
    assert "nothing stored yet" in capsys.readouterr().out
    assert main(["cache", "clear", "--cache", str(missing)]) == 0
    assert not missing.exists()


def test_the_terminal_says_what_came_from_the_cache(tmp_path, capsys):
    args = [f"fake:memorise={SAMPLE}", "sample", "-n", "25", "--tests", "min-k", "--cache", str(tmp_path)]
    main(args)
    assert "Evidence requests: model 0 of 50 from the cache, 50 computed." in capsys.readouterr().err
    main(args)
    assert "model 50 of 50 from the cache, 0 computed." in capsys.readouterr().err
    main([*args, "-q"])
    assert "Evidence requests" not in capsys.readouterr().err

"""The command lines of the two designs contamcheck was made from (shared/seeds) still work.

With their Hub-only models and benchmarks replaced by local equivalents they run; as written, on a
machine without the Hugging Face Hub, they fail with the clear offline error (exit 3), never a
traceback.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from test_readme import local

from contamcheck import hub
from contamcheck.cli import main

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

SEED_000 = [
    "contamcheck Qwen/Qwen2.5-0.5B gsm8k",
    "contamcheck Qwen/Qwen2.5-0.5B gsm8k -n 500",
    "contamcheck my-model/ questions.jsonl --field question",
    "contamcheck my-model/ hf:openai/gsm8k:main:test:question",
    "contamcheck my-model/ humaneval --control fresh.jsonl",
    "contamcheck my-model/ gsm8k --json",
    "contamcheck big-model/ gsm8k --reference EleutherAI/pythia-6.9b",
]
SEED_004 = [
    "contamcheckr run --model sshleifer/tiny-gpt2 --benchmark sample --limit 10 "
    "--output report.json --csv per_example.csv --html report.html",
]
FAST = ["--permutations", "500", "--threads", "2", "-q"]


def test_the_readme_carries_every_seed_000_line_so_its_test_runs_them():
    from test_readme import audit_lines

    assert set(SEED_000) <= set(audit_lines())


@pytest.mark.parametrize("line", SEED_004)
def test_seed_command_lines_run_with_local_models_and_data(line, tiny_setup, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    words = [local(word, tiny_setup) for word in shlex.split(line)[1:]]
    if "-n" not in words and "--limit" not in words:
        words += ["-n", "10"]
    words = [w if w != "500" else "10" for w in words]  # -n 500 -> 10: the grammar is what matters
    code = main([*words, *FAST])
    captured = capsys.readouterr()
    assert code in (0, 1, 4), captured.err
    if "--output" in words:
        report = json.loads(Path("report.json").read_text())
        assert report["tool"] == "contamcheck"
        assert Path("per_example.csv").read_text().startswith("id,text,twin")
        assert "<html" in Path("report.html").read_text()


@pytest.mark.parametrize("line", [SEED_000[0], SEED_000[3], SEED_004[0]])
def test_seed_command_lines_as_written_give_the_offline_error(
    line, tiny_setup, monkeypatch, capsys, tmp_path
):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(hub, "hub_reachable", lambda: False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    # a local folder where the line names one (a missing folder is an error of its own, exit 2)
    words = [str(tiny_setup.cheater) if word == "my-model/" else word for word in shlex.split(line)[1:]]
    code = main(words)
    err = capsys.readouterr().err
    assert code == 3
    assert "Can't reach the Hugging Face Hub" in err and "Traceback" not in err
    assert not Path("report.json").exists()

"""The README's commands are real: CI runs its test command, and its audit lines run here (those of
a served model in ``backends/test_server.py``, beside its server).

Each ``contamcheck ...`` line of the README runs with its Hub-only models and benchmarks replaced by
local equivalents (a tiny trained model, the bundled sample; a served model by vLLM serving
SmolLM2: ``readme_lines.py``), so what is tested is the flag grammar and the whole path behind it.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys

import pytest
from readme_lines import FAST, README, ROOT, audit_lines, code_lines, local, served

from contamcheck.cli import main

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def test_the_two_commands_are_in_the_readme_and_ci_runs_the_test_command():
    lines = code_lines(README)
    assert "make demo" in lines and "make test" in lines
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_the_demo_target_runs_the_audit_the_readme_shows():
    makefile = (ROOT / "Makefile").read_text()
    recipe = re.search(r"^demo:.*\n\t(.+)$", makefile, flags=re.M)
    assert recipe is not None
    command = recipe.group(1).replace("$(BIN)/", "")
    assert command in audit_lines()
    assert "pkg:smollm2-135m-instruct" in command


def test_every_audit_line_is_run_here_or_beside_the_server():
    lines = audit_lines()
    assert any(served(line) for line in lines) and not all(served(line) for line in lines)


# a served model's lines: backends/test_server.py, beside the server it starts
@pytest.mark.parametrize("line", [line for line in audit_lines() if not served(line)])
def test_every_audit_line_of_the_readme_runs(line, tiny_setup, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # lines that write report files write them here
    words = [local(word, tiny_setup) for word in shlex.split(line)[1:]]
    code = main([*words, *FAST])
    captured = capsys.readouterr()
    assert code in (0, 1, 4), captured.err
    assert "error" not in captured.err


def test_the_python_examples_run(tiny_setup, tmp_path, monkeypatch):
    """The README's Python blocks run in order, as one session: the audit, then saving and reading it."""
    monkeypatch.chdir(tmp_path)
    snippets = re.findall(r"```python\n(.*?)```", README, flags=re.S)
    assert len(snippets) == 2
    code = "\n".join(snippets).replace('"pkg:smollm2-135m-instruct"', repr(str(tiny_setup.cheater)))
    code = code.replace("limit=50", "limit=10, permutations=500")
    namespace: dict = {}
    exec(compile(code, "README.md", "exec"), namespace)
    assert namespace["report"].verdict.label
    assert namespace["again"] == namespace["report"]
    assert "<html" in (tmp_path / "report.html").read_text(encoding="utf-8")


def test_the_demo_output_shown_is_the_saved_example_rendered():
    """What the README says the demo prints is docs/example's saved report, as the terminal shows it."""
    section = README[README.index("### What the demo prints") :]
    shown = re.search(r"```\n(.*?)```", section, flags=re.S)
    assert shown is not None
    rendered = subprocess.run(
        [sys.executable, "-m", "contamcheck", "report", str(ROOT / "docs" / "example" / "report.json")],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "100"},
    )
    assert rendered.returncode == 0, rendered.stderr
    assert rendered.stdout.strip("\n") == shown.group(1).strip("\n")

"""Shell completion: the names click can't guess (models, benchmarks, references, tests), and the
shell scripts click writes, run through the installed command as a shell would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from click.shell_completion import BashComplete

from contamcheck.cli.app import cli


def complete(words: list[str], incomplete: str) -> list[tuple[str, str]]:
    completer = BashComplete(cli, {}, "contamcheck", "_CONTAMCHECK_COMPLETE")
    return [(item.type, item.value) for item in completer.get_completions(words, incomplete)]


def test_the_first_word_is_a_command_or_the_model_of_the_short_form():
    found = complete([], "")
    assert ("plain", "run") in found and ("plain", "pkg:smollm2-135m-instruct") in found
    assert ("plain", "openai:http://") in found
    assert complete([], "pkg:g") == [("file", "pkg:g"), ("plain", "pkg:gemma-3-270m")]
    assert ("plain", "--version") in complete([], "--")


def test_benchmarks_references_and_tests_complete_from_the_registries():
    # a path first: bash's script drops the names before it, and completes paths only where no name matches
    assert complete(["pkg:smollm2-135m-instruct"], "m") == [
        ("file", "m"),
        ("plain", "mbpp"),
        ("plain", "mmlu"),
    ]
    assert complete(["run", "--benchmark"], "h") == [("file", "h"), ("plain", "humaneval"), ("plain", "hf:")]
    assert complete(["x", "y", "--reference"], "") == [
        ("file", ""),
        ("plain", "auto"),
        ("plain", "none"),
        ("plain", "pkg:smollm2-135m-instruct"),
        ("plain", "pkg:gemma-3-270m"),
    ]
    assert complete(["x", "y", "--tests"], "min-k,z") == [("plain", "min-k,zlib")]
    after = [value for _, value in complete(["run", "--tests"], "zlib,min-k")]
    assert after == ["zlib,min-k", "zlib,min-k++"]  # zlib, chosen already, is not offered again
    assert complete(["x", "y", "--control"], "qu") == [("file", "qu")]
    assert complete(["x", "y", "--device"], "c") == [("plain", "cpu"), ("plain", "cuda")]


def test_the_installed_command_writes_the_shell_scripts_and_answers_a_shell(tmp_path: Path):
    command = Path(sys.executable).with_name("contamcheck")
    for shell in ("bash", "zsh", "fish"):
        env = {**os.environ, "_CONTAMCHECK_COMPLETE": f"{shell}_source"}
        script = subprocess.run([command], env=env, capture_output=True, text=True, check=True).stdout
        assert "_CONTAMCHECK_COMPLETE" in script and "contamcheck" in script
    env = {
        **os.environ,
        "_CONTAMCHECK_COMPLETE": "bash_complete",
        "COMP_WORDS": "contamcheck pkg:smollm2-135m-instruct gs",
        "COMP_CWORD": "2",
    }
    answer = subprocess.run([command], env=env, capture_output=True, text=True, check=True, cwd=tmp_path)
    assert answer.stdout.splitlines() == ["file,gs", "plain,gsm8k"]

"""Standard output read by something other than a person at a terminal: a pipe, a log, ``| head``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = str(Path(__file__).parents[2] / "docs" / "example" / "report.json")  # "No evidence found": 0


def contamcheck(*args: str, close_stdout: bool = False, encoding: str = "utf-8") -> tuple[int, str, str]:
    forcing = ("COLUMNS", "FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")  # as a terminal would
    env = {key: value for key, value in os.environ.items() if key not in forcing}
    process = subprocess.Popen(
        [sys.executable, "-m", "contamcheck", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding=encoding,
        env={**env, "PYTHONIOENCODING": encoding},
    )
    if close_stdout:  # the reader is gone before anything is written: every write meets a closed pipe
        assert process.stdout is not None
        process.stdout.close()
        stdout = ""
        stderr = process.stderr.read() if process.stderr else ""
        return process.wait(), stdout, stderr
    stdout, stderr = process.communicate()
    return process.returncode, stdout, stderr


@pytest.mark.parametrize(
    "args", [("report", EXAMPLE), ("report", "--json", EXAMPLE), ("benchmarks",), ("cache", "info")]
)
def test_a_reader_that_stops_early_leaves_the_exit_code_and_says_nothing(args: tuple[str, ...]) -> None:
    """Rich's own handling exits with 1, a verdict's code, and --json failed as an internal error."""
    code, _, stderr = contamcheck(*args, close_stdout=True)
    assert (code, stderr) == (0, "")


def test_a_report_in_a_log_keeps_its_lines_whole() -> None:
    code, stdout, stderr = contamcheck("report", EXAMPLE)
    assert code == 0, stderr
    lines = stdout.splitlines()
    assert not [line for line in lines if line.endswith(" ")]
    # each test's line holds its p-value; at 80 columns "(p = " ended one line and "0.31)" began the next
    test_lines = [line for line in lines if line.startswith(("  ✓ ", "  ✗ ", "  ! "))]
    assert len(test_lines) >= 5
    assert all(line.rstrip().endswith(")") or "uncalibrated" in line for line in test_lines)
    assert any(len(line) > 100 for line in lines)


@pytest.mark.parametrize("args", [("report", EXAMPLE), ("report", "--json", EXAMPLE)])
def test_a_closed_standard_output_leaves_the_exit_code(args: tuple[str, ...]) -> None:
    """`>&-`: Python has no sys.stdout at all; --json failed as an internal error (3)."""
    done = subprocess.run(
        [sys.executable, "-m", "contamcheck", *args],
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: os.close(1),  # the child starts with no standard output at all
    )
    assert (done.returncode, done.stderr) == (0, "")


@pytest.mark.parametrize("encoding", ["ascii", "cp1252"])
@pytest.mark.parametrize(
    "args",
    [("report", EXAMPLE), ("benchmarks",), ("fake:clean", "sample", "-n", "20", "--quick", "--no-cache")],
)
def test_a_terminal_that_is_not_utf8_gets_what_it_can_show(args: tuple[str, ...], encoding: str) -> None:
    """A check mark or a minus sign stopped the command with a traceback (exit 1, a verdict's code)
    or an internal error: they are "?" there, and the tables ASCII."""
    code, stdout, stderr = contamcheck(
        *args, "--no-cache" if "fake:clean" in args else "--", encoding=encoding
    )
    assert code == 0, stderr
    assert "Traceback" not in stderr and "Error" not in stderr
    assert "No evidence found" in stdout or "canonical-order" in stdout


def test_a_terminal_told_how_to_replace_keeps_its_way() -> None:
    """PYTHONIOENCODING=ascii:backslashreplace is a choice: kept, not turned into "?"."""
    env = {**os.environ, "PYTHONIOENCODING": "ascii:backslashreplace"}
    done = subprocess.run(
        [sys.executable, "-m", "contamcheck", "report", EXAMPLE], capture_output=True, env=env, check=False
    )
    assert done.returncode == 0 and b"\\u2713" in done.stdout and b"?" not in done.stdout
    assert b"Traceback" not in done.stderr

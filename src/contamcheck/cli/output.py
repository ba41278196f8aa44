"""Standard output for the commands: a report readable in a log, and a reader that stops early.

Rich wraps lines at 80 columns when standard output is no terminal, so a CI log or a file would hold
a report cut mid-phrase ("(p = " on one line, "0.50)" on the next) with spaces at the line ends;
there, lines are written whole unless ``COLUMNS`` asks for a width. A reader that stops early
(``| head``) closes the pipe: rich then exits with 1, the code of a verdict reached, which a CI step
would read as one. Here what is left goes nowhere and the command keeps its own exit code (its
files were written before anything was printed).
"""

from __future__ import annotations

import os
import sys
from typing import Any

from rich.console import Console


class _Console(Console):
    def on_broken_pipe(self) -> None:
        _drop_stdout()
        self.quiet = True


def _drop_stdout() -> None:
    """The reader has gone: standard output goes to the null device from here on (Python's own flush
    at exit included, which would otherwise fail)."""
    try:
        fileno = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # no file behind it (a test's capture): nothing to mend
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fileno)
    os.close(devnull)


def _asked_width() -> bool:
    """Does ``COLUMNS`` set a width (rich ignores an empty or non-numeric one)?"""
    return os.environ.get("COLUMNS", "").strip().isdigit()


def stdout_console(**options: Any) -> Console:
    """A console on standard output; where that is no terminal and no width is asked for, its lines
    are not wrapped; where it was closed (``>&-``), a console that writes nothing."""
    if sys.stdout is None:
        return _Console(**{**options, "quiet": True})
    console = _Console(**options)
    if not console.is_terminal and not _asked_width() and "width" not in options:
        console.soft_wrap = True
    return console


def write_stdout(text: str) -> None:
    """``text`` on standard output, dropped where the reader has stopped (or it was closed: ``>&-``)."""
    if sys.stdout is None:
        return
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        _drop_stdout()

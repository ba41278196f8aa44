"""The few error types contamcheck raises, and the exit code each one means.

Every message is written for the person at the terminal: what was wrong (with the value) and how
to fix it. The CLI prints the message on one line and exits with ``exit_code``; a traceback is
shown only with ``--debug``.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class ContamcheckError(Exception):
    """Base class: an error we expected and can explain."""

    exit_code = 3


class InputError(ContamcheckError):
    """Something the user gave us is wrong: a flag, a file, a benchmark, a model path (exit 2)."""

    exit_code = 2


class ModelLoadError(ContamcheckError):
    """A model could not be loaded or reached (exit 3)."""

    exit_code = 3


class RuntimeFailure(ContamcheckError):
    """The audit started but could not finish: out of memory, a backend failure (exit 3)."""

    exit_code = 3


class UnknownNameError(InputError):
    """A name that is not in a registry, with suggestions."""

    def __init__(self, kind: str, name: str, available: Iterable[str], hint: str = "") -> None:
        choices = sorted(available)
        close = difflib.get_close_matches(name, choices, n=1, cutoff=0.6)
        if not close and name:
            close = [c for c in choices if c.startswith(name.lower()) or name.lower() in c][:1]
        message = f"Unknown {kind} {name!r}."
        if close:
            message += f" Did you mean {close[0]!r}?"
        message += f" Available: {', '.join(choices)}."
        if hint:
            message += f" {hint}"
        super().__init__(message)
        self.name = name
        self.suggestion = close[0] if close else None


class ReportUnreadable(InputError):
    """A saved report that can't be read: missing, not JSON, another schema, or one that contradicts
    itself (edited)."""


class ReportInvalid(InputError):
    """A report changed in memory so that it contradicts itself (or holds a value no report holds):
    refused before it is written or rendered, as ``read_report`` would refuse the file."""

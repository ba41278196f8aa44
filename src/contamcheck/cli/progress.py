"""Progress on stderr: bars on a terminal, plain lines elsewhere (a CI log, a file), none when quiet.

Plain lines say when each step starts, each quarter of it, and when it ends, with the seconds it
took: a long audit in a CI log shows that it is moving, without a bar's redraws filling the log.
"""

from __future__ import annotations

import time
from types import TracebackType
from typing import Literal

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from ..evidence.engine import FAILED

ProgressMode = Literal["bars", "lines", "off"]


class ProgressBars:
    """A progress callback ``(label, done, total)`` drawing one bar per label (total 0 = spinner),
    or writing plain lines (``mode="lines"``)."""

    def __init__(self, console: Console, mode: ProgressMode) -> None:
        self.mode = mode
        self.enabled = mode == "bars"
        self._console = console
        self._tasks: dict[str, TaskID] = {}
        self._lines: dict[str, tuple[float, int]] = {}  # label -> (started, quarters said)
        self._progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=console,
            transient=True,
            disable=not self.enabled,
        )

    def __enter__(self) -> ProgressBars:
        self._progress.__enter__()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        try:
            self._progress.__exit__(kind, value, trace)
        except OSError:
            if kind is None:
                raise
            # leaving on an error (SIGHUP: the terminal is gone, and clearing the bars can't be
            # written): the error that stopped the audit is the one to say, with its exit code

    def __call__(self, label: str, done: int, total: int) -> None:
        if self.mode == "lines":
            self._line(label, done, total)
        if not self.enabled:
            return
        if total == FAILED:  # the error (or the report) says why; its bar goes
            if label in self._tasks:
                self._progress.remove_task(self._tasks.pop(label))
            return
        task = self._tasks.get(label)
        if task is None:
            task = self._progress.add_task(label, total=total or None)
            self._tasks[label] = task
        self._progress.update(task, completed=done, total=total or None)

    def _line(self, label: str, done: int, total: int) -> None:
        now = time.monotonic()
        if label in self._lines and self._lines[label][1] == 4 and done == 0 and total == 0:
            del self._lines[label]  # a step done that starts again (another wait for the cache) is new
        if label not in self._lines:
            self._lines[label] = (now, 0)
            if total != FAILED:
                self._write(f"{label}: {total} to do" if total else f"{label} …")
        started, said = self._lines[label]
        if total == FAILED:
            del self._lines[label]  # a step that starts again under its label (the next reference) is new
            self._write(f"{label}: failed ({now - started:.0f} s)")
            return
        if not total or done < total:
            quarter = 4 * done // total if total else 0
            if quarter > said:
                self._lines[label] = (started, quarter)
                self._write(f"{label}: {done}/{total} ({now - started:.0f} s)")
            return
        if said < 4:
            self._lines[label] = (started, 4)
            counted = f" {done}/{total}" if total > 1 else ""
            self._write(f"{label}:{counted} done ({now - started:.0f} s)")

    def _write(self, text: str) -> None:
        stream = self._console.file
        stream.write(text + "\n")
        stream.flush()

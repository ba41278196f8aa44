"""Progress bars on the terminal (stderr), quiet everywhere else."""

from __future__ import annotations

from types import TracebackType

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


class ProgressBars:
    """A progress callback ``(label, done, total)`` drawing one bar per label; total 0 = spinner."""

    def __init__(self, console: Console, enabled: bool) -> None:
        self.enabled = enabled
        self._tasks: dict[str, TaskID] = {}
        self._progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=console,
            transient=True,
            disable=not enabled,
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
        self._progress.__exit__(kind, value, trace)

    def __call__(self, label: str, done: int, total: int) -> None:
        if not self.enabled:
            return
        task = self._tasks.get(label)
        if task is None:
            task = self._progress.add_task(label, total=total or None)
            self._tasks[label] = task
        self._progress.update(task, completed=done, total=total or None)

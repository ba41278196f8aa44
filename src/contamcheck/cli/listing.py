"""``contamcheck benchmarks``: what is built in."""

from __future__ import annotations

from rich.table import Table

from ..benchmarks import BUILTINS
from ..methods import TESTS
from ..methods.base import Test
from .output import stdout_console


def print_listing() -> None:
    console = stdout_console()
    if not console.is_terminal:  # a pipe or a CI log: no terminal to fit, so nothing is cut short
        console = stdout_console(width=200)
    benchmarks = Table(title="Built-in benchmarks", title_justify="left", show_lines=False)
    for column in ("name", "what", "source", "field", "public since"):
        benchmarks.add_column(column, overflow="fold")  # a dataset id wraps, never ends in "…"
    for b in BUILTINS.values():
        source = f"{b.dataset} ({b.split})" if b.dataset else "bundled"
        if b.offline and b.dataset:
            source += f"; offline: {b.offline}"
        elif b.dataset:  # the Hub or its cached copy; else pass the dataset's file
            source += "; offline, pass its downloaded file"
        benchmarks.add_row(b.name, b.title, source, b.field, b.released)
    console.print(benchmarks)
    console.print(
        "Or a .jsonl/.json/.csv/.txt/.parquet file (optionally .gz), or hf:dataset[:config]:split:field.\n"
    )

    tests = Table(title="Tests", title_justify="left")
    for column in ("name", "kind", "calibrated", "measures"):
        tests.add_column(column, overflow="fold")
    for name in TESTS.names():
        kind, _, calibrated = described(TESTS.get(name))
        tests.add_row(name, kind, calibrated, TESTS.get(name).measures)
    console.print(tests)


def described(test: type[Test]) -> tuple[str, bool, str]:
    """A test's kind and calibration as an audit on number twins judges it (``pipeline.runners``)."""
    if test.likelihood:
        return "bulk", True, "yes: against the benchmark's own bulk (--reference or --control sharpen it)"
    if test.calibrated:
        return test.kind, True, "yes"
    if test.calibrated_against(control_file=True):
        return (
            test.kind,
            False,
            "only with --control; alone it is shown and does not move the verdict",
        )
    return test.kind, False, "no: shown, does not move the verdict"

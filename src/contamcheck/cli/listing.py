"""``contamcheck benchmarks``: what is built in."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from ..benchmarks import BUILTINS
from ..methods import TESTS


def print_listing() -> None:
    console = Console()
    benchmarks = Table(title="Built-in benchmarks", title_justify="left", show_lines=False)
    for column in ("name", "what", "source", "field", "public since"):
        benchmarks.add_column(column)
    for b in BUILTINS.values():
        source = f"{b.dataset} ({b.split})" if b.dataset else "bundled"
        if b.offline and b.dataset:
            source += f"; offline: {b.offline}"
        benchmarks.add_row(b.name, b.title, source, b.field, b.released)
    console.print(benchmarks)
    console.print(
        "Or a .jsonl/.json/.csv/.txt/.parquet file (optionally .gz), or hf:dataset[:config]:split:field.\n"
    )

    tests = Table(title="Tests", title_justify="left")
    for column in ("name", "kind", "calibrated", "measures"):
        tests.add_column(column)
    for name in TESTS.names():
        test = TESTS.get(name)
        calibrated = "with a reference or control file" if test.likelihood else "yes"
        tests.add_row(name, test.kind, calibrated, test.measures)
    console.print(tests)

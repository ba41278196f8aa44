"""``contamcheck MODEL BENCHMARK`` and ``contamcheck run``: build the config, audit, render, exit."""

from __future__ import annotations

import sys
from typing import Any

from rich.console import Console

from ..config import AuditConfig
from ..report import io
from ..report.model import Report
from ..report.terminal import render
from .progress import ProgressBars


def config_from_options(model: str, benchmark: str, options: dict[str, Any]) -> AuditConfig:
    tests = (
        [t.strip() for t in options["tests"].split(",") if t.strip()]
        if options.get("tests") is not None
        else None
    )
    return AuditConfig(
        model=model,
        benchmark=benchmark,
        field=options.get("field"),
        limit=options["limit"],
        seed=options["seed"],
        control=options.get("control"),
        control_field=options.get("control_field"),
        reference=options["reference"],
        tests=tests,
        quick=options["quick"],
        k=options["k"],
        alpha=options["alpha"],
        permutations=options.get("permutations"),
        fail_on=options["fail_on"],
        twins=options["twins"],
        batch_size=options.get("batch_size"),
        device=options["device"],
        dtype=options["dtype"],
        threads=options.get("threads"),
        trust_remote_code=options["trust_remote_code"],
        ordered=not options["no_order"],
        cache=options.get("cache"),
        no_cache=options["no_cache"],
        order_shards=options["order_shards"],
        order_permutations=options["order_permutations"],
    )


def run_audit(model: str, benchmark: str, options: dict[str, Any]) -> int:
    from ..pipeline import audit

    config = config_from_options(model, benchmark, options)
    output = io.check_writable(options["output"], "--output") if options.get("output") else None
    quiet = options["quiet"] or options["as_json"]
    console = Console(stderr=True)
    with ProgressBars(console, enabled=not quiet and console.is_terminal) as progress:
        report = audit(config, progress=progress)
    show_report(report, {**options, "output": output})
    return report.verdict.exit_code


def show_report(report: Report, options: dict[str, Any]) -> None:
    """Write and print a report as the output options say."""
    if options.get("output"):
        io.write_atomic(options["output"], io.to_json(report))
    if options["as_json"]:
        sys.stdout.write(io.to_json(report))
    elif not options["quiet"]:
        render(report, Console())


def rerender(path: str, options: dict[str, Any]) -> int:
    report = io.read_report(path)
    if options.get("output"):
        io.check_writable(options["output"], "--output")
    show_report(report, options)
    return report.verdict.exit_code


def show_cache(folder: str | None) -> int:
    from ..evidence.cache import EvidenceCache

    summary = EvidenceCache(folder).summary()
    console = Console()
    console.print(f"cache: {summary['path']} ({summary['bytes'] / 2**20:.1f} MiB)")
    if not summary["models"]:
        console.print("no evidence stored")
    for entry in summary["models"]:
        console.print(f"  {entry['model']}: {entry['entries']} entries")
    return 0


def clear_cache(folder: str | None) -> int:
    from ..evidence.cache import EvidenceCache

    cache = EvidenceCache(folder)
    removed = cache.clear()
    Console().print(f"removed {removed} evidence entries from {cache.path}")
    return 0

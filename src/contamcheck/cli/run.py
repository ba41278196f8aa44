"""``contamcheck MODEL BENCHMARK`` and ``contamcheck run``: build the config, audit, render, exit."""

from __future__ import annotations

import sys
from typing import Any

from rich.console import Console

from ..config import AuditConfig
from ..report import io
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
    )


def run_audit(model: str, benchmark: str, options: dict[str, Any]) -> int:
    from ..pipeline import audit

    config = config_from_options(model, benchmark, options)
    output = io.check_writable(options["output"], "--output") if options.get("output") else None
    quiet = options["quiet"] or options["as_json"]
    console = Console(stderr=True)
    with ProgressBars(console, enabled=not quiet and console.is_terminal) as progress:
        report = audit(config, progress=progress)
    if output is not None:
        io.write_atomic(output, io.to_json(report))
    if options["as_json"]:
        sys.stdout.write(io.to_json(report))
    elif not options["quiet"]:
        render(report, Console())
    return report.verdict.exit_code

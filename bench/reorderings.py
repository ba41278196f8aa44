"""What canonical-order's shards and reorderings cost in the README's demo audit, measured in one run.

The demo (SmolLM2-135M-Instruct on 100 HumanEval prompts, no reference) audited cold (a fresh
evidence cache, the dequantised model copy already made) once per ``--order-shards`` and
``--order-permutations`` pair, one after another in fresh processes: wall time, the model's
compute, the texts scored, and canonical-order's result. More reorderings caught a model that saw
GSM8K three times as a file that 5 only warned of, and 20 shards of 20 carried the verdict of an
audit of every test (docs/VALIDATION.md); this is their price in the audit people run first.
Ratios matter, not absolute times (the machine is shared).

    cd bench && python reorderings.py --shards 10 20 --reorderings 5 20 --threads 2 \
        --out results-reorderings.json   # the run bench/results-reorderings.json holds
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from speed import fresh_cache, run_audit


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--reorderings", type=int, nargs="+", default=[5, 10, 20])
    parser.add_argument("--shards", type=int, nargs="+", default=[10], help="each with every --reorderings")
    parser.add_argument("--benchmark", default="humaneval")
    parser.add_argument("--limit", type=int, default=100)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--converted",
        type=Path,
        default=Path.home() / ".cache" / "contamcheck" / "converted",
        help="a cache's converted/ folder holding the dequantised model (made by any first run)",
    )
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    if not args.converted.is_dir():
        raise SystemExit(
            f"{args.converted} is no folder: run the README's demo once first, or pass --converted"
        )

    root = Path(tempfile.mkdtemp(prefix="contamcheck-bench-"))
    runs: dict[str, Any] = {}
    try:
        for shards in args.shards:
            for count in args.reorderings:
                print(f"cold audit, {shards} shards of {count} reorderings", flush=True)
                report = run_audit(
                    args.benchmark,
                    args.limit,
                    fresh_cache(root, args.converted),
                    args.threads,
                    "--order-shards",
                    str(shards),
                    "--order-permutations",
                    str(count),
                )
                evidence = report["run"]["evidence"]["model"]
                order = next(t for t in report["tests"] if t["name"] == "canonical-order")
                runs[f"{shards}x{count}"] = {
                    "wall_s": report["_wall_s"],
                    "engine_compute_s": evidence["compute_seconds"],
                    "requests": evidence["requested"],
                    "tokens_scored": evidence["tokens_scored"],
                    "canonical_order": {k: order.get(k) for k in ("status", "p_value", "statistic", "n")},
                    "verdict": report["verdict"]["label"],
                }
    finally:
        shutil.rmtree(root, ignore_errors=True)
    first = next(iter(runs.values()))
    for setting, run in runs.items():
        run["wall_ratio"] = run["wall_s"] / first["wall_s"]
        print(
            f"{setting:>6} (shards x reorderings): {run['wall_s']:.0f} s ({run['wall_ratio']:.2f}x), "
            f"{run['requests']} texts, canonical-order p = {run['canonical_order']['p_value']}",
            flush=True,
        )
    settings = {"benchmark": args.benchmark, "limit": args.limit, "threads": args.threads}
    args.out.write_text(json.dumps({"settings": settings, "runs": runs}, indent=2) + "\n")


if __name__ == "__main__":
    main()

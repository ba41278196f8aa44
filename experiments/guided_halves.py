"""guided on a benchmark cut in two: one half audited, the other half its control file.

A model treats two random halves of one benchmark alike unless it saw one and not the other, so
for a model that saw neither (or both), the control setting should flag about 5% whatever the
instructions do to the model. Alone, the same half is judged by sign flips on its guided − general
differences, which the instructions' wording can move (docs/METHODS.md, "guided is uncalibrated").
The halves are drawn with ``--seed``; the audited half is written as ``<NAME>/test.jsonl`` so the
guided instruction names the dataset as the model would have seen it named ("the test split of the
HumanEval dataset").

    python experiments/guided_halves.py pkg:smollm2-135m-instruct humaneval --out docs/validation/guided
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

SETTINGS = ("alone", "control")


def write_halves(items: Sequence[Any], name: str, seed: int, folder: Path) -> tuple[Path, Path, int]:
    """(audited half, control half, questions per half): a seeded draw, each half in benchmark order."""
    chosen = set(random.Random(seed).sample(range(len(items)), len(items) // 2))
    audited_half = [i for n, i in enumerate(items) if n in chosen]
    control_half = [i for n, i in enumerate(items) if n not in chosen]
    audited, control = folder / name / "test.jsonl", folder / f"{name}-control.jsonl"
    audited.parent.mkdir(parents=True, exist_ok=True)
    for path, half in ((audited, audited_half), (control, control_half)):
        path.write_text("".join(json.dumps({"id": i.id, "question": i.text}) + "\n" for i in half))
    return audited, control, len(audited_half)


def summary(report: Any) -> dict[str, Any]:
    (guided,) = report.tests
    return {
        "verdict": report.verdict.code,
        "calibrated": guided.calibrated,
        "status": guided.status,
        "n": guided.n,
        "flag_rate": guided.flag_rate,
        "p_value": guided.p_value,
        "p_adjusted": guided.p_adjusted,
        "mean_difference": guided.mean_difference,
        "note": guided.note,
        "skip_reason": guided.skip_reason,
        "seconds": report.run.duration_s,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("model")
    parser.add_argument("benchmark", help="a built-in benchmark or a file")
    parser.add_argument("--name", help="the dataset's name in the guided instruction (default: its title)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--cache", type=Path, default=Path("experiments/runs/cache"))
    parser.add_argument("--work", type=Path, default=Path("experiments/runs/guided-halves"))
    parser.add_argument("--permutations", type=int, help="permutations (default: contamcheck's)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)

    from contamcheck import AuditConfig, audit
    from contamcheck.benchmarks import load_benchmark
    from contamcheck.report.io import to_json, write_atomic

    benchmark = load_benchmark(args.benchmark)
    name = args.name or benchmark.title or "benchmark"
    work = args.work / f"seed{args.seed}"
    audited, control, size = write_halves(benchmark.items, name, args.seed, work)
    model = re.sub(r"[^A-Za-z0-9._-]+", "-", Path(args.model).name.removeprefix("pkg:"))
    slug = f"{model}-{name.lower()}-seed{args.seed}"
    args.out.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {
        "model": args.model,
        "benchmark": args.benchmark,
        "seed": args.seed,
        "settings": {},
    }
    for setting in SETTINGS:
        started = time.perf_counter()
        print(f"[{setting}] {args.model} on half of {name} ({size} questions) ...", flush=True)
        config = AuditConfig(
            model=args.model,
            benchmark=str(audited),
            field="question",
            limit=size,
            tests=["guided"],
            reference="none",
            threads=args.threads,
            cache=str(args.cache),
            **({"control": str(control), "control_field": "question"} if setting == "control" else {}),
            **({"permutations": args.permutations} if args.permutations else {}),
        )
        report = audit(config)
        write_atomic(args.out / f"halves-{slug}-{setting}.json", to_json(report))
        results["settings"][setting] = summary(report)
        print(f"    {report.verdict.label} ({time.perf_counter() - started:.0f} s)", flush=True)
    write_atomic(args.out / f"halves-{slug}.json", json.dumps(results, indent=2) + "\n")
    print(table(results))


def table(results: dict[str, Any]) -> str:
    lines = [
        "| setting | calibrated | n | flagged | p | adjusted p | verdict |",
        "|---|---|---|---|---|---|---|",
    ]
    for setting, s in results["settings"].items():
        if s["status"] == "skipped":
            lines.append(
                f"| {setting} | {s['calibrated']} | – | skipped: {s['skip_reason']} | | | {s['verdict']} |"
            )
            continue
        lines.append(
            f"| {setting} | {'yes' if s['calibrated'] else 'no'} | {s['n']} | {s['flag_rate']:.0%} | "
            f"{s['p_value']:.2g} | {s['p_adjusted']:.2g} | {s['verdict']} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())

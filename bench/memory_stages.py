"""Peak memory and page faults of one audit stage alone (scoring or generation), per malloc setting.

The audit's own requests for a benchmark (default: 50 HumanEval prompts), in the audit's batches
(generation: its last three batches, the longest prompts). ``--malloc`` picks what might return
freed memory to the system: ``trim`` calls ``malloc_trim(0)`` after each scoring batch,
``threshold`` fixes ``M_MMAP_THRESHOLD`` at 128 KiB, ``mmap-only`` at 4 MiB and nothing else, and
``low-memory`` is what the CLI does by default (contamcheck.memory: 4 MiB, and a 64 MiB trim
threshold). Prints the peak resident memory (``ru_maxrss``) after loading and after the stage, the
stage's time and the minor page faults of the process.

    python bench/memory_stages.py --stage score --malloc none --cache /tmp/memory-cache
    python bench/memory_stages.py --stage score --benchmark ../shared/data/gsm8k/test.jsonl \
        --limit 30 --threads 2 --malloc mmap-only --cache /tmp/memory-cache
"""

from __future__ import annotations

import argparse
import ctypes
import resource
import time
from pathlib import Path

from audit_parts import model_and_plan, requests_of


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--stage", choices=["score", "generate"], required=True)
    parser.add_argument(
        "--malloc", choices=["none", "trim", "threshold", "mmap-only", "low-memory"], default="none"
    )
    parser.add_argument("--benchmark", default="humaneval")
    parser.add_argument("--limit", type=int, default=50)
    parser.add_argument("--threads", type=int, help="default: 1 for scoring, 2 for generation")
    parser.add_argument("--cache", type=Path, required=True, help="folder for the dequantised model copy")
    args = parser.parse_args()
    libc = ctypes.CDLL("libc.so.6")
    if args.malloc == "threshold":
        libc.mallopt(-3, 128 * 1024)  # M_MMAP_THRESHOLD
    elif args.malloc == "mmap-only":
        libc.mallopt(-3, 4 * 2**20)
    elif args.malloc == "low-memory":
        from contamcheck.memory import return_freed_memory

        return_freed_memory()

    from contamcheck.evidence import plan_batches

    threads = args.threads or (1 if args.stage == "score" else 2)
    model, plan = model_and_plan(args.benchmark, args.limit, threads, args.cache)
    requests = requests_of(plan, args.stage)
    print(f"after load: {peak_mib():.0f} MiB")
    started = time.perf_counter()
    if args.stage == "score":
        for batch in plan_batches(requests, 16):
            model.score([r.text for r in batch])
            if args.malloc == "trim":
                libc.malloc_trim(0)
    else:
        for batch in plan_batches(requests, 16)[-3:]:
            for chat in (False, True):
                group = [r for r in batch if r.chat == chat]
                if group:
                    model.generate([r.prompt for r in group], [r.max_new_tokens for r in group], chat=chat)
    seconds = time.perf_counter() - started
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    print(
        f"{args.stage}, malloc {args.malloc}: peak {peak_mib():.0f} MiB, {seconds:.1f} s, "
        f"{faults:,} page faults"
    )


if __name__ == "__main__":
    main()

"""Peak memory of one audit stage alone (scoring or generation), with or without a glibc remedy.

The audit's own requests for 50 HumanEval prompts, in the audit's batches (generation: its last three
batches, the longest prompts). ``--malloc`` tries what might return freed memory to the system:
``trim`` calls ``malloc_trim(0)`` after each scoring batch, ``threshold`` fixes
``M_MMAP_THRESHOLD`` at 128 KiB before anything is allocated. Prints the peak resident memory
(``ru_maxrss``) after loading and after the stage.

    python bench/memory_stages.py --stage score --malloc none --cache /tmp/memory-cache
"""

from __future__ import annotations

import argparse
import ctypes
import resource
import time
from pathlib import Path
from typing import Any

MODEL = "pkg:smollm2-135m-instruct"


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--stage", choices=["score", "generate"], required=True)
    parser.add_argument("--malloc", choices=["none", "trim", "threshold"], default="none")
    parser.add_argument("--cache", type=Path, required=True, help="folder for the dequantised model copy")
    args = parser.parse_args()
    libc = ctypes.CDLL("libc.so.6")
    if args.malloc == "threshold":
        libc.mallopt(-3, 128 * 1024)  # M_MMAP_THRESHOLD

    import torch

    from contamcheck.backends import ModelOptions, describe_model, load_model
    from contamcheck.config import AuditConfig
    from contamcheck.evidence import MemoryStore, plan_batches
    from contamcheck.pipeline import plan_audit

    threads = 1 if args.stage == "score" else 2
    torch.set_num_threads(threads)
    options = ModelOptions(device="cpu", threads=threads, cache_dir=args.cache)
    model: Any = load_model(MODEL, options, describe_model(MODEL, options, MemoryStore().file_digest))
    plan = plan_audit(AuditConfig(model=MODEL, benchmark="humaneval", limit=50, reference="none", threads=1))
    requests = [r for r in {r.key: r for r in plan.requests}.values() if r.kind == args.stage]
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
    print(f"{args.stage}, malloc {args.malloc}: peak {peak_mib():.0f} MiB, {seconds:.1f} s")


if __name__ == "__main__":
    main()

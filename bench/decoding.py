"""Greedy decoding of 16 audit prompts: batch size 1 vs a batch of 16, transformers' generate vs ours.

Takes the audit's own generation requests for a benchmark (16 from the middle of the length order,
plain and chat separately), decodes them three ways and checks that our loop writes the very text
batch-size-1 ``generate`` writes:

    python bench/decoding.py ../shared/data/gsm8k/test.jsonl --cache /tmp/decoding-cache
    python bench/decoding.py humaneval --cache /tmp/decoding-cache
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from audit_parts import model_and_plan, requests_of


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("benchmark")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--cache", type=Path, required=True, help="folder for the dequantised model copy")
    args = parser.parse_args()

    import torch

    model, plan = model_and_plan(args.benchmark, 40, args.threads, args.cache)
    requests = requests_of(plan, "generate")
    eos = model.tokenizer.eos_token_id
    print("| 16 prompts | batch 1, generate | batch 16, generate | batch 16, our loop | same text |")
    print("|---|---|---|---|---|")
    for chat in (False, True):
        group = sorted([r for r in requests if r.chat == chat], key=lambda r: (r.length, r.key))[8:24]
        if not group:
            continue
        encoded = model._encode_prompts([r.prompt for r in group], chat)
        limits = [r.max_new_tokens for r in group]
        started = time.perf_counter()
        alone = [
            model._greedy_with_generate([e], [n], eos, torch)[0] for e, n in zip(encoded, limits, strict=True)
        ]
        one = time.perf_counter() - started
        started = time.perf_counter()
        model._greedy_with_generate(encoded, limits, eos, torch)
        batched = time.perf_counter() - started
        started = time.perf_counter()
        ours = model.generate([r.prompt for r in group], limits, chat=chat)
        pruned = time.perf_counter() - started
        same = sum(
            model.tokenizer.decode(a, skip_special_tokens=True) == b for a, b in zip(alone, ours, strict=True)
        )
        kind = "chat (guided)" if chat else "plain (completion)"
        print(f"| {kind} | {one:.1f} s | {batched:.1f} s | {pruned:.1f} s | {same}/{len(group)} |")


if __name__ == "__main__":
    main()

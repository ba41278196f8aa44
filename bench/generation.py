"""Generation alone, the audit's own way: prompts per engine batch, shared prompt beginnings, cache budget.

Takes every generation request of the default audit (completion and guided) and runs them through
the engine's batch plan, as an audit does, once per variant, and checks each variant writes the
very text the first one wrote. A variant is ``PROMPTS:SHARE:BUDGET``: prompts per engine batch,
1/0 for prefilling a batch's common prompt beginning once, and the key/value cache budget as a
multiple of the default:

    python bench/generation.py ../shared/data/gsm8k/test.jsonl --limit 50 --cache DIR \\
        --variants 16:0:1,16:1:1,64:0:1,64:1:1,64:1:2

DIR is a folder for the dequantised model copy (an audit's cache folder works). First it prints
how the backend splits each engine batch of the audit's size to fit its cache budget (progress is
reported after each part), and how many parts share a beginning while the part, its longest prompt
and largest budget, could outgrow the model's attention window (those run unshared: ``HFModel._prefill``);
``--parts-only`` stops there. ``--model`` audits another model than SmolLM2:

    python bench/generation.py humaneval --limit 164 --model pkg:gemma-3-270m --cache DIR --parts-only
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from audit_parts import MODEL, model_and_plan, requests_of

from contamcheck.pipeline.handles import CPU_BATCH_SIZE, GENERATION_BATCH_FACTOR

GENERATION_BATCH = CPU_BATCH_SIZE * GENERATION_BATCH_FACTOR  # an audit's on CPU (handles.auto_batch_sizes)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("benchmark")
    parser.add_argument("--limit", type=int, default=50)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--cache", type=Path, required=True, help="folder for the dequantised model copy")
    parser.add_argument("--variants", default="16:0:1,16:1:1,64:0:1,64:1:1,64:1:2")
    parser.add_argument("--model", default=MODEL, help="the model to audit (default: %(default)s)")
    parser.add_argument(
        "--parts-only", action="store_true", help="print how the backend splits each batch, time nothing"
    )
    args = parser.parse_args()

    import numpy as np

    from contamcheck.backends import hf
    from contamcheck.evidence import plan_batches
    from contamcheck.evidence.engine import _run

    model, plan = model_and_plan(args.benchmark, args.limit, args.threads, args.cache, args.model)
    requests = requests_of(plan, "generate")
    for chat in (False, True):
        group = [r for r in requests if r.chat == chat]
        encoded = model._encode_prompts([r.prompt for r in group], chat)
        families: dict[tuple[int, ...], list[list[int]]] = {}
        for ids in encoded:
            families.setdefault(tuple(ids[: hf.FAMILY_TOKENS]), []).append(ids)
        shared = [
            f"{len(f)} prompts share {hf._shared_length(f)} tokens of {np.mean([len(i) for i in f]):.0f}"
            for f in families.values()
            if len(f) > 1
        ]
        print(f"{'chat' if chat else 'plain'} prompts: {len(group)}; alike: {'; '.join(shared) or 'none'}")
    default_budget = model.cache_token_budget
    parts = []  # how the backend splits each engine batch of the default size: one progress report each
    sharing, past_window = 0, 0  # parts that share a beginning; of them, those that outgrow the window
    for batch in plan_batches(requests, GENERATION_BATCH):
        parts.append([])
        for chat in sorted({r.chat for r in batch}):  # as the engine runs it (evidence.engine._run)
            group = [r for r in batch if r.chat == chat]
            indices, limits = list(range(len(group))), [r.max_new_tokens for r in group]
            encoded = model._encode_prompts([r.prompt for r in group], chat)
            split = list(model._generation_batches(indices, encoded, limits))
            parts[-1].extend(len(part) for part in split)
            for part in split:
                if hf._shared_length([encoded[i] for i in part]):
                    sharing += 1
                    reach = max(len(encoded[i]) for i in part) + max(limits[i] for i in part)
                    past_window += bool(model.attention_window and reach > model.attention_window)
    sizes = [size for batch in parts for size in batch]
    print(
        f"engine batches of {GENERATION_BATCH}: {len(parts)}, split by the backend into {len(sizes)} parts "
        f"of {min(sizes)}-{max(sizes)} prompts (median {int(np.median(sizes))}): {parts}"
    )
    print(
        f"parts that share a beginning: {sharing}; of them past the model's attention window "
        f"({model.attention_window or 'none'} tokens), so run unshared: {past_window}"
    )
    if args.parts_only:
        return
    first: list[Any] | None = None
    print(f"{len(requests)} generation requests, {args.threads} threads")
    print("| prompts per batch | shared beginning | cache budget | time | same text as the first |")
    print("|---|---|---|---|---|")
    for variant in filter(None, args.variants.split(",")):
        prompts, share, budget = variant.split(":")
        model._share_prefix = share == "1"
        model.cache_token_budget = int(default_budget * float(budget))
        started = time.perf_counter()
        texts = [text for batch in plan_batches(requests, int(prompts)) for text in _run(model, batch)]
        seconds = time.perf_counter() - started
        first = first or texts
        same = sum(a == b for a, b in zip(first, texts, strict=True))
        print(
            f"| {prompts} | {'once' if share == '1' else 'per row'} | {budget}x | {seconds:.1f} s "
            f"| {same}/{len(texts)} |",
            flush=True,
        )


if __name__ == "__main__":
    main()

"""Peak memory and time of scoring one text longer than the model's window: whole, or cut and by parts.

A question of 10 MB (a hostile or broken benchmark row) is scored on the window's first tokens.
Before 2026-12-06 the transformers backend tokenized all of it and held the window's [tokens x
vocab] logits at once (8,192 x 49,152 floats: 1.6 GB);
now it cuts the text first (``HFModel.char_limit``) and applies the output layer a block of positions
at a time (``HFModel._logits_by_parts``). Each way runs in a fresh process, one after the other in
one run of this script, so the ratios compare like with like; the log-probs of both are compared.

    python bench/long_texts.py --model pkg:smollm2-135m-instruct --chars 10000000 --threads 2 \\
        --out bench/results-long-texts.json
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

SENTENCE = "Janet's ducks lay 16 eggs per day. She eats three for breakfast and bakes muffins with four. "


def child(model_spec: str, chars: int, way: str, threads: int, save: Path) -> None:
    import torch

    from contamcheck.backends import ModelOptions, load_model

    torch.set_num_threads(threads)
    model = load_model(model_spec, ModelOptions(device="cpu"))
    loaded = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if way == "whole":  # as before: the whole text tokenized, the window's logits at once
        model.char_limit = None
        model._by_parts = False
    text = (SENTENCE * (chars // len(SENTENCE) + 1))[:chars]
    start = time.perf_counter()
    (stats,) = model.score([text])
    seconds = time.perf_counter() - start
    np.save(save, stats.logprobs)
    print(
        json.dumps(
            {
                "way": way,
                "tokens_scored": stats.num_tokens,
                "truncated": stats.truncated,
                "seconds": round(seconds, 2),
                "peak_after_loading_mib": round(loaded),
                "peak_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", default="pkg:smollm2-135m-instruct")
    parser.add_argument("--chars", type=int, default=10_000_000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--child", choices=["whole", "parts"], help=argparse.SUPPRESS)
    parser.add_argument("--save", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.model, args.chars, args.child, args.threads, args.save)
        return
    results = {}
    for way in ("whole", "parts"):
        save = Path(f"/tmp/long-texts-{way}.npy")
        done = subprocess.run(
            [sys.executable, __file__, "--model", args.model, "--chars", str(args.chars), "--threads",
             str(args.threads), "--child", way, "--save", str(save)],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        results[way] = json.loads(done.stdout.strip().splitlines()[-1])
        print(results[way], flush=True)
    whole, parts = (np.load(f"/tmp/long-texts-{way}.npy") for way in ("whole", "parts"))
    results["summary"] = {
        "model": args.model,
        "chars": args.chars,
        "max_abs_logprob_difference": float(np.max(np.abs(whole - parts))),
        "peak_ratio_whole_to_parts": round(results["whole"]["peak_mib"] / results["parts"]["peak_mib"], 2),
        "scoring_mib_whole": results["whole"]["peak_mib"] - results["whole"]["peak_after_loading_mib"],
        "scoring_mib_parts": results["parts"]["peak_mib"] - results["parts"]["peak_after_loading_mib"],
        "time_ratio_whole_to_parts": round(results["whole"]["seconds"] / results["parts"]["seconds"], 2),
    }
    print(results["summary"])
    if args.out:
        args.out.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()

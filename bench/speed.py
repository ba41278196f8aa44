"""Speed and memory of the audit pipeline, measured in one run on this machine.

For each benchmark (200 GSM8K questions, the 164 HumanEval prompts) and SmolLM2-135M-Instruct:

* **cold**: the default audit in a fresh process with an empty evidence cache (the dequantised
  model copy already made, as after any first run), wall time and peak memory; once more with
  ``--no-low-memory`` (freed memory kept by the allocator): the time and memory that setting trades;
* **warm**: the same audit again: everything from the cache;
* **floor**: the pure model compute for the same batches: the audit's own batch plan, each batch
  tokenised beforehand, then only the forward passes and the decoding loop timed, in a process
  that returns freed memory as the audit does;
* **naive**: the earlier designs' way on a subset: each test makes its own passes, one text at a
  time, through the standard transformers code path (forward passes, ``generate`` with its KV
  cache), same threads; compared with our cold audit of the same subset;
* **bf16**: the cold audit in bfloat16: speed, and agreement of per-question scores and flags with
  float32.

Ratios matter, not absolute times (the machine is shared): each is measured within one run.

    python bench/speed.py --gsm8k ../shared/data/gsm8k/test.jsonl --threads 2 --out bench/results.json
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from audit_parts import MODEL, model_and_plan, requests_of

PER_ITEM_TESTS = ("completion", "min-k", "min-k++", "zlib", "guided")


def run_audit(benchmark: str, limit: int, cache: Path, threads: int, *extra: str) -> dict[str, Any]:
    """One audit in a fresh process; returns its report with the wall time measured outside."""
    cache.mkdir(parents=True, exist_ok=True)
    output = cache / f"report-{time.monotonic_ns()}.json"
    command = [
        sys.executable, "-m", "contamcheck", MODEL, benchmark, "-n", str(limit), "--reference", "none",
        "--threads", str(threads), "--cache", str(cache), "-o", str(output), "-q", *extra,
    ]  # fmt: skip
    started = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if not output.exists():
        raise SystemExit(f"audit failed ({result.returncode}): {result.stderr}")
    report = json.loads(output.read_text())
    report["_wall_s"] = wall
    return report


def fresh_cache(root: Path, converted: Path | None) -> Path:
    folder = Path(tempfile.mkdtemp(dir=root))
    if converted is not None:
        shutil.copytree(converted, folder / "converted")
    return folder


def floor_seconds(
    benchmark: str, limit: int, batch_size: int, generation_batch_size: int, threads: int, converted: Path
) -> dict[str, float]:
    """Forward passes and decoding steps alone, on the audit's own batches, tokenised beforehand."""
    import torch

    from contamcheck.evidence import plan_batches

    model, plan = model_and_plan(benchmark, limit, threads, converted.parent)
    scored = generated = 0.0
    tokens = 0
    for batch in plan_batches(requests_of(plan, "score"), batch_size):
        encoded = [list(model.tokenizer(r.text)["input_ids"])[: model.context_length] for r in batch]
        for group in model._token_batches([len(e) for e in encoded]):
            sequences = [encoded[i] for i in group]
            width = max(len(s) for s in sequences)
            pad = model.tokenizer.pad_token_id
            ids = torch.tensor([s + [pad] * (width - len(s)) for s in sequences])
            mask = torch.tensor([[1] * len(s) + [0] * (width - len(s)) for s in sequences])
            started = time.perf_counter()
            with torch.inference_mode():
                model.model(input_ids=ids, attention_mask=mask)
            scored += time.perf_counter() - started
            tokens += sum(len(s) for s in sequences)
    for batch in plan_batches(requests_of(plan, "generate"), generation_batch_size):
        for chat in sorted({r.chat for r in batch}):
            group = [r for r in batch if r.chat == chat]
            encoded = model._encode_prompts([r.prompt for r in group], chat)
            limits = [r.max_new_tokens for r in group]
            eos = model.tokenizer.eos_token_id
            started = time.perf_counter()
            for sub in model._generation_batches(list(range(len(group))), encoded, limits):
                model._greedy([encoded[i] for i in sub], [limits[i] for i in sub], eos, torch)
            generated += time.perf_counter() - started
    return {
        "forward_s": scored,
        "generate_s": generated,
        "total_s": scored + generated,
        "tokens_scored": tokens,
    }


def floor_like_the_audit(*args: Any) -> dict[str, float]:
    """The floor in a process of its own that returns freed memory as the CLI's audit does.

    glibc's setting can't be undone within a process, and the naive pipeline (run here) keeps the
    defaults the earlier designs ran with.
    """
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return dict(pool.apply(_floor_returning_freed_memory, args))


def _floor_returning_freed_memory(*args: Any) -> dict[str, float]:
    from contamcheck.memory import return_freed_memory

    return_freed_memory()
    return floor_seconds(*args)


def naive_seconds(benchmark: str, limit: int, threads: int, converted: Path) -> float:
    """Each test's own passes, one text at a time, through the standard transformers path."""
    import torch

    from contamcheck.evidence import GenerateRequest, ScoreRequest

    model, plan = model_and_plan(benchmark, limit, threads, converted.parent)
    started = time.perf_counter()
    for test in plan.tests:  # every test on its own: no sharing of passes between tests
        requests = []
        if test.likelihood:
            requests = [ScoreRequest(t) for t in plan.texts]
        elif test.name == "completion":
            requests = [r for t in plan.texts for r in test.requests(t)]  # type: ignore[attr-defined]
        elif test.name == "guided":
            requests = [r for item in plan.controls.items for r in test.requests(item.text)]  # type: ignore[attr-defined]
        elif test.name == "canonical-order" and isinstance(plan.shard_plans[test.name], list):
            requests = test.requests(plan.shard_plans[test.name])  # type: ignore[attr-defined]
        for request in requests:
            with torch.inference_mode():
                if isinstance(request, ScoreRequest):
                    ids = model.tokenizer(request.text, return_tensors="pt").input_ids[
                        :, : model.context_length
                    ]
                    logits = model.model(input_ids=ids).logits[0, :-1].float()
                    logp = torch.log_softmax(logits, -1)
                    realised = logp.gather(-1, ids[0, 1:, None])
                    if test.name == "min-k++":
                        p = logp.exp()
                        mean = (p * logp).sum(-1)
                        _ = ((p * logp.square()).sum(-1) - mean.square()).sqrt()
                    _ = realised.sum()
                elif isinstance(request, GenerateRequest):  # transformers' own generate, batch size 1
                    (ids,) = model._encode_prompts([request.prompt], request.chat)
                    eos = model.tokenizer.eos_token_id
                    model._greedy_with_generate([ids], [request.max_new_tokens], eos, torch)
    return time.perf_counter() - started


def agreement(fp32: dict[str, Any], bf16: dict[str, Any]) -> dict[str, Any]:
    """Per test: correlation of per-question differences, share of equal flags, both p-values."""
    out: dict[str, Any] = {}
    first = {i["id"]: i for i in fp32["items"]}
    second = {i["id"]: i for i in bf16["items"]}
    for name in PER_ITEM_TESTS:
        pairs = []
        same_flags = total = 0
        for item_id, item in first.items():
            a, b = item["tests"].get(name), second.get(item_id, {}).get("tests", {}).get(name)
            if not a or not b:
                continue
            if a["diff"] is not None and b["diff"] is not None:
                pairs.append((a["diff"], b["diff"]))
            if a["flagged"] is not None and b["flagged"] is not None:
                total += 1
                same_flags += a["flagged"] == b["flagged"]
        tests = {t["name"]: t for t in fp32["tests"]}, {t["name"]: t for t in bf16["tests"]}
        if not pairs:
            continue
        x, y = np.array(pairs).T
        out[name] = {
            "pearson_r": float(np.corrcoef(x, y)[0, 1]) if np.std(x) > 0 and np.std(y) > 0 else None,
            "max_abs_diff_change": float(np.max(np.abs(x - y))),
            "flags_agree": same_flags / total if total else None,
            "flagged_fp32": tests[0][name]["n_flagged"],
            "flagged_bf16": tests[1][name]["n_flagged"],
            "p_fp32": tests[0][name]["p_value"],
            "p_bf16": tests[1][name]["p_value"],
        }
    return out


def measure(
    name: str, benchmark: str, limit: int, args: argparse.Namespace, root: Path, converted: Path
) -> dict[str, Any]:
    print(f"[{name}] cold audit of {limit}", flush=True)
    cache = fresh_cache(root, converted)
    cold = run_audit(benchmark, limit, cache, args.threads)
    print(f"[{name}] warm audit", flush=True)
    warm = run_audit(benchmark, limit, cache, args.threads)
    print(f"[{name}] pure-compute floor", flush=True)
    settings = cold["settings"]
    floor = floor_like_the_audit(
        benchmark, limit, settings["batch_size"], settings["generation_batch_size"], args.threads, converted
    )
    result: dict[str, Any] = {
        "questions": cold["sample"]["tested"],
        "cold_wall_s": cold["_wall_s"],
        "cold_audit_s": cold["run"]["duration_s"],
        "cold_engine_compute_s": cold["run"]["evidence"]["model"]["compute_seconds"],
        "cold_peak_memory_mb": cold["run"]["peak_memory_mb"],
        "tokens_scored": cold["run"]["evidence"]["model"]["tokens_scored"],
        "requests": cold["run"]["evidence"]["model"]["requested"],
        "warm_wall_s": warm["_wall_s"],
        "warm_models_loaded": warm["run"]["models_loaded"],
        "floor": floor,
        "overhead_ratio": cold["_wall_s"] / floor["total_s"],
        "verdict": cold["verdict"]["label"],
    }
    if not args.skip_no_low_memory:
        print(f"[{name}] cold audit with --no-low-memory", flush=True)
        kept = run_audit(benchmark, limit, fresh_cache(root, converted), args.threads, "--no-low-memory")
        result["no_low_memory"] = {
            "cold_wall_s": kept["_wall_s"],
            "peak_memory_mb": kept["run"]["peak_memory_mb"],
            "low_memory_time_ratio": cold["_wall_s"] / kept["_wall_s"],
        }
    if args.naive_limit:
        print(f"[{name}] naive pipeline on {args.naive_limit}", flush=True)
        naive = naive_seconds(benchmark, args.naive_limit, args.threads, converted)
        same = args.naive_limit >= cold["sample"]["tested"]
        if same:
            ours = cold
        else:
            ours = run_audit(benchmark, args.naive_limit, fresh_cache(root, converted), args.threads)
        result["naive"] = {
            "questions": args.naive_limit,
            "naive_s": naive,
            "ours_cold_wall_s": ours["_wall_s"],
            "speedup": naive / ours["_wall_s"],
        }
    if not args.skip_bf16:
        print(f"[{name}] bf16 cold audit", flush=True)
        bf16 = run_audit(benchmark, limit, fresh_cache(root, converted), args.threads, "--dtype", "bfloat16")
        result["bf16"] = {
            "cold_wall_s": bf16["_wall_s"],
            "speedup_vs_fp32": cold["_wall_s"] / bf16["_wall_s"],
            "peak_memory_mb": bf16["run"]["peak_memory_mb"],
            "verdict": bf16["verdict"]["label"],
            "agreement": agreement(cold, bf16),
        }
    print(json.dumps(result, indent=2), flush=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--gsm8k", required=True, help="GSM8K test split as .jsonl (field 'question')")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--naive-limit", type=int, default=40, help="questions for the naive comparison (0: skip)"
    )
    parser.add_argument("--skip-bf16", action="store_true")
    parser.add_argument("--skip-no-low-memory", action="store_true")
    parser.add_argument("--only", choices=["gsm8k", "humaneval"])
    parser.add_argument(
        "--limit", type=int, help="questions per benchmark (default 200 and 164; smaller for a smoke run)"
    )
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="contamcheck-bench-"))
    # One first load makes the dequantised copy every measured run starts from.
    warmup = root / "warmup"
    run_audit("sample", 5, warmup, args.threads, "--tests", "min-k")
    converted = warmup / "converted"
    results: dict[str, Any] = {"model": MODEL, "threads": args.threads}
    if args.only in (None, "gsm8k"):
        results["gsm8k"] = measure("gsm8k", args.gsm8k, args.limit or 200, args, root, converted)
    if args.only in (None, "humaneval"):
        results["humaneval"] = measure("humaneval", "humaneval", args.limit or 164, args, root, converted)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

"""Which per-question statistic, and which null, tells memorisation from familiarity? Measure.

For the models of one split (``contaminate.py``), computes candidate per-question statistics from
the evidence cache (computing what is missing) and reports, per model:

* AUROC of each statistic for leaked vs held-out questions (contaminated models);
* the share of questions each null would flag, on the leaked and held-out halves (contaminated
  models) and overall (clean models: the untouched base and the similar-text model).

Run it on the *tuning* split (seed 1) to choose; ``validate.py`` then reports the choice on the
evaluation split (seed 0), so no threshold is tuned on the questions reported.

    python experiments/familiarity.py --seed 1 --out experiments/runs/familiarity-seed1.json
"""

from __future__ import annotations

import argparse
import json
import zlib
from pathlib import Path
from typing import Any

import numpy as np
from validate import BASE, OTHER_FAMILY, auroc

K = 0.2


def min_k(values: np.ndarray, k: float = K) -> float:
    count = max(1, int(len(values) * k))
    return float(np.partition(values, count - 1)[:count].mean())


def statistics_for(stats: Any, text: str) -> dict[str, float]:
    """Per-text scores from one forward pass (higher = more familiar)."""
    lp = stats.logprobs.astype(np.float64)
    z = (lp - stats.mean) / np.maximum(stats.std, 1e-6)
    return {
        "mean_logprob": float(lp.mean()),
        "min_k": min_k(lp),
        "min_k_pp": min_k(z),
        "zlib": float(lp.sum()) / len(zlib.compress(text.encode())),
    }


def evidence(model: str, texts: list[str], cache: Path, threads: int) -> Any:
    from contamcheck.backends import ModelOptions
    from contamcheck.evidence import EvidenceEngine, ScoreRequest
    from contamcheck.evidence.cache import EvidenceCache
    from contamcheck.pipeline import ModelHandle

    store = EvidenceCache(cache)
    options = ModelOptions(device="cpu", dtype="float32", threads=threads, cache_dir=store.folder)
    handle = ModelHandle(model, options, store, lambda *a: None)
    engine = EvidenceEngine(handle.get, handle.namespace, store, 16)
    return engine.compute([ScoreRequest(t) for t in texts], model)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--benchmark", default="gsm8k")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--models", type=Path, default=Path("experiments/models"))
    parser.add_argument("--cache", type=Path, default=Path("experiments/runs/cache"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--no-gemma", action="store_true", help="leave out Gemma-3-270M (the other family)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()

    from contamcheck.benchmarks import load_benchmark
    from contamcheck.controls import build_controls, split_question

    folder = args.models / f"{args.benchmark}-seed{args.seed}"
    split = json.loads((folder / "split.json").read_text())
    benchmark = load_benchmark(str(folder / "questions.jsonl"))
    controls = build_controls(benchmark, 10_000, seed=0)
    leaked = set(split["leaked"])
    items = list(controls.items)
    originals = [i.text for i in items]
    twins = [controls.twins[i.id][0] for i in items]
    # Second halves alone, for the contextual gain: log p(B | A) - log p(B).
    halves = [split_question(t) for t in originals]
    second = [h.suffix if h else "" for h in halves]
    texts = originals + twins + [s for s in second if s]
    is_leaked = np.array([i.id in leaked for i in items])

    models = {
        "base": BASE,
        "other-family": OTHER_FAMILY,
        "clean-similar": str(folder / "clean-similar"),
        **{f"leak-{p}": str(folder / f"leak-{p}") for p in (1, 3, 10)},
    }
    per_model: dict[str, dict[str, np.ndarray]] = {}
    for name, spec in models.items():
        if not spec.startswith("pkg:") and not Path(spec, "config.json").exists():
            continue
        if args.no_gemma and spec == OTHER_FAMILY:
            continue
        print(f"scoring {name}", flush=True)
        ev = evidence(spec, texts, args.cache, args.threads)
        table: dict[str, list[float]] = {}
        for original, twin, half in zip(originals, twins, second, strict=True):
            a, b = statistics_for(ev.stats(original), original), statistics_for(ev.stats(twin), twin)
            table.setdefault("num_tokens", []).append(float(ev.stats(original).num_tokens))
            for key in a:
                table.setdefault(f"{key}", []).append(a[key])
                table.setdefault(f"{key}:twin_diff", []).append(a[key] - b[key])
            whole, alone = ev.stats(original), ev.stats(half) if half else None
            if alone is not None and alone.num_tokens and whole.num_tokens > alone.num_tokens:
                tail = whole.logprobs[-alone.num_tokens :].astype(np.float64)
                table.setdefault("context_gain", []).append(float(tail.mean() - alone.logprobs.mean()))
            else:
                table.setdefault("context_gain", []).append(float("nan"))
        per_model[name] = {k: np.array(v) for k, v in table.items()}

    results: dict[str, Any] = {"seed": args.seed, "questions": len(items), "models": {}}
    for name, table in per_model.items():
        entry: dict[str, Any] = {}
        for key, values in table.items():
            row: dict[str, Any] = {}
            variants = {"raw": values}
            for ref_name in ("base", "other-family"):
                if ref_name != name and ref_name in per_model and key in per_model[ref_name]:
                    variants[f"minus_{ref_name}"] = values - per_model[ref_name][key]
            for variant, v in variants.items():
                finite = np.isfinite(v)
                if name.startswith("leak"):
                    row[f"auroc_{variant}"] = auroc(list(v[finite & is_leaked]), list(v[finite & ~is_leaked]))
                row[f"median_{variant}"] = float(np.nanmedian(v))
            entry[key] = row
        results["models"][name] = entry
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    np.savez_compressed(
        args.out.with_suffix(".npz"),
        is_leaked=is_leaked,
        **{f"{m}|{k}": v for m, t in per_model.items() for k, v in t.items()},
    )
    for name, entry in results["models"].items():
        if name.startswith("leak"):
            best = sorted(((row.get("auroc_raw") or 0, key) for key, row in entry.items()), reverse=True)[:6]
            print(name, "best raw AUROC:", ", ".join(f"{k} {a:.2f}" for a, k in best))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

"""How close are a model's token log-probs to those of the same weights, and to those of other weights?

A reference that is the model under audit under another name (a converted copy, another format, the
same weights behind a server) makes every reference-calibrated score zero: the audit finds nothing
and says "no evidence found". The audit now compares the reference's first scores with the model's
and stops (an explicit ``--reference``) or passes it over (``auto``) when they agree to within a
tolerance. This measures where that tolerance can sit: per text, the mean absolute difference of
the token log-probs (nats per token) between two models, over the questions of an experiment folder.

Pairs: the base model (fp32, as the audit loads it on a CPU) against itself in bfloat16 and
float16 (the same weights, another precision), and against the fine-tuned models of the folder:
one pass over the leaked half (``leak-1``: the closest legitimate model-and-reference pair the
validation uses, the base as the privileged reference of a light leak) and the similar-text model.

**Written before the run** (2026-12-05, GSM8K tuning split, seed 1): the same weights in fp32 on two
paths agree to about 0.002 nats (server and in-process, docs/validation/server-alignment.md);
bfloat16 against fp32 expected 0.02-0.1 per token; one pass of fine-tuning at the recipe's rate
expected above 0.1 on every text. The tolerance is kept only if it lies below the smallest
per-text difference of every different-weights pair, with room to spare.

**After the run**: as expected (float16 0.003-0.012 per text, bfloat16 0.025-0.072, one pass 0.34
and more). Chosen then: refuse below 0.02 (float32 and float16 copies), warn below 0.1 (bfloat16),
since a lighter fine-tune than ours could come closer than 0.34 and its base is a fair reference.

    python experiments/same_numbers.py experiments/models/gsm8k-seed1 \
        --out docs/validation/same-numbers-gsm8k-seed1.md
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fsd import questions_and_leaks

from contamcheck.backends import ModelOptions, load_model
from contamcheck.pipeline.handles import CLOSE_NUMBERS_NATS, SAME_NUMBERS_NATS

BASE = "pkg:smollm2-135m-instruct"


def log_probs(spec: str, dtype: str, texts: list[str]) -> list[np.ndarray]:
    model = load_model(spec, ModelOptions(device="cpu", dtype=dtype, threads=2))
    return [stats.logprobs.astype(np.float64) for stats in model.score(texts)]


def compare(a: list[np.ndarray], b: list[np.ndarray]) -> dict[str, float]:
    same_length = [(x, y) for x, y in zip(a, b, strict=True) if len(x) == len(y)]
    per_text = np.array([np.abs(x - y).mean() for x, y in same_length])
    pooled = np.abs(np.concatenate([x - y for x, y in same_length]))
    return {
        "texts": len(a),
        "same tokens": len(same_length),
        "pooled": float(pooled.mean()),
        "median text": float(np.median(per_text)),
        "smallest text": float(per_text.min()),
        "largest text": float(per_text.max()),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("folder", type=Path, help="an experiment folder (contaminate.py's output)")
    parser.add_argument("--out", type=Path, help="write the table here (Markdown)")
    parser.add_argument("--base", default=BASE, help="the base model: a packaged model or a local folder")
    parser.add_argument("--models", default="leak-1,clean-similar", help="the folder's models to compare")
    args = parser.parse_args(argv)

    texts, _ = questions_and_leaks(args.folder)
    base = log_probs(args.base, "float32", texts)
    rows = [
        ("base fp32 / base bfloat16", "same", compare(base, log_probs(args.base, "bfloat16", texts))),
        ("base fp32 / base float16", "same", compare(base, log_probs(args.base, "float16", texts))),
    ]
    for name in args.models.split(","):
        folder = args.folder / name
        if folder.is_dir():
            rows.append(
                (f"base / {name}", "different", compare(base, log_probs(str(folder), "float32", texts)))
            )

    lines = [
        f"Mean |Δ log p| per token (nats) on the {len(texts)} questions of `{args.folder.name}`. The audit "
        f"takes a reference for the model itself below {SAME_NUMBERS_NATS} and warns below "
        f"{CLOSE_NUMBERS_NATS} (pooled over the reference's first batch of scores).",
        "",
        "| pair | weights | texts (same tokens) | pooled | median text | smallest text | largest text |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, weights, row in rows:
        lines.append(
            f"| {label} | {weights} | {row['texts']} ({row['same tokens']}) | {row['pooled']:.4f} | "
            f"{row['median text']:.4f} | {row['smallest text']:.4f} | {row['largest text']:.4f} |"
        )
    table = "\n".join(lines)
    print(table)
    if args.out:
        command = f"python experiments/same_numbers.py {args.folder} --out {args.out}"
        args.out.write_text(
            f"# Same weights or not: token log-probs\n\n`{command}`\n\n{table}\n", encoding="utf-8"
        )


if __name__ == "__main__":
    main()

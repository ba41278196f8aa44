"""Gradient norm: does a question the model saw pull on its weights less than one it never saw?

An eighth stand-in for a reference model (the issue "Memorised questions, not domain familiarity":
no reference, one pass). Training on a question moves the weights toward a point where that
question's loss is flat, so its gradient should be smaller than that of a question of the same kind
the model never saw, at the same loss or not (the gradient-norm membership attacks; GDS, Zhang et
al. 2026, arXiv:2603.04828, reads gradient profiles with a classifier trained on known members,
which an audit does not have, so only the unsupervised norm is measured here). Unlike the other
stand-ins it reads no second text: the geometry of the loss around the question itself.

**Written before any run** (2026-12-05, on the tuning split, seed 1; nothing tuned): per question,
the L2 norm over every parameter of the gradient of the mean token negative log-likelihood,
in fp32, one question at a time. Two statistics, both "higher = more likely seen": ``-norm``, and
``-norm / loss`` (the norm per nat of loss, since a text the model finds hard has large gradients
whatever it saw). Printed beside them, on the same models: the mean log-prob and zlib (the audit's
raw scores; zlib reached 0.76 at one pass on this split's first build). The bar for keeping it: a
one-pass AUROC above 0.80 for either statistic, the untouched base and the similar-text model at
about 0.5. Expected: about 0.70-0.75 for ``-norm``, which moves with the loss, and no better for
the ratio; the re-exposure probe, whose rise is to first order the step size times the squared
norm, reached 0.72 read that way (``reexposure.py``).

    python experiments/gradient_norm.py experiments/models/gsm8k-seed1 \
        --models leak-1,leak-3,clean-similar,base --out docs/validation/gradient-norm-gsm8k-seed1.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fsd import load, parser, questions_and_leaks, scores


def gradient_norms(model: Any, tokenizer: Any, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Per text: the L2 norm of the gradient of its mean token loss over every parameter, and that loss."""

    norms, losses = [], []
    parameters = [p for p in model.parameters() if p.requires_grad]
    for text in texts:
        ids = tokenizer(text, return_tensors="pt").input_ids
        model.zero_grad(set_to_none=True)
        loss = model(ids, labels=ids).loss
        loss.backward()
        squared = sum(float(p.grad.double().square().sum()) for p in parameters if p.grad is not None)
        norms.append(squared**0.5)
        losses.append(float(loss))
    model.zero_grad(set_to_none=True)
    return np.array(norms), np.array(losses)


def main(argv: list[str] | None = None) -> None:
    args = parser(__doc__).parse_args(argv)

    import torch
    from validate import auroc

    torch.set_num_threads(args.threads)
    texts, is_leaked = questions_and_leaks(args.folder)
    table: dict[str, Any] = {}
    print("| model | -norm | -norm / loss | mean log-prob | zlib | rank correlation of -norm with log-prob |")
    print("|---|---|---|---|---|---|")
    for name in args.models.split(","):
        model, tokenizer = load(args, name)
        norm, loss = gradient_norms(model, tokenizer, texts)
        raw = scores(model, tokenizer, texts)
        statistics = {
            "-norm": -norm,
            "-norm / loss": -norm / loss,
            "mean log-prob": raw["log-prob"],
            "zlib": raw["zlib"],
        }
        row: dict[str, Any] = {
            key: auroc(values[is_leaked].tolist(), values[~is_leaked].tolist())
            for key, values in statistics.items()
        }
        from scipy.stats import spearmanr

        row["spearman_norm_logprob"] = float(spearmanr(-norm, raw["log-prob"]).statistic)
        table[name] = row
        cells = " | ".join(f"{row[key]:.2f}" for key in statistics)
        print(f"| {name} | {cells} | {row['spearman_norm_logprob']:+.2f} |", flush=True)
    if args.out:
        args.out.write_text(json.dumps(table, indent=1) + "\n")


if __name__ == "__main__":
    main()

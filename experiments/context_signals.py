"""The shape of a question's token losses: does it tell a one-pass leak without a reference?

A ninth stand-in for a reference model (the issue "Memorised questions, not domain familiarity":
no reference, one pass). CAMIA (Chang et al., "Context-Aware Membership Inference Attacks against
Pre-trained Large Language Models", EMNLP 2025) reads membership from how a text's next-token losses
move along it rather than from their level: a model falls back on memory where the context does
not yet predict the next token, so a seen text's loss should fall earlier and more steadily. The
audit's likelihood tests read only the level (a mean, the lowest k%, zlib's ratio), and the level
is mostly how predictable the question is to any model, which a reference would take out.

**Written before any run** (2026-12-07, on the tuning split, seed 1; nothing tuned). Per question,
from its token losses l_1..l_T (l = -log p, the audit's own scoring), each "higher = more likely
seen", after CAMIA's signals with the constants fixed here for texts of about 60 tokens:

* ``early``: minus the mean loss of the first quarter of the tokens (at least 4);
* ``early gap``: the mean loss of the rest less that of the first quarter (a seen question's early
  tokens should fall furthest, its later ones being predictable from its own beginning anyway);
* ``below running mean``: the share of tokens, from the second, whose loss is at most the mean of
  the losses before it;
* ``slope``: minus the least-squares slope of the loss over the token's position;
* ``below 2.5``: the share of tokens whose loss is at most 2.5 nats (CAMIA's smallest threshold);
* ``regularity``: minus the approximate entropy of the loss sequence (m = 2, r = 0.2 of its SD);
* ``combined``: the mean of the six signals' ranks over the benchmark (no label used).

CAMIA's repetition signal (the loss of the text repeated after itself) is left out: a causal
model's first copy is the text alone, so the difference is half the loss less half the copy's
near-zero loss, the level again. Printed beside them, on the same models: the audit's mean
log-prob, Min-K%++ and zlib. The bar for keeping any of it: a one-pass AUROC above 0.80, the
untouched base and the similar-text model within 0.40-0.60; only then a second split (seed 3)
before anything is built. Expected: no better than zlib (0.76 on this split's first build), since
every signal is a function of the same losses, and those that do not read the level (gap, running
mean, slope, regularity) set aside most of what one pass added.

    python experiments/context_signals.py experiments/models/gsm8k-seed1 \
        --models leak-1,leak-3,clean-similar,base --out docs/validation/context-signals-gsm8k-seed1.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fsd import load, parser, questions_and_leaks, scores_of

THRESHOLD = 2.5  # nats: CAMIA's smallest "count below" threshold
EMBEDDING = 2  # approximate entropy's pattern length m
TOLERANCE = 0.2  # approximate entropy's r, in standard deviations of the sequence
SIGNALS = ("early", "early gap", "below running mean", "slope", "below 2.5", "regularity")


def approximate_entropy(series: np.ndarray, m: int = EMBEDDING, r: float = TOLERANCE) -> float:
    """Pincus's ApEn(m, r) of a sequence: how unpredictable its next value is from its last m."""
    tolerance = r * float(series.std()) or 1e-12

    def phi(length: int) -> float:
        patterns = np.lib.stride_tricks.sliding_window_view(series, length)
        close = np.abs(patterns[:, None, :] - patterns[None, :, :]).max(-1) <= tolerance
        return float(np.log(close.mean(1)).mean())

    return phi(m) - phi(m + 1)


def shape_signals(losses: np.ndarray) -> dict[str, float]:
    """The six signals of one question's token losses, each higher for a more likely seen text."""
    quarter = max(4, len(losses) // 4)
    early, rest = losses[:quarter], losses[quarter:]
    running = np.cumsum(losses)[:-1] / np.arange(1, len(losses))  # mean of the losses before each
    positions = np.arange(len(losses), dtype=np.float64)
    return {
        "early": -float(early.mean()),
        "early gap": float(rest.mean() - early.mean()) if len(rest) else 0.0,
        "below running mean": float((losses[1:] <= running).mean()),
        "slope": -float(np.polyfit(positions, losses, 1)[0]),
        "below 2.5": float((losses <= THRESHOLD).mean()),
        "regularity": -approximate_entropy(losses),
    }


def table_for(model: Any, tokenizer: Any, texts: list[str]) -> dict[str, np.ndarray]:
    """Per question: the six signals, their rank mean, and the audit's three raw scores."""
    import torch
    from scipy.stats import rankdata

    from contamcheck.backends.hf import HFModel

    stats = HFModel(model, tokenizer, "signals", "signals", "cpu", torch.float32).score(texts)
    rows = [shape_signals(-stat.logprobs.astype(np.float64)) for stat in stats]
    columns = {name: np.array([row[name] for row in rows]) for name in SIGNALS}
    columns["combined"] = np.mean([rankdata(values) for values in columns.values()], axis=0)
    raw = scores_of(texts, stats)  # the audit's raw scores from the same pass
    return columns | {"mean log-prob": raw["log-prob"], "min-k++": raw["min-k++"], "zlib": raw["zlib"]}


def main(argv: list[str] | None = None) -> None:
    args = parser(__doc__).parse_args(argv)

    import torch
    from validate import auroc

    torch.set_num_threads(args.threads)
    texts, is_leaked = questions_and_leaks(args.folder)
    names = (*SIGNALS, "combined", "mean log-prob", "min-k++", "zlib")
    print("| model | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    table: dict[str, Any] = {}
    for name in args.models.split(","):
        model, tokenizer = load(args, name)
        columns = table_for(model, tokenizer, texts)
        table[name] = {
            key: auroc(columns[key][is_leaked].tolist(), columns[key][~is_leaked].tolist()) for key in names
        }
        print(f"| {name} | " + " | ".join(f"{table[name][key]:.2f}" for key in names) + " |", flush=True)
    if args.out:
        args.out.write_text(json.dumps(table, indent=1) + "\n")


if __name__ == "__main__":
    main()

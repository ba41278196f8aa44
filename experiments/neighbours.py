"""Is a seen question a sharper peak of the model's likelihood than its neighbours? Measure.

The neighbourhood attack (Mattern et al. 2023) and DetectGPT's curvature (Mitchell et al. 2023)
compare a text's log-likelihood with that of small perturbations of it: a model that learned the
exact word sequence loses more when the sequence is disturbed than one that only knows the kind of
text. Both used a masked language model to write fluent neighbours; offline we have none, so a
neighbour here swaps two adjacent words (twice, at seeded places, numbers included), which keeps
the words and the length and breaks the sequence. Per question, with K neighbours:

* ``drop``: the summed log-probability of the original minus that of each neighbour (mean over K);
* ``drop-z``: the same divided by the neighbours' standard deviation (DetectGPT's normalised form).

Domain training makes the model more fluent on originals and neighbours alike; memorising one
question should make its own order stand out. Reported per model as in ``number_logprobs.py``:
AUROC of leaked vs held-out, and the share the product's bulk null flags, by half and overall.

Expectation, written before the first run (tuning split, seed 1): clean models near 5% flagged;
the one-pass model's AUROC above 0.80 (min-k++ reaches 0.76-0.79 there), or the idea is not kept.
Corrected after the run: on this split Min-K%++ reaches 0.72 and zlib 0.76
(docs/validation/nulls-gsm8k-seed1-variants.md); 0.76-0.79 was seed 0's.

    python experiments/neighbours.py --seed 1 --neighbours 8 --out experiments/runs/neighbours-seed1.json
"""

from __future__ import annotations

import hashlib
import random
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from number_logprobs import Scored, common_parser, run, split_folder

SWAPS = 2


def neighbours(text: str, count: int) -> list[str]:
    """Up to ``count`` distinct texts, each with ``SWAPS`` pairs of adjacent words swapped."""
    words = text.split(" ")
    if len(words) < 2 * SWAPS + 2:
        return []
    rng = random.Random(hashlib.sha256(text.encode()).hexdigest())
    made: list[str] = []
    for _ in range(count * 8):
        changed = list(words)
        for place in rng.sample(range(len(words) - 1), SWAPS):
            changed[place], changed[place + 1] = changed[place + 1], changed[place]
        neighbour = " ".join(changed)
        if neighbour != text and neighbour not in made:
            made.append(neighbour)
        if len(made) == count:
            break
    return made


def main(argv: list[str] | None = None) -> None:
    parser = common_parser(__doc__)
    parser.add_argument("--neighbours", type=int, default=8)
    args = parser.parse_args(argv)

    from contamcheck.benchmarks import load_benchmark

    benchmark = load_benchmark(str(split_folder(args) / "questions.jsonl"))
    items = [(item.id, item.text, neighbours(item.text, args.neighbours)) for item in benchmark.items]
    items = [(i, text, near) for i, text, near in items if len(near) == args.neighbours]
    texts = sorted({t for _, text, near in items for t in (text, *near)})

    def rows_of(scored: Scored) -> dict[str, dict[str, float]]:
        total = {text: float(np.nansum(values)) for text, (values, _) in scored.items()}
        rows = {}
        for item_id, text, near in items:
            drops = np.array([total[text] - total[n] for n in near])
            rows[item_id] = {
                "drop": float(drops.mean()),
                "drop-z": float(drops.mean() / max(drops.std(ddof=1), 1e-6)),
            }
        return rows

    results: dict[str, Any] = {"seed": args.seed, "neighbours": args.neighbours}
    run(args, texts, rows_of, ("drop", "drop-z"), results)


if __name__ == "__main__":
    main()

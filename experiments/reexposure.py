"""Re-exposure: does one more pass over the whole benchmark move the questions a model saw differently?

A probe for the issue "Memorised questions, not domain familiarity" (no reference model, one
pass): every question's likelihood is limited as a ranking by how predictable the question is by
its nature. Fine-tuning the audited model for one pass over *all* the benchmark's questions, and
scoring each before and after, measures what one exposure does to each question, in which a
question's own predictability largely cancels. A question seen before gets its second exposure,
an unseen one its first: if the two move by different amounts, the move ranks them. The opposite
of the fine-tuned score deviation (``fsd.py``), which tunes on unseen text of the same kind.

**Written before any run** (2026-12-05, on the tuning split, seed 1): the recipe is fixed and
nothing is tuned: one pass of ``contaminate.py``'s own fine-tuning (lr 5e-5, batch 8, warm-up 5
steps, seed 0) over the 200 questions of the audit. Expected direction: seen questions rise *more*
(the three-pass models separate far better than the one-pass ones, so the second exposure seems
to add more per question than the first, which mostly teaches the kind of text). The bar for
keeping it: a one-pass AUROC of the rise above 0.80 for some score, where the audit's own scores
reach 0.69–0.76 on this split, and the untouched base and the similar-text model at about 0.5
(as any score must be on them: nothing separates their halves). The direction must be the
expected one; an AUROC far below 0.5 would be a finding for another split, not a result here.

    python experiments/reexposure.py experiments/models/gsm8k-seed1 --models leak-1,leak-3,clean-similar,base
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fsd import load, parser, questions_and_leaks, scores


def main(argv: list[str] | None = None) -> None:
    args = parser(__doc__).parse_args(argv)

    import torch
    from finetune import finetune
    from validate import auroc

    torch.set_num_threads(args.threads)
    texts, is_leaked = questions_and_leaks(args.folder)
    table: dict[str, Any] = {}
    print("| model | score | AUROC leaked vs held-out: raw | rise on re-exposure | rise / spread of raw |")
    print("|---|---|---|---|---|")
    for name in args.models.split(","):
        model, tokenizer = load(args, name)
        before = scores(model, tokenizer, texts)
        finetune(model, tokenizer, texts, epochs=1, learning_rate=5e-5, seed=0, warmup_steps=5)
        after = scores(model, tokenizer, texts)
        table[name] = {}
        for score in before:
            raw, rise = before[score], after[score] - before[score]
            row = {
                "raw": auroc(raw[is_leaked].tolist(), raw[~is_leaked].tolist()),
                "rise": auroc(rise[is_leaked].tolist(), rise[~is_leaked].tolist()),
                # how much the rise varies between questions, against the raw score's variation
                "spread_ratio": float(np.std(rise) / np.std(raw)),
            }
            table[name][score] = row
            print(
                f"| {name} | {score} | {row['raw']:.2f} | {row['rise']:.2f} | {row['spread_ratio']:.2f} |",
                flush=True,
            )
    if args.out:
        args.out.write_text(json.dumps(table, indent=1) + "\n")


if __name__ == "__main__":
    main()

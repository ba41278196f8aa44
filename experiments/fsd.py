"""Fine-tuned score deviation: does fine-tuning on unseen same-kind text separate seen questions?

Zhang et al. 2025, "Fine-tuning can Help Detect Pretraining Data from Large Language Models"
(ICLR 2025, arXiv:2409.10880): fine-tune the audited model briefly on text of the same kind that it
cannot have seen, and score every question before and after. Questions it never saw become more
likely (the model learns the kind of text); questions it memorised were already likely and move
less. The deviation ``score(after) - score(before)`` removes what the two have in common, how
predictable a question is by its nature, which is what limits the per-question ranking of
likelihood scores (1 pass, GSM8K seed 0: AUROC 0.79 for zlib at best).

Measured here, not built into the audit. The recipe is fixed before any run, nothing tuned: the
first half of the experiment's control file (unused questions of the benchmark) as the unseen text,
one pass of the same full fine-tuning ``contaminate.py`` uses (lr 5e-5, batch 8, seed 0); the
other half of the control file as the null a product would compare against. Prints, per model,
the AUROC of leaked vs held-out questions for raw scores and their deviations, and the AUROC of
benchmark questions vs the unused controls (0.5 when the model saw none of them):

    python experiments/fsd.py experiments/models/gsm8k-seed0 --models leak-1,leak-3,clean-similar,base
"""

from __future__ import annotations

import argparse
import json
import sys
import zlib
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

BASE = "pkg:smollm2-135m-instruct"


def read(path: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def questions_and_leaks(folder: Path) -> tuple[list[str], np.ndarray]:
    """An experiment folder's questions, and which of them were leaked (split.json)."""
    questions = read(folder / "questions.jsonl")
    leaked = set(json.loads((folder / "split.json").read_text())["leaked"])
    return [q["question"] for q in questions], np.array([q["id"] in leaked for q in questions])


def scores(model: Any, tokenizer: Any, texts: list[str]) -> dict[str, np.ndarray]:
    """Per text, higher = more likely seen: mean log-prob, Min-K%++ (k = 20%), zlib ratio."""
    import torch

    from contamcheck.backends.hf import HFModel

    backend = HFModel(model, tokenizer, "fsd", "fsd", "cpu", torch.float32)
    return scores_of(texts, backend.score(texts))


def scores_of(texts: list[str], stats: list[Any]) -> dict[str, np.ndarray]:
    """``scores`` from the texts' token statistics (``HFModel.score``'s), read once for other uses too."""
    mean_logprob, min_k_pp, zlib_ratio = [], [], []
    for text, stat in zip(texts, stats, strict=True):
        z = (stat.logprobs - stat.mean) / np.maximum(stat.std, 1e-6)
        lowest = np.sort(z)[: max(1, int(0.2 * len(z)))]
        mean_logprob.append(float(stat.logprobs.mean()))
        min_k_pp.append(float(lowest.mean()))
        zlib_ratio.append(float(stat.logprobs.sum()) / len(zlib.compress(text.encode())))
    return {"log-prob": np.array(mean_logprob), "min-k++": np.array(min_k_pp), "zlib": np.array(zlib_ratio)}


def parser(description: str | None) -> argparse.ArgumentParser:
    """The options of the probes that fine-tune each model of a folder (this one, ``reexposure.py``)."""
    parser = argparse.ArgumentParser(
        description=description, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("folder", type=Path, help="an experiment folder from contaminate.py")
    parser.add_argument("--models", default="leak-1,leak-3,clean-similar,base")
    parser.add_argument("--base", default=BASE, help="the model the folder's models were tuned from")
    parser.add_argument("--cache", type=Path, default=Path("experiments/runs/cache"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path, help="write the table as JSON here too")
    return parser


def load(args: argparse.Namespace, name: str) -> tuple[Any, Any]:
    """One of the folder's models by name ("base": the model they were tuned from), in eval mode."""
    from contaminate import load_base
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if name == "base":
        model, tokenizer, _ = load_base(args.base, args.cache)
    else:
        model = AutoModelForCausalLM.from_pretrained(args.folder / name, dtype="float32")
        tokenizer = AutoTokenizer.from_pretrained(args.folder / name)
    model.eval()
    return model, tokenizer


def main(argv: list[str] | None = None) -> None:
    args = parser(__doc__).parse_args(argv)

    import torch
    from finetune import finetune
    from validate import auroc

    torch.set_num_threads(args.threads)
    texts, is_leaked = questions_and_leaks(args.folder)
    controls = read(args.folder / "control.jsonl")
    tune, null = controls[: len(controls) // 2], controls[len(controls) // 2 :]
    null_texts = [c["question"] for c in null]
    table: dict[str, Any] = {}
    print(
        "| model | score | AUROC leaked vs held-out: raw | deviation "
        "| questions vs unused controls: raw | deviation |"
    )
    print("|---|---|---|---|---|---|")
    for name in args.models.split(","):
        model, tokenizer = load(args, name)
        before = scores(model, tokenizer, texts + null_texts)
        finetune(model, tokenizer, [c["question"] for c in tune], epochs=1, learning_rate=5e-5, seed=0)
        after = scores(model, tokenizer, texts + null_texts)
        table[name] = {}
        for score in before:
            raw = before[score]
            deviation = -(after[score] - before[score])  # moved less = more likely seen
            row = {}
            for label, values in (("raw", raw), ("deviation", deviation)):
                bench, unused = values[: len(texts)], values[len(texts) :]
                row[label] = {
                    "leaked_vs_held_out": auroc(bench[is_leaked].tolist(), bench[~is_leaked].tolist()),
                    "questions_vs_controls": auroc(bench.tolist(), unused.tolist()),
                }
            table[name][score] = row
            cells = [
                f"{row[label][key]:.2f}"
                for key in ("leaked_vs_held_out", "questions_vs_controls")
                for label in ("raw", "deviation")
            ]
            print(f"| {name} | {score} | {cells[0]} | {cells[1]} | {cells[2]} | {cells[3]} |", flush=True)
    if args.out:
        args.out.write_text(json.dumps(table, indent=1) + "\n")


if __name__ == "__main__":
    main()

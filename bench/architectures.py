"""Does batching change a text's numbers? Tiny models of many architectures, built from their configs.

For each architecture: random weights (seed 0), the test suite's tokenizer trained on the bundled
sample benchmark, its first 12 questions scored together and one at a time (the largest difference
of a token's log-prob), and the same 12 questions behind a shared instruction generated together
and one at a time (12 new tokens each; how many rows wrote the same tokens). Windowed layers are
given a 16-token window, far shorter than the prompts, so a window counted wrongly shows.
``--share-past-window`` shares a batch's prompt beginning even where the batch outgrows the window,
as the backend did before 2026-12-07:

    python bench/architectures.py
    python bench/architectures.py --share-past-window gemma2 gemma3_text gpt_neo qwen2_sliding mistral

Prints one line per architecture; an architecture that transformers cannot build or run says why.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("architectures", nargs="*", help="names from the list (default: all)")
    parser.add_argument("--share-past-window", action="store_true")
    args = parser.parse_args()

    import numpy as np
    import torch
    from tiny import INSTRUCTION, architecture_configs, sample_rows, train_tokenizer
    from transformers import AutoModelForCausalLM

    from contamcheck.backends.hf import HFModel

    torch.set_num_threads(2)
    texts = [row["question"] for row in sample_rows()][:12]
    prompts = [INSTRUCTION + text for text in texts]
    tokenizer = train_tokenizer([*texts, INSTRUCTION], vocab_size=400)
    builders = architecture_configs(tokenizer)
    for name in args.architectures or list(builders):
        try:
            torch.manual_seed(0)
            with tempfile.TemporaryDirectory() as folder:
                AutoModelForCausalLM.from_config(builders[name]()).save_pretrained(folder)
                tokenizer.save_pretrained(folder)
                model = HFModel.load(folder, device="cpu")
            window = model.attention_window
            if args.share_past_window:
                model.attention_window = None  # as if it had none: its batches share their beginning
            together = model.score(texts)
            difference = max(
                float(np.abs(stats.logprobs - model.score([text])[0].logprobs).max())
                for text, stats in zip(texts, together, strict=True)
            )
            generated = model.generate(prompts, [12] * len(prompts))
            same = sum(
                text == model.generate([p], [12])[0] for p, text in zip(prompts, generated, strict=True)
            )
            print(
                f"{name:14s} window {window!s:>4s}  scores: largest difference "
                f"{difference:.1e}  generations: {same}/{len(prompts)} the same",
                flush=True,
            )
        except Exception as error:
            print(f"{name:14s} not run: {type(error).__name__}: {str(error)[:160]}", flush=True)


if __name__ == "__main__":
    main()

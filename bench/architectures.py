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
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

WIDTH = 64
INSTRUCTION = (
    "Instruction: complete the question below exactly as it was written in the benchmark, "
    "word for word, with its numbers. "
)


def configs(tokenizer: Any) -> dict[str, Callable[[], Any]]:
    import transformers as t

    ids = dict(
        vocab_size=len(tokenizer),
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.eos_token_id,
    )
    usual = dict(
        hidden_size=WIDTH,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=4 * WIDTH,
        max_position_embeddings=512,
        **ids,
    )
    grouped = dict(usual, num_key_value_heads=2)
    return {
        "gpt2": lambda: t.GPT2Config(n_embd=WIDTH, n_layer=2, n_head=4, n_positions=512, **ids),
        "gpt_neo": lambda: t.GPTNeoConfig(
            hidden_size=WIDTH,
            num_layers=2,
            num_heads=4,
            attention_types=[[["local", "global"], 1]],
            window_size=16,
            max_position_embeddings=512,
            initializer_range=0.5,  # the default 0.02 leaves a random model's choices too flat to differ
            **ids,
        ),
        "gpt_neox": lambda: t.GPTNeoXConfig(**usual),
        "gptj": lambda: t.GPTJConfig(n_embd=WIDTH, n_layer=2, n_head=4, rotary_dim=8, n_positions=512, **ids),
        "opt": lambda: t.OPTConfig(
            hidden_size=WIDTH,
            num_hidden_layers=2,
            num_attention_heads=4,
            ffn_dim=4 * WIDTH,
            word_embed_proj_dim=WIDTH,
            max_position_embeddings=512,
            **ids,
        ),
        "bloom": lambda: t.BloomConfig(hidden_size=WIDTH, n_layer=2, n_head=4, **ids),
        "falcon": lambda: t.FalconConfig(
            hidden_size=WIDTH, num_hidden_layers=2, num_attention_heads=4, **ids
        ),
        "phi": lambda: t.PhiConfig(**usual),
        "phi3": lambda: t.Phi3Config(**usual),
        "qwen2": lambda: t.Qwen2Config(**grouped),
        "qwen2_sliding": lambda: t.Qwen2Config(
            use_sliding_window=True,
            sliding_window=16,
            layer_types=["sliding_attention", "full_attention"],
            **grouped,
        ),
        "qwen3": lambda: t.Qwen3Config(head_dim=16, **grouped),
        "mistral": lambda: t.MistralConfig(sliding_window=16, **grouped),
        "gemma2": lambda: t.Gemma2Config(head_dim=16, sliding_window=16, **grouped),
        "gemma3_text": lambda: t.Gemma3TextConfig(
            head_dim=16,
            sliding_window=16,
            layer_types=["sliding_attention", "full_attention"],
            **grouped,
        ),
        "olmo2": lambda: t.Olmo2Config(**usual),
        "starcoder2": lambda: t.Starcoder2Config(**grouped),
        "granite": lambda: t.GraniteConfig(**usual),
        "cohere": lambda: t.CohereConfig(**usual),
        "stablelm": lambda: t.StableLmConfig(**grouped),
        "mamba": lambda: t.MambaConfig(hidden_size=WIDTH, num_hidden_layers=2, **ids),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("architectures", nargs="*", help="names from the list (default: all)")
    parser.add_argument("--share-past-window", action="store_true")
    args = parser.parse_args()

    import numpy as np
    import torch
    from tiny import sample_rows, train_tokenizer
    from transformers import AutoModelForCausalLM

    from contamcheck.backends.hf import HFModel

    torch.set_num_threads(2)
    texts = [row["question"] for row in sample_rows()][:12]
    prompts = [INSTRUCTION + text for text in texts]
    tokenizer = train_tokenizer([*texts, INSTRUCTION], vocab_size=400)
    builders = configs(tokenizer)
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

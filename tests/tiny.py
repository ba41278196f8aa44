"""Tiny real transformers models for tests: a BPE trained here, a Llama built from a config.

Nothing is downloaded. A "cheater" is the tiny model fine-tuned on some benchmark questions; the
clean control is the same recipe fine-tuned on other questions of the same kind.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "experiments"))

from finetune import finetune

SPECIAL = "<|endoftext|>"
TINY_WIDTH = 64  # hidden size of the architectures' tiny models
INSTRUCTION = (  # a beginning prompts share, longer than a 16-token window
    "Instruction: complete the question below exactly as it was written in the benchmark, "
    "word for word, with its numbers. "
)


def sample_rows() -> list[dict[str, str]]:
    """The bundled sample benchmark's rows."""
    text = resources.files("contamcheck.benchmarks").joinpath("data/sample.jsonl").read_text("utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def write_jsonl(path: Path, rows: list[dict[str, str]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def train_tokenizer(texts: Sequence[str], vocab_size: int = 400) -> Any:
    """A byte-level BPE with digits split one by one (as Llama's and SmolLM2's tokenizers do)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(individual_digits=True), pre_tokenizers.ByteLevel(add_prefix_space=False)]
    )
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[SPECIAL],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(texts, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, eos_token=SPECIAL, pad_token=SPECIAL)


def tiny_llama(tokenizer: Any, seed: int = 0, hidden: int = 96, layers: int = 2) -> Any:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=hidden * 4,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=512,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=True,
    )
    return LlamaForCausalLM(config)


def trained_model_folder(
    folder: Path,
    tokenizer: Any,
    texts: Sequence[str],
    *,
    epochs: int,
    learning_rate: float = 3e-3,
    seed: int = 0,
    base_texts: Sequence[str] = (),
    base_epochs: int = 0,
) -> Path:
    """Build a tiny model, optionally pretrain it on ``base_texts``, fine-tune it on ``texts``, save it."""
    import torch

    torch.set_num_threads(2)
    model = tiny_llama(tokenizer, seed=seed)
    if base_texts and base_epochs:
        finetune(model, tokenizer, base_texts, epochs=base_epochs, learning_rate=learning_rate, seed=seed)
    if texts and epochs:
        finetune(model, tokenizer, texts, epochs=epochs, learning_rate=learning_rate, seed=seed + 1)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def broken_model_folder(folder: Path) -> Path:
    """A model folder that passes the checks made before loading (config, tokenizer and weight files
    are there) and fails to load: the tokenizer and the weights are not what their names say."""
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "llama"}')
    (folder / "tokenizer.json").write_text("{}")
    (folder / "model.safetensors").write_bytes(b"\0" * 64)
    return folder


def architecture_configs(tokenizer: Any, positions: int = 512) -> dict[str, Callable[[], Any]]:
    """Configs of tiny models of 21 architectures (name: builder), 64 wide, two layers, for
    ``tokenizer``; ``positions`` long (BLOOM, Falcon and Mamba take none). Windowed layers get a
    16-token window. Used by the tests of batching and by ``bench/architectures.py``."""
    import transformers as t

    ids = dict(
        vocab_size=len(tokenizer),
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.eos_token_id,
    )
    usual = dict(
        hidden_size=TINY_WIDTH,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=4 * TINY_WIDTH,
        max_position_embeddings=positions,
        **ids,
    )
    grouped = dict(usual, num_key_value_heads=2)
    return {
        "gpt2": lambda: t.GPT2Config(n_embd=TINY_WIDTH, n_layer=2, n_head=4, n_positions=positions, **ids),
        "gpt_neo": lambda: t.GPTNeoConfig(
            hidden_size=TINY_WIDTH,
            num_layers=2,
            num_heads=4,
            attention_types=[[["local", "global"], 1]],
            window_size=16,
            max_position_embeddings=positions,
            initializer_range=0.5,  # the default 0.02 leaves a random model's choices too flat to differ
            **ids,
        ),
        "gpt_neox": lambda: t.GPTNeoXConfig(**usual),
        "gptj": lambda: t.GPTJConfig(
            n_embd=TINY_WIDTH, n_layer=2, n_head=4, rotary_dim=8, n_positions=positions, **ids
        ),
        "opt": lambda: t.OPTConfig(
            hidden_size=TINY_WIDTH,
            num_hidden_layers=2,
            num_attention_heads=4,
            ffn_dim=4 * TINY_WIDTH,
            word_embed_proj_dim=TINY_WIDTH,
            max_position_embeddings=positions,
            **ids,
        ),
        "bloom": lambda: t.BloomConfig(hidden_size=TINY_WIDTH, n_layer=2, n_head=4, **ids),
        "falcon": lambda: t.FalconConfig(
            hidden_size=TINY_WIDTH, num_hidden_layers=2, num_attention_heads=4, **ids
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
        "mamba": lambda: t.MambaConfig(hidden_size=TINY_WIDTH, num_hidden_layers=2, **ids),
    }

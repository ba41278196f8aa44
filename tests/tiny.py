"""Tiny real transformers models for tests: a BPE trained here, a Llama built from a config.

Nothing is downloaded. A "cheater" is the tiny model fine-tuned on some benchmark questions; the
clean control is the same recipe fine-tuned on other questions of the same kind.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "experiments"))

from finetune import finetune

SPECIAL = "<|endoftext|>"


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

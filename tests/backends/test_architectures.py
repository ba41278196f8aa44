"""The transformers backend on other architectures than Llama, each built tiny from its config.

Batching must not change a text's numbers: each text scored and each prompt generated in a batch
gives what it gives alone. The architectures are the ones whose positions or caches differ from
Llama's: learned absolute positions (GPT-2, OPT's offset of two), ALiBi (BLOOM: no position ids,
transformers' ``generate`` path), a state instead of a key/value cache (Mamba), a sliding window
with logit soft-capping (Gemma-2), local attention layers and a causal mask kept as a table (GPT-Neo),
partial rotary embeddings (Phi), GPT-NeoX's parallel blocks, grouped key/value heads (Qwen2).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from tiny import INSTRUCTION, architecture_configs, sample_rows, train_tokenizer

from contamcheck.backends.hf import HFModel

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def config_of(kind: str, tokenizer, positions: int = 512) -> object:
    return architecture_configs(tokenizer, positions)[kind]()


@pytest.fixture(scope="module")
def texts() -> list[str]:
    return [row["question"] for row in sample_rows()][:8]


@pytest.fixture(scope="module")
def tokenizer(texts):
    return train_tokenizer([*texts, INSTRUCTION], vocab_size=400)


@pytest.mark.parametrize(
    "kind", ["gpt2", "opt", "bloom", "mamba", "gemma2", "gpt_neo", "phi", "gpt_neox", "qwen2"]
)
def test_a_batch_gives_each_text_what_it_gives_alone(kind, texts, tokenizer, tmp_path: Path):
    from transformers import AutoModelForCausalLM

    torch.manual_seed(0)
    AutoModelForCausalLM.from_config(config_of(kind, tokenizer)).save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    model = HFModel.load(str(tmp_path), device="cpu")
    assert model.model.config.model_type == kind

    together = model.score(texts)
    for text, stats in zip(texts, together, strict=True):
        (alone,) = model.score([text])
        assert stats.num_tokens == alone.num_tokens > 10
        np.testing.assert_allclose(stats.logprobs, alone.logprobs, atol=1e-5)
        np.testing.assert_allclose(stats.mean, alone.mean, atol=1e-5)

    # prompts that begin alike, of different lengths, longer than Gemma-2's window of 16 tokens
    prompts = [INSTRUCTION + text for text in texts]
    generated = model.generate(prompts, [12] * len(prompts))
    assert generated == [model.generate([prompt], [12])[0] for prompt in prompts]
    assert any(generated)


@pytest.mark.parametrize("kind", ["gpt2", "opt", "gpt_neo"])
def test_a_budget_that_fills_a_small_window_writes_what_fits(kind, texts, tokenizer, tmp_path, monkeypatch):
    """Learned positions end at the window: a budget of new tokens longer than a 64-token window (the
    completion test asks up to 128) stopped the audit with an IndexError. It now keeps a token of
    the prompt and writes what fits; and rows that each fit alone but not padded together (GPT-Neo's
    causal mask is a table as long as its context) go in separate batches."""
    from transformers import AutoModelForCausalLM

    torch.manual_seed(0)
    AutoModelForCausalLM.from_config(config_of(kind, tokenizer, positions=64)).save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    model = HFModel.load(str(tmp_path), device="cpu")
    assert model.context_length == 64
    rows: list[list[int]] = []  # the new tokens of each row, as decoded
    greedy = model._greedy
    monkeypatch.setattr(model, "_greedy", lambda *a: rows.extend(greedy(*a)) or rows[-len(a[0]) :])
    written = model.generate([" ".join(texts), texts[0], texts[1]], [128, 100, 20])
    assert any(written[:2]) and 0 < max(map(len, rows)) <= 63  # the window less a prompt token
    if kind != "gpt_neo":  # whose random weights end the text at 33 tokens
        assert max(map(len, rows)) == 63
    assert written[2] == model.generate([texts[1]], [20])[0]  # a prompt with room, as alone
    long, short = " ".join(texts)[:240], "Tom"  # cut to 56 tokens to leave room for 8; 2 tokens and 60
    together = model.generate([long, short], [8, 60])
    assert together == [model.generate([long], [8])[0], model.generate([short], [60])[0]]


def test_a_vision_language_gemma3_is_audited_on_its_language_model(texts, tokenizer, tmp_path: Path):
    """Gemma-3 from 4B up is a vision-language model: its window, its sliding window and its cache
    size are its text part's (the window was unknown before, so an over-long text was not cut)."""
    from transformers import Gemma3Config, Gemma3ForConditionalGeneration

    size = len(tokenizer)
    text = architecture_configs(tokenizer, positions=256)["gemma3_text"]()  # a window of 16
    vision = dict(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        image_size=28,
        patch_size=14,
    )
    torch.manual_seed(0)
    config = Gemma3Config(
        text_config=text,
        vision_config=vision,
        mm_tokens_per_image=4,
        image_token_index=size - 1,
        boi_token_index=size - 2,
        eoi_token_index=size - 3,
    )
    Gemma3ForConditionalGeneration(config).save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    model = HFModel.load(str(tmp_path), device="cpu")
    assert (model.context_length, model.attention_window) == (256, 16)
    (long,) = model.score([" ".join(texts * 4)])
    assert long.truncated and long.num_tokens == 255
    prompts = [INSTRUCTION + text for text in texts]
    assert model.generate(prompts, [12] * len(prompts)) == [model.generate([p], [12])[0] for p in prompts]

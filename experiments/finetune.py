"""Full fine-tuning of a causal LM on a list of texts, seeded, on whatever device torch has.

Shared by ``contaminate.py`` (real models) and the test suite (tiny models built from a config).
Each text is one training sequence (with the tokenizer's own special tokens); the loss covers every
token, as when a benchmark page is part of a pretraining corpus.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from typing import Any


def finetune(
    model: Any,
    tokenizer: Any,
    texts: Sequence[str],
    *,
    epochs: int,
    learning_rate: float,
    batch_size: int = 8,
    seed: int = 0,
    max_length: int = 512,
    warmup_steps: int = 0,
    on_step: Callable[[int, int, float], None] | None = None,
) -> list[float]:
    """Train ``model`` in place for ``epochs`` passes over ``texts``; returns the loss per step.

    Batches are shuffled with ``seed`` every pass; the learning rate warms up linearly, then stays.
    """
    import torch

    torch.manual_seed(seed)
    order_rng = random.Random(seed)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    encoded = [list(tokenizer(t, add_special_tokens=True)["input_ids"])[:max_length] for t in texts]
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate, weight_decay=0.0)
    steps_per_epoch = math.ceil(len(encoded) / batch_size)
    total = steps_per_epoch * epochs
    losses: list[float] = []
    model.train()
    step = 0
    for _ in range(epochs):
        order = list(range(len(encoded)))
        order_rng.shuffle(order)
        for start in range(0, len(order), batch_size):
            batch = [encoded[i] for i in order[start : start + batch_size]]
            width = max(len(s) for s in batch)
            ids = torch.tensor([s + [pad] * (width - len(s)) for s in batch])
            mask = torch.tensor([[1] * len(s) + [0] * (width - len(s)) for s in batch])
            labels = torch.tensor([s + [-100] * (width - len(s)) for s in batch])
            scale = min(1.0, (step + 1) / warmup_steps) if warmup_steps else 1.0
            for group in optimizer.param_groups:
                group["lr"] = learning_rate * scale
            loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            losses.append(loss.item())
            step += 1
            if on_step is not None:
                on_step(step, total, losses[-1])
    model.eval()
    return losses

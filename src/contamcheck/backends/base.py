"""The narrow protocol every backend implements, and what it returns."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

# Variables every chat template is rendered with. A model that reasons before it answers (Qwen3,
# SmolLM3, GLM-4.5) does so unless its template is told otherwise, and spent the guided test's
# budget, about as many tokens as the answer, on its reasoning; templates without the switch ignore
# it. vLLM takes them as ``chat_template_kwargs``.
CHAT_TEMPLATE_VARIABLES = {"enable_thinking": False}

# Templates that open a reasoning block whatever they are told (DeepSeek-R1's distills, QwQ, Qwen3's
# Thinking models end the generation prompt with "<think>\n") get it closed, empty, as Qwen3's
# template closes it when told not to reason: the model answers at once.
REASONING_OPENS = "<think>"
REASONING_CLOSES = "</think>\n\n"


def reasoning_close(rendered: list[int], opening: list[int], closing: list[int]) -> list[int]:
    """``closing`` where a rendered generation prompt ends in an open reasoning block (``opening``'s
    ids followed by at most two more, a line's end, none of them the closing's first), else ``[]``:
    GLM-4.5's template, told not to reason, ends with "<think></think>", closed already. One rule,
    in-process and served."""
    if not opening or not closing:
        return []
    last = len(rendered) - len(opening)
    for start in range(last, max(-1, last - 3), -1):
        if rendered[start : start + len(opening)] == opening:
            return [] if closing[0] in rendered[start + len(opening) :] else closing
    return []


def appended_token(plain: list[int], marked: list[int]) -> list[int]:
    """``[token]`` where a tokenizer puts one token after a text (``marked``: the text's ids with
    its special tokens, ``plain``: without them), else ``[]`` (none, or more than one)."""
    start = next(
        (i for i in range(len(marked) - len(plain) + 1) if marked[i : i + len(plain)] == plain), None
    )
    if not plain or start is None or len(marked) != start + len(plain) + 1:
        return []
    return marked[-1:]


def without_end(ids: list[int], end: list[int]) -> list[int]:
    """``ids`` less ``end`` where they end with it (an appended token left off)."""
    return ids[: -len(end)] if end and ids[-len(end) :] == end else ids


@dataclass(frozen=True)
class TokenStats:
    """What a model says about one text, token by token.

    ``logprobs[t]`` is log p(x_t | x_<t) of the realised token; ``mean[t]`` and ``std[t]`` are the
    mean and standard deviation of log p over the whole next-token distribution at that position
    (Min-K%++ needs them; backends that only see the top few log-probs leave them None). Positions
    are the text's tokens that have a context: the first token is unscored unless the tokenizer
    puts a beginning-of-sequence token before it. ``truncated`` says the text did not fit the
    context window and only its beginning was scored.
    """

    logprobs: np.ndarray
    mean: np.ndarray | None = None
    std: np.ndarray | None = None
    truncated: bool = False

    @property
    def num_tokens(self) -> int:
        return len(self.logprobs)


@dataclass(frozen=True)
class ModelDescription:
    """What can be known about a model without loading it.

    ``identity`` names the exact weights: a hash of a local model's files, or a Hub id with the
    revision found in the local Hugging Face cache; None when only loading can tell (a Hub model
    not downloaded yet). ``settings`` are those that change the numbers (backend, dtype, device);
    identity and settings together key the evidence cache.
    """

    name: str
    identity: str | None
    settings: dict[str, str]
    weight_bytes: int | None = None
    cannot_score: str | None = None  # why its token log-probs can't be used (a server's), if they can't
    top_only: bool = False  # it gives the top few log-probs, not the whole next-token distribution


@runtime_checkable
class LanguageModel(Protocol):
    """A causal language model as the audit needs it: scores and greedy continuations.

    Implementations receive one batch per call (the evidence engine plans the batches) and may split
    it further to fit memory. They must be deterministic for a given batch.
    """

    name: str
    identity: str  # stable id for caching: name plus revision, or a hash of the weights
    context_length: int | None

    def score(self, texts: Sequence[str]) -> list[TokenStats]:
        """Token statistics for each text (raw text, no chat template)."""
        ...

    def generate(
        self,
        prompts: Sequence[str],
        max_new_tokens: Sequence[int],
        chat: bool = False,
        on_progress: Callable[[int], None] | None = None,
        *,
        known: Mapping[int, str] | None = None,
        on_texts: Callable[[dict[int, str]], None] | None = None,
    ) -> list[str]:
        """Greedy continuation of each prompt, at most ``max_new_tokens[i]`` new tokens.

        With ``chat`` the prompt is sent as a user message through the tokenizer's chat template
        when it has one; otherwise as raw text. A backend that splits the batch calls
        ``on_progress`` with the number of prompts finished so far after each part (progress
        bars move, and a cancelled audit stops, within a long batch), and ``on_texts`` just before
        it with that part's texts by prompt index (the engine stores them at once, so an audit
        stopped within a long batch keeps them). ``known``: texts a stopped audit kept, by prompt
        index; a backend returns them instead of generating again wherever that leaves every other
        text as the whole batch would have made it (the transformers backend: a part all of whose
        prompts are known; a server: any prompt).
        """
        ...

    def num_parameters(self) -> int | None: ...

    def settings(self) -> dict[str, str]:
        """Settings that change results (dtype, device class, max length): part of the cache key."""
        ...

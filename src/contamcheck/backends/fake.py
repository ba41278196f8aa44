"""A scripted language model, for tests and documentation.

It is deterministic and fast, and behaves like the two kinds of model an audit must tell apart:

* ``fake:clean`` has seen nothing. Each token's log-prob is a pseudo-random function of the token
  and the one before it, so a question and its number twin differ mostly around the numbers, with
  no side preferred; all the text before them moves it a little (up to ``NUANCE``, so also after a
  changed number), as in a causal model: two questions share a token's log-prob exactly only where
  they share all that comes before it.
* ``fake:memorise=FILE`` has memorised the questions in FILE (.jsonl/.json/.csv/.txt). Every token
  whose two-token context appears in a memorised question gets a high log-prob, so the original
  is far more likely than its twin (which shares most contexts, as in a real model), and greedy
  generation from a memorised prefix continues the memorised text.

Options are ``:``-separated ``key=value`` pairs: ``memorise=FILE``, ``field=NAME`` (the question
field of FILE), ``strength=FLOAT`` (log-prob of a memorised token, default -0.05: between it and
1.5 times it, by what comes before; ``strength=0`` gives every memorised token 0, so memorised
questions share their scores exactly), ``name=TEXT``, ``delay=SECONDS`` (a pause per batch, to stand
in for a slow model).
"""

from __future__ import annotations

import hashlib
import math
import re
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np

from ..controls.split import UNSPACED
from ..errors import InputError
from .base import TokenStats

# digits one by one, as many real tokenizers do, and a character of Chinese, Japanese or Thai each
TOKEN = re.compile(rf"\d|[{UNSPACED}]|[^\W\d{UNSPACED}]+|\S|\s+")
PROMPT_CONTEXT_TOKENS = 6  # how much of a prompt's end must match a memorised text to recall it
# How far the text before a token's two-token context moves its log-prob. Without it, questions of
# one template gave their shared words the very same log-probs: piles of one score, which no real
# model gives questions that differ earlier (stats.bulk.pile).
NUANCE = 0.25
GUIDED_MARK = "FIRST PIECE:\n"


def tokenize(text: str) -> list[str]:
    return TOKEN.findall(text)


def _unit(*parts: str) -> float:
    """A deterministic number in [0, 1) from some strings."""
    digest = hashlib.blake2b("\x1f".join(parts).encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "little") / 2**64


def _openings(tokens: Sequence[str]) -> list[str]:
    """For each token, a digest of all the tokens before it."""
    running = hashlib.blake2b(digest_size=8)
    digests = []
    for token in tokens:
        digests.append(running.hexdigest())
        running.update(token.encode("utf-8", "surrogatepass") + b"\x1f")
    return digests


class FakeModel:
    """See the module docstring. Implements :class:`~contamcheck.backends.base.LanguageModel`."""

    context_length: int | None = 4096

    def __init__(
        self,
        memorised: Sequence[str] = (),
        strength: float = -0.05,
        name: str | None = None,
        delay: float = 0.0,
    ) -> None:
        self.memorised = list(memorised)
        self.strength = strength
        self.delay = delay  # seconds per batch, to stand in for a slow model in tests
        self._contexts: set[tuple[str, str, str]] = set()
        self._token_lists = [tokenize(text) for text in self.memorised]
        for tokens in self._token_lists:
            padded = ["", "", *tokens]
            for i in range(2, len(padded)):
                self._contexts.add((padded[i - 2], padded[i - 1], padded[i]))
        digest = hashlib.sha256("\x00".join(self.memorised).encode("utf-8", "surrogatepass")).hexdigest()[:16]
        self.name = name or ("fake:clean" if not self.memorised else f"fake:memorised-{len(self.memorised)}")
        self.identity = f"fake:2:{digest}:{strength}"  # 2: log-probs moved by all that comes before
        self.calls = {"score": 0, "generate": 0}  # batches served, for tests of the engine

    @classmethod
    def from_spec(cls, spec: str) -> FakeModel:
        """Build from ``fake:clean`` or ``fake:memorise=FILE[:field=NAME][:strength=X][:name=N]``."""
        body = spec.removeprefix("fake:")
        options: dict[str, str] = {}
        for part in filter(None, body.split(":")):
            if part == "clean":
                continue
            key, sep, value = part.partition("=")
            if not sep or key not in {"memorise", "field", "strength", "name", "delay"}:
                raise InputError(
                    f"Can't read the fake model spec {spec!r}: unknown part {part!r}. "
                    "Use fake:clean or fake:memorise=FILE[:field=NAME][:strength=X]."
                )
            options[key] = value
        memorised: list[str] = []
        if "memorise" in options:
            from ..benchmarks import load_benchmark

            path = Path(options["memorise"])
            if not path.exists():
                raise InputError(f"The fake model's memorise file {str(path)!r} does not exist.")
            memorised = [item.text for item in load_benchmark(str(path), options.get("field")).items]
        try:
            strength = float(options.get("strength", -0.05))
            delay = float(options.get("delay", 0))
        except ValueError:
            raise InputError(f"strength and delay in {spec!r} must be numbers.") from None
        if not (math.isfinite(strength) and strength <= 0) or not (math.isfinite(delay) and delay >= 0):
            raise InputError(
                f"In {spec!r}, strength is a log-probability (a finite number, 0 or below) and delay "
                "seconds (a finite number, 0 or above)."
            )
        return cls(memorised, strength=strength, name=options.get("name") or spec, delay=delay)

    def _logprob(self, before2: str, before1: str, token: str, before: str) -> float:
        """``before``: a digest of all the tokens before this one."""
        if (before2, before1, token) in self._contexts:
            return self.strength * (1 + 0.5 * _unit("seen", before, token))
        # Clean tokens: log-probs between about -9 and -0.5, rarer for digits and long words.
        return -0.5 - (8.5 - NUANCE) * _unit("lp", before1, token) - NUANCE * _unit("text", before, token)

    def score(self, texts: Sequence[str]) -> list[TokenStats]:
        self.calls["score"] += 1
        time.sleep(self.delay)
        results = []
        for text in texts:
            tokens = tokenize(text)
            padded = ["", "", *tokens]
            logprobs = np.array(
                [
                    self._logprob(padded[i - 2], padded[i - 1], padded[i], before)
                    for i, before in zip(range(2, len(padded)), _openings(tokens), strict=True)
                ],
                dtype=np.float64,
            )
            # A stand-in for the next-token distribution: mean and spread depend only on context.
            mean = np.array([-4.5 - _unit("mu", padded[i - 1]) for i in range(2, len(padded))])
            std = np.array([1.5 + _unit("sd", padded[i - 1]) for i in range(2, len(padded))])
            results.append(TokenStats(logprobs=logprobs, mean=mean, std=std))
        return results

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
        self.calls["generate"] += 1
        time.sleep(self.delay)
        texts: list[str] = []
        for index, (prompt, budget) in enumerate(zip(prompts, max_new_tokens, strict=True)):
            if known and index in known:  # one prompt at a time, as a backend that splits its batch
                texts.append(known[index])
            else:
                texts.append(self._continue(prompt, budget))
                if on_texts is not None:
                    on_texts({index: texts[-1]})
            if on_progress is not None:
                on_progress(len(texts))
        return texts

    def _continue(self, prompt: str, budget: int) -> str:
        if GUIDED_MARK in prompt:
            # An instruction to finish a FIRST PIECE: a memorising model recalls when told the
            # dataset (the guided instruction says "EXACTLY"), and otherwise echoes its end.
            first = prompt.split(GUIDED_MARK, 1)[1].split("\n\nSECOND PIECE:", 1)[0]
            recalled = self._recall(first, budget) if "EXACTLY" in prompt else None
            return recalled if recalled is not None else "".join(tokenize(first)[-budget:])
        return self._recall(prompt, budget) or self._guess(prompt, budget)

    def _recall(self, prompt: str, budget: int) -> str | None:
        tail = [t for t in tokenize(prompt) if not t.isspace()][-PROMPT_CONTEXT_TOKENS:]
        for tokens in self._token_lists:
            words = [(i, t) for i, t in enumerate(tokens) if not t.isspace()]
            for j in range(len(words) - len(tail) + 1):
                if [t for _, t in words[j : j + len(tail)]] == tail and tail:
                    start = words[j + len(tail) - 1][0] + 1
                    return "".join(tokens[start : start + budget])
        return None

    def _guess(self, prompt: str, budget: int) -> str:
        # Unseen: a plausible but uninformed continuation whose numbers depend on the prompt.
        guess = int(_unit("guess", prompt) * 90) + 10
        pieces = ["The", " answer", " is", " ", *str(guess), "."]
        return "".join(pieces[:budget])

    def num_parameters(self) -> int | None:
        return None

    def settings(self) -> dict[str, str]:
        return {"backend": "fake"}

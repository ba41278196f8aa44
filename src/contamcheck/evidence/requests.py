"""What a test can ask a model for. Tests declare these; the engine computes each once."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Literal


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class ScoreRequest:
    """Token statistics of a text (one forward pass serves Min-K%, Min-K%++, zlib and loss)."""

    text: str
    kind: Literal["score"] = "score"

    @property
    def key(self) -> str:
        return f"score:{text_hash(self.text)}"

    @property
    def length(self) -> int:
        return len(self.text)


@dataclass(frozen=True)
class GenerateRequest:
    """A greedy continuation of a prompt, at most ``max_new_tokens`` tokens, optionally as chat."""

    prompt: str
    max_new_tokens: int
    chat: bool = False
    kind: Literal["generate"] = "generate"

    @property
    def key(self) -> str:
        return f"generate:{int(self.chat)}:{self.max_new_tokens}:{text_hash(self.prompt)}"

    @property
    def length(self) -> int:
        return len(self.prompt)


Request = ScoreRequest | GenerateRequest

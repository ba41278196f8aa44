"""What a test can ask a model for. Tests declare these; the engine computes each once."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Literal

# Raised when a fix changes what a backend generates for the same prompt, so that a generation stored
# before it is not read back as today's (it stays in the file, counted by `cache info`, until
# `cache clear`). Scores have none yet: the fixes that changed one (a tokenizer that appends an
# end-of-text, a text past a vision-language model's window) met few stored scores, and a revision
# would lose them all.
# 2 (2026-12-07): in-process generation stops at every end token the model's generation config
#   names (an instruct model's end of turn: Gemma's answers ran on past it), no longer shares a
#   prompt beginning in a batch that outgrows a sliding attention window, and leaves off an
#   end token (of text, or of turn) the tokenizer appends to the prompt; a chat template is told not
#   to reason first (Qwen3's and SmolLM3's did), in-process and on a server.
# 3 (2026-12-07): a reasoning block the chat template opens whatever it is told (DeepSeek-R1's
#   distills, QwQ) is closed before the answer, in-process and on a server.
GENERATION_REVISION = 3
GENERATION_PREFIX = f"generate:r{GENERATION_REVISION}:"


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
        return f"{GENERATION_PREFIX}{int(self.chat)}:{self.max_new_tokens}:{text_hash(self.prompt)}"

    @property
    def length(self) -> int:
        return len(self.prompt)


Request = ScoreRequest | GenerateRequest

"""Backends: where token statistics and generations come from.

Every backend implements :class:`LanguageModel`. ``hf`` (transformers, in-process) is the default;
``fake`` is a scripted model for tests and documentation; ``openai`` reads a model behind an
OpenAI-compatible server (vLLM's, for one). MODEL strings choose the backend by prefix:
``fake:...`` for the fake, ``openai:URL`` for a server, anything else for transformers.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ..registry import Registry
from .base import LanguageModel, ModelDescription, TokenStats
from .reference import GPT2_FAMILY, reference_for_size, references_by_size

__all__ = [
    "BACKENDS",
    "GPT2_FAMILY",
    "LanguageModel",
    "ModelDescription",
    "ModelOptions",
    "TokenStats",
    "backend_name",
    "default_threads",
    "describe_model",
    "load_model",
    "reference_for_size",
    "references_by_size",
]


@dataclass(frozen=True)
class ModelOptions:
    device: str = "auto"
    dtype: str = "auto"
    threads: int | None = None
    trust_remote_code: bool = False
    device_map: str | None = None
    cache_dir: Path | None = None  # where converted GGUF models are kept (None: convert every time)


Digest = Callable[[Path], str]


class Backend(Protocol):
    def describe(self, spec: str, options: ModelOptions, digest: Digest) -> ModelDescription: ...

    def load(self, spec: str, options: ModelOptions, description: ModelDescription) -> LanguageModel: ...


BACKENDS: Registry[Backend] = Registry("backend")
BACKENDS.register("hf", "contamcheck.backends.loaders:HF")
BACKENDS.register("fake", "contamcheck.backends.loaders:FAKE")
BACKENDS.register("openai", "contamcheck.backends.loaders:SERVER")


def backend_name(spec: str) -> str:
    if spec.startswith("fake:"):
        return "fake"
    if spec.startswith("openai:"):
        return "openai"
    return "hf"


def check_spec(spec: str) -> None:
    """Fail on a MODEL that can't name a model from what its text and the file system say (a
    missing path, a folder that isn't a model, a malformed server address), before anything is
    opened or written; the Hub and servers are asked when the model is described."""
    name = backend_name(spec)
    if name == "hf":
        from .hf import resolve_source

        resolve_source(spec)
    elif name == "openai":
        from .server import parse_spec

        parse_spec(spec)
    else:  # the fake backend's options and memorise file
        from .fake import FakeModel

        FakeModel.from_spec(spec)


def describe_model(spec: str, options: ModelOptions, digest: Digest) -> ModelDescription:
    """Identify MODEL without loading it (hashing its files, at most)."""
    return BACKENDS.get(backend_name(spec)).describe(spec, options, digest)


def load_model(
    spec: str, options: ModelOptions | None = None, description: ModelDescription | None = None
) -> LanguageModel:
    """Load MODEL with the backend its spec names."""
    options = options or ModelOptions()
    backend = BACKENDS.get(backend_name(spec))
    if description is None:
        from ..evidence.store import MemoryStore

        description = backend.describe(spec, options, MemoryStore().file_digest)
    return backend.load(spec, options, description)


def default_threads() -> int:
    """The cores this process may use (not torch's default, which can oversubscribe)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)

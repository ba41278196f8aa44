"""Backends: where token statistics and generations come from.

Every backend implements :class:`LanguageModel`. ``hf`` (transformers, in-process) is the default;
``fake`` is a scripted model for tests and documentation. MODEL strings choose the backend by
prefix: ``fake:...`` for the fake, anything else for transformers.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from ..registry import Registry
from .base import LanguageModel, TokenStats
from .reference import GPT2_FAMILY, reference_for_size

__all__ = [
    "BACKENDS",
    "GPT2_FAMILY",
    "LanguageModel",
    "ModelOptions",
    "TokenStats",
    "backend_name",
    "default_threads",
    "load_model",
    "reference_for_size",
]


@dataclass(frozen=True)
class ModelOptions:
    device: str = "auto"
    dtype: str = "auto"
    threads: int | None = None
    trust_remote_code: bool = False
    device_map: str | None = None


Loader = Callable[[str, ModelOptions], LanguageModel]
BACKENDS: Registry[Loader] = Registry("backend")
BACKENDS.register("hf", "contamcheck.backends.loaders:load_hf")
BACKENDS.register("fake", "contamcheck.backends.loaders:load_fake")


def backend_name(spec: str) -> str:
    if spec.startswith("fake:"):
        return "fake"
    return "hf"


def load_model(spec: str, options: ModelOptions | None = None) -> LanguageModel:
    """Load MODEL with the backend its spec names."""
    return BACKENDS.get(backend_name(spec))(spec, options or ModelOptions())


def default_threads() -> int:
    """The cores this process may use (not torch's default, which can oversubscribe)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)

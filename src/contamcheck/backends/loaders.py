"""Backend loaders, imported only when a backend is used (transformers is slow to import)."""

from __future__ import annotations

from . import ModelOptions, default_threads
from .base import LanguageModel


def load_hf(spec: str, options: ModelOptions) -> LanguageModel:
    import torch

    torch.set_num_threads(options.threads or default_threads())
    from .hf import HFModel

    return HFModel.load(
        spec,
        device=options.device,
        dtype=options.dtype,
        trust_remote_code=options.trust_remote_code,
        device_map=options.device_map,
    )


def load_fake(spec: str, options: ModelOptions) -> LanguageModel:
    from .fake import FakeModel

    return FakeModel.from_spec(spec)

"""The backends' entry points, imported only when a backend is used (transformers is slow to import)."""

from __future__ import annotations

from . import Digest, ModelOptions, default_threads
from .base import LanguageModel, ModelDescription


class _HuggingFace:
    def describe(self, spec: str, options: ModelOptions, digest: Digest) -> ModelDescription:
        from .hf import describe

        return describe(spec, options, digest)

    def load(self, spec: str, options: ModelOptions, description: ModelDescription) -> LanguageModel:
        from ..evidence.cache import CONVERTED_DIR
        from .hf import HFModel

        return HFModel.load(
            spec,
            device=options.device,
            dtype=options.dtype,
            trust_remote_code=options.trust_remote_code,
            device_map=options.device_map,
            identity=description.identity,
            converted_dir=options.cache_dir / CONVERTED_DIR if options.cache_dir else None,
            threads=options.threads or default_threads(),
        )


class _Fake:
    def describe(self, spec: str, options: ModelOptions, digest: Digest) -> ModelDescription:
        model = self.load(spec, options, None)
        return ModelDescription(model.name, model.identity, model.settings())

    def load(self, spec: str, options: ModelOptions, description: ModelDescription | None) -> LanguageModel:
        from .fake import FakeModel

        return FakeModel.from_spec(spec)


HF = _HuggingFace()
FAKE = _Fake()

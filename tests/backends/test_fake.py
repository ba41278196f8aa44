"""The stand-in model's spec: what it takes, and what it refuses with the reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from contamcheck.backends.fake import FakeModel
from contamcheck.cli import main
from contamcheck.errors import InputError


@pytest.mark.parametrize("option", ["strength=nan", "strength=1", "strength=-inf", "delay=-1", "delay=inf"])
def test_a_strength_or_delay_no_model_could_have_is_refused(option, tmp_path: Path, capsys):
    memorised = tmp_path / "memorised.jsonl"
    memorised.write_text('{"question": "Janet has 16 ducks."}\n', encoding="utf-8")
    spec = f"fake:memorise={memorised}:{option}"
    with pytest.raises(InputError, match="strength is a log-probability"):
        FakeModel.from_spec(spec)
    assert main([spec, "sample", "-n", "20"]) == 2  # not an audit of NaN scores, inconclusive
    assert "Traceback" not in capsys.readouterr().err


def test_a_finite_strength_and_delay_are_taken(tmp_path: Path):
    memorised = tmp_path / "memorised.jsonl"
    memorised.write_text('{"question": "Janet has 16 ducks."}\n', encoding="utf-8")
    model = FakeModel.from_spec(f"fake:memorise={memorised}:strength=-0.5:delay=0")
    assert model.strength == -0.5

"""guided against a control file: the instruction's own effect cancels, memory does not.

The artefact is the one measured on SmolLM2-135M and HumanEval (docs/METHODS.md, "guided is
uncalibrated"): told the dataset's name, a model that never saw it writes differently (there, it
copied the first piece back, whose words recur in the second half), so the guided overlap rises for
every question; here it writes a question's usual ending. The sign-flip
test reads that as memory; control questions of the same kind, given the same two instructions,
rise alike and so are the null that cancels it.
"""

from __future__ import annotations

import json
from importlib import resources

import pytest

from contamcheck import AuditConfig, audit
from contamcheck.backends.fake import GUIDED_MARK, FakeModel
from contamcheck.benchmarks import load_benchmark
from contamcheck.controls import Controls
from contamcheck.evidence import EvidenceEngine, MemoryStore
from contamcheck.methods import MethodSettings, create_test
from contamcheck.methods.guided import Guided
from contamcheck.pipeline.runners import run_guided
from contamcheck.report.model import ItemRecord

SAMPLE = str(resources.files("contamcheck.benchmarks").joinpath("data/sample.jsonl"))
PERMUTATIONS = 2000


class FollowsTheWording(FakeModel):
    """Never saw anything. Told where the text comes from, it writes what such questions usually
    end with; asked only to finish the question, something unrelated."""

    def _continue(self, prompt: str, budget: int) -> str:
        if GUIDED_MARK in prompt:
            told = "EXACTLY" in prompt
            return "How many of them are there in total?" if told else self._guess(prompt, budget)
        return super()._continue(prompt, budget)


def run(model: FakeModel, control_file: bool):
    items = load_benchmark(SAMPLE).items
    questions, others = items[:60], items[60:]
    test = create_test("guided", MethodSettings(dataset="GSM8K", split="test", seed=3))
    assert isinstance(test, Guided)
    controls = (
        Controls(kind="file", items=questions, controls=others)
        if control_file
        else Controls(kind="twins", items=questions)
    )
    asked = [*controls.items, *controls.controls]
    evidence = EvidenceEngine(lambda: model, "m", MemoryStore(), 16).compute(
        [r for item in asked for r in test.requests(item.text)], "model"
    )
    records = {i.id: ItemRecord(id=i.id, position=i.position, text=i.text) for i in questions}
    control_records = {
        i.id: ItemRecord(id=i.id, position=i.position, text=i.text, is_control=True)
        for i in controls.controls
    }
    calibrated = test.calibrated_against(control_file)
    result = run_guided(test, controls, evidence, records, control_records, calibrated, "c", PERMUTATIONS, 3)
    return result, records, control_records


def test_the_instruction_artefact_fools_the_sign_flip_test_and_not_the_controls():
    alone, _, _ = run(FollowsTheWording(), control_file=False)
    assert not alone.calibrated
    assert alone.flag_rate is not None and alone.flag_rate > 0.3 and alone.p_value < 0.001

    against_controls, _, control_records = run(FollowsTheWording(), control_file=True)
    assert against_controls.calibrated
    assert against_controls.flag_rate is not None and against_controls.flag_rate <= 0.15
    assert against_controls.p_value > 0.05
    # the controls were given the same two instructions and are judged against the same threshold
    for record in control_records.values():
        entry = record.tests["guided"]
        assert entry.general_generated and entry.flagged == (entry.diff > against_controls.threshold)
    assert "control questions under the same two instructions" in (against_controls.note or "")


def test_memory_is_caught_against_the_controls():
    questions = [item.text for item in load_benchmark(SAMPLE).items[:60]]
    result, records, _ = run(FakeModel(questions), control_file=True)
    assert result.calibrated and result.p_value is not None
    assert result.p_value < 0.001 and result.flag_rate is not None and result.flag_rate > 0.5
    assert sum(bool(r.tests["guided"].flagged) for r in records.values()) == result.n_flagged


@pytest.mark.parametrize("control_file", [False, True])
def test_a_clean_model_without_the_artefact_is_not_flagged(control_file):
    result, _, _ = run(FakeModel(), control_file)
    assert result.status == "skipped" or (result.p_value is not None and result.p_value > 0.05)


def test_an_audit_with_a_control_file_counts_guided_as_calibrated(tmp_path):
    rows = load_benchmark(SAMPLE).items
    benchmark, control = tmp_path / "GSM8K" / "test.jsonl", tmp_path / "later.jsonl"
    benchmark.parent.mkdir()
    benchmark.write_text("".join(json.dumps({"question": i.text}) + "\n" for i in rows[:50]))
    control.write_text("".join(json.dumps({"question": i.text}) + "\n" for i in rows[50:100]))
    common = {"benchmark": str(benchmark), "tests": ["guided"], "no_cache": True, "permutations": 2000}
    cheater = f"fake:memorise={benchmark}"

    alone = audit(AuditConfig(model=cheater, **common))  # type: ignore[arg-type]
    assert not alone.tests[0].calibrated and alone.verdict.code == "inconclusive"

    with_controls = audit(AuditConfig(model=cheater, control=str(control), **common))  # type: ignore[arg-type]
    (guided,) = with_controls.tests
    assert guided.calibrated and "control file" in guided.calibration
    assert "control" in guided.null_hypothesis
    assert with_controls.verdict.code == "likely"
    controls = [item for item in with_controls.items if item.is_control]
    assert len(controls) == 50 and all(item.tests["guided"].general_generated for item in controls)

    clean = audit(AuditConfig(model="fake:clean", control=str(control), **common))  # type: ignore[arg-type]
    assert clean.verdict.code == "clean" and clean.tests[0].calibrated

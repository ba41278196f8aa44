"""A reference that saw part of the benchmark is passed over.

Each likelihood score with a reference is the model's less the reference's. A reference that
memorised half of the questions scores them far above the rest, so the model's clean scores less
the reference's put that half low and the other half, which neither model saw, beyond the bulk: a
clean model read "likely contaminated" with min-k, min-k++ and zlib at 48-50% flagged. Now the
reference is audited first as a model without a reference; where that audit reads "likely
contaminated" and the model's own scores do not, the likelihood tests judge the model's own scores
against the bulk instead.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contamcheck import AuditConfig, audit
from contamcheck.benchmarks import load_benchmark
from contamcheck.cli.app import main
from contamcheck.errors import InputError
from contamcheck.report import read_report, to_html, to_json

TESTS = ["min-k", "min-k++", "zlib"]


@pytest.fixture(scope="module")
def half(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every other question of the bundled sample."""
    path = tmp_path_factory.mktemp("reference") / "half.jsonl"
    items = load_benchmark("sample").items
    path.write_text("".join(json.dumps({"question": i.text}) + "\n" for i in items[::2]), encoding="utf-8")
    return path


def run(model: str, reference: str) -> dict:
    config = AuditConfig(model=model, benchmark="sample", reference=reference, tests=TESTS, no_cache=True)
    return json.loads(to_json(audit(config)))


def test_a_reference_that_saw_half_the_benchmark_is_passed_over(half: Path) -> None:
    report = run("fake:clean", f"fake:memorise={half}")
    assert report["reference"]["status"] == "passed-over"
    reason = report["reference"]["reason"]
    assert "reads likely contaminated (questions flagged: min-k 50%" in reason and "--control" in reason
    assert any(c.startswith(f"Reference fake:memorise={half} passed over") for c in report["caveats"])
    assert report["verdict"]["code"] == "clean"
    for test in report["tests"]:
        assert test["calibration"].startswith("the bulk of the benchmark's own scores"), test["calibration"]
        assert test["flag_rate"] <= 0.1
        assert all(item["tests"][test["name"]]["reference_score"] is None for item in report["items"])


def test_where_the_model_reads_likely_alone_too_the_reference_is_kept_and_the_caveat_says_so(
    half: Path,
) -> None:
    """Both may have seen the questions, or the benchmark's scores spread unevenly without a
    reference (which a clean reference corrects): the reference stays, the caveat names both."""
    report = run(f"fake:memorise={half}:strength=-0.1", f"fake:memorise={half}")  # another model
    assert report["reference"]["status"] == "used"
    said = [
        c for c in report["caveats"] if c.startswith(f"The reference fake:memorise={half}, audited itself")
    ]
    assert len(said) == 1 and "and so does the model" in said[0]


def test_a_clean_reference_is_used(half: Path) -> None:
    report = run(f"fake:memorise={half}", "fake:clean")
    assert report["reference"]["status"] == "used" and report["verdict"]["code"] == "likely"
    assert not any("passed over" in c for c in report["caveats"])


def test_the_terminal_html_and_a_saved_report_say_so(half: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "report.json"
    code = main(["fake:clean", "sample", "--reference", f"fake:memorise={half}", "--quick", "--no-cache",
                 "--output", str(out)])  # fmt: skip
    assert code == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert f"reference: none (fake:memorise={half} passed over: it looks contaminated itself;" in printed
    report = read_report(out)
    assert report.reference.status == "passed-over" and report.schema_version >= "1.4"
    # its evidence was the self-check's, and is counted as the passed-over reference's
    assert list(report.run.evidence) == ["model", f"reference passed over (fake:memorise={half})"]
    html = to_html(report)
    assert "audited itself as a model without a reference" in html
    assert f"reference: fake:memorise={half}" not in html  # the header names no reference in use
    assert "none (fake:memorise=" in html and "passed over: it looks contaminated itself)" in html


def test_with_a_control_file_the_reference_is_not_checked(half: Path, tmp_path: Path) -> None:
    """Against a control file the reference also cancels how the file differs in kind from the
    benchmark, so alone it may stand out for that: the check runs with twins only."""
    late = tmp_path / "late.jsonl"
    items = load_benchmark("sample").items
    late.write_text("".join(json.dumps({"question": i.text + " Answer in words."}) + "\n" for i in items))
    config = AuditConfig(
        model="fake:clean", benchmark="sample", reference=f"fake:memorise={half}", tests=TESTS,
        control=str(late), no_cache=True,
    )  # fmt: skip
    assert audit(config).reference.status == "used"


def test_no_reference_is_resolved_when_no_chosen_test_compares_with_one(monkeypatch, tmp_path):
    def must_not_resolve(*_: object, **__: object) -> None:
        raise AssertionError("resolved a reference no test uses")

    monkeypatch.setattr("contamcheck.pipeline.resolve_reference", must_not_resolve)
    config = AuditConfig(model="fake:clean", benchmark="sample", limit=20, tests=["guided"], no_cache=True)
    reference = audit(config).reference
    assert reference.status == "none" and reference.reason.startswith("no test chosen compares")
    # a likelihood test chosen but nothing to score (no question has a number, so none has a twin):
    # refused before any model, the reference too, is resolved
    words = tmp_path / "words.jsonl"
    words.write_text(
        "".join(
            json.dumps({"question": f"Name a colour that rhymes with word {w}."}) + "\n" for w in "abcdefgh"
        )
    )
    config = AuditConfig(model="fake:clean", benchmark=str(words), tests=["min-k"], no_cache=True)
    with pytest.raises(InputError, match=r"no model was loaded\. min-k: no testable question"):
        audit(config)


def test_a_reference_error_is_named_as_one_once(monkeypatch, capsys):
    """A Hub reference not downloaded yet loads while it is described: said to be the reference once."""
    from contamcheck import hub

    monkeypatch.setattr(hub, "offline_mode", lambda: False)  # as here, whatever the environment
    monkeypatch.setattr(hub, "hub_reachable", lambda: False)
    assert main(["fake:clean", "sample", "-n", "20", "--no-cache", "--reference", "nobody/not-a-model"]) == 3
    err = capsys.readouterr().err
    assert err.count("--reference: ") == 1 and "error: --reference: Can't reach the Hugging Face Hub" in err

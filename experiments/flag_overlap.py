"""Are a contaminated model's held-out flags its own, or the untouched base model's? Count.

A question the fine-tuned model never saw can still be flagged: by chance, or because the base
model already "knew" it before any leak (HumanEval is copied all over public code). This reads the
saved audits of one split (``validate.py``'s JSON reports) and, for one test, counts each model's
flagged leaked questions and lists its flagged held-out ones (every question it was not trained
on), which of them the base model's audit in the same setting flags too, and the chance of at
least that many flags among the held-out questions at the test's expected rate (5%) and at the
base model's own rate.

    python experiments/flag_overlap.py docs/validation/humaneval-seed0 --test completion
"""

from __future__ import annotations

import argparse
from pathlib import Path

from reanalyse import split_of
from scipy import stats

from contamcheck import Report
from contamcheck.stats.flags import EXPECTED_RATE

MAX_NAMED = 8  # flagged ids named per row; the rest are counted


def flags_of(path: Path, test: str) -> dict[str, bool]:
    report = Report.model_validate_json(path.read_text())
    flags = {}
    for item in report.items:
        entry = item.tests.get(test)
        if not item.is_control and entry is not None and entry.flagged is not None:
            flags[item.id] = entry.flagged
    return flags


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("folder", type=Path)
    parser.add_argument("--test", default="completion")
    parser.add_argument("--setting", default="default")
    args = parser.parse_args(argv)
    split = split_of(args.folder)
    if split is None:
        raise SystemExit(f"no split file beside {args.folder}: run contaminate.py's split")
    leaked = set(split["leaked"])
    base_path = args.folder / f"{args.setting}-base.json"
    if not base_path.exists():  # the base as its own reference is an audit without one
        base_path = args.folder / "default-base.json"
    base = flags_of(base_path, args.test)
    base_rate = sum(base.values()) / len(base)
    print(f"base model: {sum(base.values())} of {len(base)} flagged ({base_rate:.0%})")
    print(
        "| model | leaked flagged | never seen, flagged | of them flagged in the base too | "
        f"P(at least as many) at {EXPECTED_RATE:.0%} | at the base's rate |"
    )
    print("|---|---|---|---|---|---|")
    paths = args.folder.glob(f"{args.setting}-*.json")
    for path in sorted(paths, key=lambda p: (len(p.stem), p.stem)):  # leak-3 before leak-10
        if path.stem == f"{args.setting}-base":
            continue
        flags = flags_of(path, args.test)
        held_out = [i for i in flags if i not in leaked]
        seen = [flags[i] for i in flags if i in leaked]
        flagged = sorted(i for i in held_out if flags[i])
        shared = [i for i in flagged if base.get(i)]
        named = ", ".join(shared[:MAX_NAMED]) + (
            f" and {len(shared) - MAX_NAMED} more" if len(shared) > MAX_NAMED else ""
        )
        k, n = len(flagged), len(held_out)
        print(
            f"| {path.stem.removeprefix(args.setting + '-')} | "
            + (f"{sum(seen)} of {len(seen)} ({sum(seen) / len(seen):.0%})" if seen else "none leaked")
            + f" | {k} of {n} ({k / n:.0%}) | {len(shared)}{': ' + named if shared else ''} | "
            f"{stats.binom.sf(k - 1, n, EXPECTED_RATE):.2g} | {stats.binom.sf(k - 1, n, base_rate):.2g} |"
        )


if __name__ == "__main__":
    main()

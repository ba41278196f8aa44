"""Guided reproduction (Golchin & Surdeanu 2023, "Time Travel in LLMs: Tracing Data Contamination
in Large Language Models").

The model gets the first half of a question twice: once with a *guided* instruction that names the
dataset and its split and asks for the second half "as EXACTLY appeared in the dataset", once with
a *general* instruction that only asks to finish it. Both completions are compared with the true
second half by ROUGE-L (F-measure). A model that memorised the benchmark reproduces more when told
where the text comes from; without memory the dataset's name does not help. The statistic is
ROUGE-L(guided) − ROUGE-L(general) per question, tested with sign flips (the paper used an
unpaired bootstrap of the means; the paired test uses the pairing it ignored).

The general instruction is not a null a clean model treats like the guided one: the two differ in
more than the dataset's name, and a small model reacts to the wording (docs/METHODS.md, "guided is
uncalibrated"). So the test is uncalibrated on its own. With a control file (``--control``) it is
calibrated: the control questions get the same two instructions, naming the same dataset, and each
question's difference is compared with theirs, so only what the benchmark's questions gain beyond
questions of the same kind the model cannot have seen counts.

The paper's templates cover classification, NLI and summaries; we adapt its summary template
("FIRST PIECE of a summary ... SECOND PIECE") with "question" or "programming problem" in place of
"summary". Prompts go through the tokenizer's chat template when it has one.
"""

from __future__ import annotations

import functools
import math
import unicodedata
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..controls import new_numbers, normalise, numbers_in, split_question
from ..controls.split import word_spans
from ..evidence import Evidence, GenerateRequest, Request
from .base import Test, TestKind
from .completion import generation_budget

FOLLOWS_INSTRUCTIONS_MIN_ROUGE = 0.1  # below this in both conditions, the model isn't following
PREDICTABLE_ROUGE = 0.5  # above this in the general condition too, overlap says little

GUIDED_TEMPLATE = (
    "INSTRUCTION:\n"
    "You are provided with the FIRST PIECE of a {subject} from the {split} split "
    "of the {dataset} dataset.\n"
    "Finish the SECOND PIECE of the {subject} as EXACTLY appeared in the dataset.\n"
    "ONLY rely on the original form of the {subject} in the dataset to finish the SECOND PIECE.\n"
    "\n"
    "FIRST PIECE:\n{first_piece}\n"
    "\n"
    "SECOND PIECE:\n"
)
GENERAL_TEMPLATE = (
    "INSTRUCTION:\n"
    "Finish the SECOND PIECE based on the FIRST PIECE, "
    "such that these two pieces become a single {subject}.\n"
    "\n"
    "FIRST PIECE:\n{first_piece}\n"
    "\n"
    "SECOND PIECE:\n"
)


@dataclass(frozen=True)
class DatasetContext:
    """How the guided instruction names the benchmark."""

    name: str
    split: str
    kind: str

    @property
    def subject(self) -> str:
        return "programming problem" if self.kind == "code" else "question"


class WordTokenizer:
    """ROUGE's words in any script: runs of letters, marks and digits, lowercased, where a character
    of a script without spaces is a word of its own (``controls.split``). rouge_score's tokenizer
    keeps only a-z and 0-9, so Greek, Russian or Chinese text scored 0 against itself; on ASCII text
    the two agree."""

    def tokenize(self, text: str) -> list[str]:
        text = unicodedata.normalize("NFC", text).lower()
        tokens: list[str] = []
        for start, end in word_spans(text):
            word: list[str] = []
            for char in text[start:end]:
                if unicodedata.category(char)[0] in "LMN":
                    word.append(char)
                elif word:
                    tokens.append("".join(word))
                    word = []
            if word:
                tokens.append("".join(word))
        return tokens


@functools.lru_cache(maxsize=1)
def _rouge() -> Any:
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False, tokenizer=WordTokenizer())


def rouge_l(reference: str, candidate: str) -> float:
    """ROUGE-L F-measure (0 when either side is empty)."""
    if not reference.strip() or not candidate.strip():
        return 0.0
    return float(_rouge().score(reference, candidate)["rougeL"].fmeasure)


def number_recall(prefix: str, suffix: str, generated: str) -> float:
    wanted = new_numbers(prefix, suffix)
    if not wanted:
        return math.nan
    written = {normalise(n) for n in numbers_in(generated)}
    return sum(n in written for n in wanted) / len(wanted)


class Guided(Test):
    name = "guided"
    kind: ClassVar[TestKind] = "self-paired"
    calibrated: ClassVar[bool] = False  # on its own; against a control file it is (the module doc)
    title = "Told the dataset's name, the model reproduces more of the question"
    measures = (
        "ROUGE-L between the true second half of a question and the model's completion of its first half, "
        "under an instruction naming the dataset and split (guided) minus under a general one."
    )
    null_hypothesis = (
        "The model never saw the benchmark, so naming the dataset does not help it reproduce a question: "
        "guided − general differences are symmetric around zero."
    )
    caveat = (
        "Needs a model that follows instructions; with one that doesn't, both overlaps are near zero and "
        "the test says so instead of passing. High overlap in both conditions with little guided gain is "
        "weak evidence either way. Instruction wording adapted from the paper's summary template."
    )
    citation = "Golchin & Surdeanu 2023, Time Travel in LLMs (arXiv:2308.08493)"

    @classmethod
    def calibrated_against(cls, control_file: bool) -> bool:
        return control_file

    def __init__(self, settings: Any = None) -> None:
        super().__init__(settings)
        self.context = DatasetContext(
            self.settings.dataset, self.settings.split, self.settings.benchmark_kind
        )

    def prompts(self, text: str) -> tuple[str, str, int] | None:
        split = split_question(text)
        if split is None:
            return None
        fields = {
            "subject": self.context.subject,
            "split": self.context.split,
            "dataset": self.context.name,
            "first_piece": split.prefix,
        }
        return (
            GUIDED_TEMPLATE.format(**fields),
            GENERAL_TEMPLATE.format(**fields),
            generation_budget(split.suffix),
        )

    def requests(self, text: str) -> list[Request]:
        prompts = self.prompts(text)
        if prompts is None:
            return []
        guided, general, budget = prompts
        return [GenerateRequest(guided, budget, chat=True), GenerateRequest(general, budget, chat=True)]

    def completions(self, text: str, evidence: Evidence) -> tuple[str, str] | None:
        prompts = self.prompts(text)
        if prompts is None:
            return None
        guided, general, budget = prompts
        return evidence.generation(guided, budget, chat=True), evidence.generation(general, budget, chat=True)

    def overlaps(self, text: str, evidence: Evidence) -> tuple[float, float]:
        """(guided, general) ROUGE-L with the true second half; NaN when the text can't be split."""
        completions = self.completions(text, evidence)
        split = split_question(text)
        if completions is None or split is None:
            return math.nan, math.nan
        return rouge_l(split.suffix, completions[0]), rouge_l(split.suffix, completions[1])

    def number_recalls(self, text: str, evidence: Evidence) -> tuple[float, float]:
        completions = self.completions(text, evidence)
        split = split_question(text)
        if completions is None or split is None:
            return math.nan, math.nan
        return (
            number_recall(split.prefix, split.suffix, completions[0]),
            number_recall(split.prefix, split.suffix, completions[1]),
        )

    def diagnose(self, guided: np.ndarray, general: np.ndarray) -> tuple[str | None, str | None]:
        """(reason to skip, note): whether the overlaps can say anything at all."""
        mean_guided, mean_general = float(np.mean(guided)), float(np.mean(general))
        if max(mean_guided, mean_general) < FOLLOWS_INSTRUCTIONS_MIN_ROUGE:
            return (
                f"the model does not follow the completion instructions (mean ROUGE-L {mean_guided:.2f} "
                f"guided, {mean_general:.2f} general), so this test can't tell either way",
                None,
            )
        note = f"Mean ROUGE-L {mean_guided:.2f} guided vs {mean_general:.2f} general."
        if mean_general >= PREDICTABLE_ROUGE and mean_guided - mean_general < 0.05:
            note += (
                " Overlap is high even without the dataset's name and the guided gain is small: the "
                "questions are predictable (or memorised so well that the instruction does not matter); "
                "weak evidence either way."
            )
        return None, note

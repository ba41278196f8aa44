"""Controls: what each benchmark question is compared with.

*Number twins* (paired): each question against the same question with other numbers.
*A control file* (unpaired): questions the model cannot have seen, e.g. written after its cutoff.

With ``twinless``, questions that get no twin (no number to change) are tested too, by the tests
that judge a question's own score against the bulk of the benchmark (the likelihood tests); the
paired tests (completion) skip them.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from ..benchmarks import Benchmark, Item
from ..errors import InputError
from .numbers import NUMBER, hard_new_numbers, is_changeable, new_numbers, normalise, numbers_in
from .split import MIN_WORDS, Split, split_question, word_spans
from .twins import NumberPool, is_python_source, make_twins

__all__ = [
    "CONTROLS_AT_LEAST",
    "DUPLICATE",
    "FEW_TWINS",
    "NO_TWIN",
    "NUMBER",
    "TOO_SHORT",
    "Controls",
    "NumberPool",
    "Split",
    "build_controls",
    "few_twins",
    "hard_new_numbers",
    "is_changeable",
    "is_python_source",
    "make_twins",
    "new_numbers",
    "normalise",
    "numbers_in",
    "split_question",
]

ControlKind = Literal["twins", "file"]
TOO_SHORT = f"too short to split (under {MIN_WORDS} words)"
# With m controls an unseen question beats the one it must beat 1 time in m + 1 at best
# (stats.flags.control_rank): from 19 on that is 5%, so small samples still draw 20.
CONTROLS_AT_LEAST = 20
NO_TWIN = "no number to change, so no twin"
DUPLICATE = "the same text as an earlier question"
FEW_TWINS = "numbers too few or too small for"  # the start of few_twins(N)


@dataclass(frozen=True)
class Controls:
    """The questions under test and what each is compared with."""

    kind: ControlKind
    items: tuple[Item, ...]  # the sample under test, in benchmark order
    twins: dict[str, tuple[str, ...]] = field(default_factory=dict)  # item id -> its twins
    controls: tuple[Item, ...] = ()  # control-file questions (kind "file")
    set_aside: dict[str, int] = field(default_factory=dict)  # untestable questions, by reason
    testable: int = 0  # questions that could have been sampled
    control_pool: int = 0  # usable control-file questions, before the draw of as many as -n
    control_shared: int = 0  # control-file questions that are benchmark questions too: left out
    twinless: bool = False  # questions without a twin were kept for the bulk tests (--twinless)

    @property
    def paired(self) -> bool:
        return self.kind == "twins"

    @property
    def without_twin(self) -> int:
        """Questions under test that have no twin (only with --twinless)."""
        return sum(item.id not in self.twins for item in self.items) if self.paired else 0

    @property
    def description(self) -> str:
        if self.paired:
            per = max((len(t) for t in self.twins.values()), default=0)
            text = "number twins" + (f" ({per} per question)" if per > 1 else "")
            if self.twinless:
                alone = self.without_twin
                if alone == len(self.items):
                    return "no twins: no question has one; --twinless judges each against the bulk"
                text += (
                    f"; {alone} without a twin (--twinless: not in completion)"
                    if alone
                    else "; --twinless (every question drawn has a twin)"
                )
            return text
        drawn = f" drawn from {self.control_pool}" if self.control_pool > len(self.controls) else ""
        shared = (
            f"; {self.control_shared} that are benchmark questions too left out"
            if self.control_shared
            else ""
        )
        return f"control file ({len(self.controls)} questions{drawn}{shared})"


def build_controls(
    benchmark: Benchmark,
    limit: int,
    seed: int = 0,
    control: Benchmark | None = None,
    twins_per_item: int = 1,
    twinless: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> Controls:
    """Set aside untestable questions, then draw a seeded sample of ``limit`` and its controls.

    ``twinless``: a question that gets no twin is drawn too (the bulk tests judge it), not set aside.
    ``progress(done, total)`` hears the making of the twins, of the benchmark's questions, about
    every hundredth (every question that may have one gets its twins, so that the report can count
    those set aside).
    """
    if limit < 1:
        raise InputError(f"-n/--limit must be at least 1 (got {limit}).")
    if twins_per_item < 1:  # zero twins would make every question "testable" with nothing to compare
        raise InputError(f"--twins must be at least 1 (got {twins_per_item}).")
    if progress is not None and control is None:
        progress(0, len(benchmark.items))
    set_aside: dict[str, int] = dict(benchmark.set_aside)
    # a question repeated would count its flag once per copy: one memorised question, fifteen flags
    first: dict[str, Item] = {}
    for item in benchmark.items:
        first.setdefault(item.text, item)
    unique = [item for item in benchmark.items if first[item.text] is item]
    if len(unique) < len(benchmark.items):
        set_aside[DUPLICATE] = len(benchmark.items) - len(unique)
    long_enough = [item for item in unique if split_question(item.text) is not None]
    if len(long_enough) < len(unique):
        set_aside[TOO_SHORT] = len(unique) - len(long_enough)
    rng = random.Random(seed)

    if control is not None:
        usable = [item for item in control.items if split_question(item.text) is not None]
        # a control the benchmark also holds may have been seen with it: it can't stand for unseen
        # text. Compared as words, so that a copy with other spacing or line ends is caught too.
        in_benchmark = {_words(item.text) for item in benchmark.items}
        shared = sum(_words(item.text) in in_benchmark for item in usable)
        distinct: dict[str, Item] = {}  # a control repeated counts once
        for item in usable:
            distinct.setdefault(_words(item.text), item)
        controls = [item for words, item in distinct.items() if words not in in_benchmark]
        if usable and not controls:
            raise InputError(
                f"Every question of the control file {control.spec!r} is also in the benchmark; controls "
                "must be questions the model can't have seen (written after its cutoff, say)."
            )
        if not controls:
            raise InputError(
                f"The control file {control.spec!r} has no question long enough to test "
                f"(each needs at least {MIN_WORDS} words)."
            )
        sample = _sample(long_enough, limit, rng)
        # as many controls as questions, and never fewer than CONTROLS_AT_LEAST where the file has them
        drawn = min(max(limit, CONTROLS_AT_LEAST), len(controls))
        chosen_controls = tuple(sorted(rng.sample(controls, drawn), key=lambda i: i.position))
        return Controls(
            "file",
            sample,
            controls=chosen_controls,
            set_aside=set_aside,
            testable=len(long_enough),
            control_pool=len(controls),
            control_shared=shared,
        )

    pool = NumberPool(item.text for item in benchmark.items)
    twins: dict[str, tuple[str, ...]] = {}
    short_of = 0  # questions with some twins, fewer than asked: their numbers allow no more
    total = len(benchmark.items)
    passed_over = total - len(long_enough)  # repeated or too short: done with
    every = max(1, total // 100)
    for done, item in enumerate(long_enough, passed_over + 1):
        made = make_twins(item.text, pool, seed, twins_per_item)
        if len(made) == twins_per_item:
            twins[item.id] = tuple(made)
        elif made:
            short_of += 1
        if progress is not None and (done % every == 0 or done == total):
            progress(done, total)
    if progress is not None and not long_enough:
        progress(total, total)
    no_twin = len(long_enough) - len(twins) - short_of
    if no_twin and not twinless:
        set_aside[NO_TWIN] = no_twin
    if short_of and not twinless:
        set_aside[few_twins(twins_per_item)] = short_of
    testable = long_enough if twinless else [item for item in long_enough if item.id in twins]
    sample = _sample(testable, limit, rng)
    return Controls(
        "twins",
        sample,
        twins={item.id: twins[item.id] for item in sample if item.id in twins},
        set_aside=set_aside,
        testable=len(testable),
        twinless=twinless,
    )


def few_twins(count: int) -> str:
    """Why a question with numbers was set aside under ``--twins count``."""
    return f"{FEW_TWINS} {count} different twins (--twins {count})"


def _words(text: str) -> str:
    """The text's words, one space apart: the same for copies with other spacing or line ends (in
    Chinese, with spaces between its characters too)."""
    return " ".join(text[start:end] for start, end in word_spans(text))


def _sample(items: list[Item], limit: int, rng: random.Random) -> tuple[Item, ...]:
    chosen = rng.sample(items, min(limit, len(items)))
    return tuple(sorted(chosen, key=lambda item: item.position))

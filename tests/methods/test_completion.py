from __future__ import annotations

import math

import pytest

from contamcheck.controls.numbers import hard_new_numbers, significant_digits
from contamcheck.evidence import Evidence, GenerateRequest
from contamcheck.methods import MethodSettings, create_test
from contamcheck.methods.completion import generation_budget, number_recall

QUESTION = (
    "Mia buys 12 apples and 15 pears at the market on Monday. "
    "She gives 37 apples to Tom and then buys 72 more pears for her 4 friends."
)


@pytest.mark.parametrize(
    ("value", "digits"), [("20", 1), ("150", 2), ("0.25", 2), ("3.25", 3), ("1,000", 1), ("12", 2), ("7", 1)]
)
def test_significant_digits(value, digits):
    assert significant_digits(value) == digits


def test_only_new_numbers_a_model_cannot_write_by_habit_count():
    assert hard_new_numbers("She has 12 eggs.", "Then 12 more, 3 more, 20 more and 37 more.") == ["37"]


def test_number_recall_counts_only_hard_new_numbers():
    prefix, suffix = (
        "Mia buys 12 apples and 25 pears.",
        "She gives 12 away and buys 37 more and 64 again, 5 times.",
    )
    assert number_recall(prefix, suffix, "then she buys 37 more") == pytest.approx(0.5)
    assert number_recall(prefix, suffix, "37 and 64.0") == 1.0  # 64.0 is 64
    assert math.isnan(number_recall(prefix, "She gives 12 away and 3 more.", "anything"))


def test_completion_requests_and_scores_a_continuation():
    test = create_test("completion", MethodSettings())
    (request,) = test.requests(QUESTION)
    assert isinstance(request, GenerateRequest)
    assert QUESTION.startswith(request.prompt)
    assert request.max_new_tokens == generation_budget(QUESTION[len(request.prompt) :].strip())
    evidence = Evidence({request.key: " She gives 37 apples to Tom and then buys 7 more pears"})
    # hard new numbers of the second half: 37, 72 (4 is easy) -> one of two written
    assert test.score(QUESTION, evidence) == pytest.approx(1 / 2)
    assert test.detail(QUESTION, evidence).startswith(" She gives")


def test_completion_skips_texts_without_hard_new_numbers():
    test = create_test("completion", MethodSettings())
    assert test.requests("Only five words here, really.") == []
    assert test.requests("There are 3 cats and 3 dogs in the garden and 3 birds on the roof today.") == []
    assert test.requests("There are 30 cats and 12 dogs in the garden and 5 birds on the roof today.") == []
    assert "significant digits" in test.unscored_reason()

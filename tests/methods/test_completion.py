from __future__ import annotations

import math

import pytest

from contamcheck.evidence import Evidence, GenerateRequest
from contamcheck.methods import MethodSettings, create_test
from contamcheck.methods.completion import generation_budget, number_recall

QUESTION = (
    "Mia buys 12 apples and 5 pears at the market on Monday. "
    "She gives 3 apples to Tom and then buys 7 more pears for her 4 friends."
)


def test_number_recall_counts_only_new_numbers():
    prefix, suffix = "Mia buys 12 apples and 5 pears.", "She gives 12 away and buys 7 more and 4 again."
    assert number_recall(prefix, suffix, "then she buys 7 more") == pytest.approx(0.5)
    assert number_recall(prefix, suffix, "7 and 4.0") == 1.0  # 4.0 is 4
    assert math.isnan(number_recall(prefix, "She gives 12 away.", "anything"))


def test_completion_requests_and_scores_a_continuation():
    test = create_test("completion", MethodSettings())
    (request,) = test.requests(QUESTION)
    assert isinstance(request, GenerateRequest)
    assert QUESTION.startswith(request.prompt)
    assert request.max_new_tokens == generation_budget(QUESTION[len(request.prompt) :].strip())
    evidence = Evidence({request.key: " She gives 3 apples to Tom and then buys 7 more pears"})
    # new numbers of the second half: 3, 7, 4 -> two of three written
    assert test.score(QUESTION, evidence) == pytest.approx(2 / 3)
    assert test.detail(QUESTION, evidence).startswith(" She gives")


def test_completion_skips_texts_without_new_numbers():
    test = create_test("completion", MethodSettings())
    assert test.requests("Only five words here, really.") == []
    assert test.requests("There are 3 cats and 3 dogs in the garden and 3 birds on the roof today.") == []
    assert "second half" in test.unscored_reason()

from __future__ import annotations

import math

import numpy as np
import pytest

from contamcheck.backends import TokenStats
from contamcheck.evidence import Evidence, ScoreRequest
from contamcheck.methods import MethodSettings, create_test
from contamcheck.methods.min_k import min_k_mean


def test_min_k_mean_hand_computed():
    values = np.array([-1.0, -5.0, -2.0, -8.0, -0.5, -3.0, -4.0, -0.1, -6.0, -7.0])
    assert min_k_mean(values, 0.2) == pytest.approx((-8.0 - 7.0) / 2)
    assert min_k_mean(values, 0.01) == -8.0  # at least one token
    assert min_k_mean(values, 1.0) == pytest.approx(values.mean())
    assert math.isnan(min_k_mean(np.array([]), 0.2))


def test_min_k_scores_from_evidence_and_uses_k():
    text = "Janet's ducks lay 16 eggs per day."
    evidence = Evidence({ScoreRequest(text).key: TokenStats(np.array([-1.0, -2.0, -3.0, -4.0]))})
    assert create_test("min-k", MethodSettings(k=0.5)).score(text, evidence) == pytest.approx(-3.5)
    assert create_test("min-k", MethodSettings(k=0.25)).requests(text) == [ScoreRequest(text)]

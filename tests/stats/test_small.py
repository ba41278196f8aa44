"""Wilson intervals, Holm's correction: against hand-computed values."""

from __future__ import annotations

import pytest

from contamcheck.stats import holm, wilson_interval


def test_wilson_interval_hand_computed():
    # 10 of 100 at 95%: the textbook values (0.0552, 0.1744).
    low, high = wilson_interval(10, 100)
    assert low == pytest.approx(0.05523, abs=1e-4)
    assert high == pytest.approx(0.17437, abs=1e-4)


def test_wilson_interval_edges():
    assert wilson_interval(0, 0) == (0.0, 1.0)
    low, high = wilson_interval(0, 20)
    assert low == 0.0 and 0.15 < high < 0.17
    low, high = wilson_interval(20, 20)
    assert high == 1.0 and 0.83 < low < 0.85
    # exactly, at every size: floating point left 1.39e-17 for 0 of 24 (a report's "0.00000000000000001%")
    assert all(wilson_interval(0, n)[0] == 0.0 and wilson_interval(n, n)[1] == 1.0 for n in range(1, 500))


def test_holm_hand_computed():
    # p sorted: 0.01 (x3), 0.02 (x2), 0.04 (x1) -> 0.03, 0.04, 0.04 (monotone)
    assert holm([0.04, 0.01, 0.02]) == pytest.approx([0.04, 0.03, 0.04])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    assert holm([]) == []

"""The plots draw a flag where the report counts one: strictly right of the threshold's line."""

from __future__ import annotations

import numpy as np
import pytest

from contamcheck.report.plots import _bins, _unflagged_left


@pytest.mark.parametrize(
    ("values", "threshold"),
    [
        (np.array([0.0] * 40 + [0.5] * 20 + [1.0] * 3 + [-0.5] * 5), 0.0),  # completion: many ties at 0
        (np.random.default_rng(0).normal(size=300), 1.6448536),
        (np.array([-3.0, -1.0, 2.0, 2.0, 7.5]), 2.0),
        (np.array([0.0] * 40 + [0.3] * 8), 0.0),  # the threshold at the minimum (a control file's 0)
        (np.array([0.1, 0.2, 0.5]), 0.9),  # the threshold above every value
        (np.array([0.1, 0.2, 0.5]), -2.0),  # and below
    ],
)
def test_bars_right_of_the_line_hold_exactly_the_flagged(values, threshold):
    edges = _bins(values, threshold)
    assert threshold in edges  # on an edge: no bar straddles the line
    assert np.allclose(np.diff(edges), edges[1] - edges[0])
    counts, _ = np.histogram(_unflagged_left(values, threshold), edges)
    right = counts[edges[:-1] >= threshold].sum()
    assert right == (values > threshold).sum()
    assert counts.sum() == values.size


def test_every_value_is_in_a_bar_whatever_the_rounding():
    rng = np.random.default_rng(7)
    for _ in range(3000):
        size = int(rng.integers(1, 60))
        values = np.round(rng.normal(size=size) * rng.choice([1e-3, 1.0, 1e3]), int(rng.integers(0, 4)))
        threshold = float(rng.choice(values)) if rng.random() < 0.5 else float(rng.normal())
        edges = _bins(values, threshold)
        counts, _ = np.histogram(_unflagged_left(values, threshold), edges)
        assert counts.sum() == size
        assert counts[edges[:-1] >= threshold].sum() == (values > threshold).sum()


def test_bins_finish_for_values_closer_than_their_float_step():
    values = np.array([1e6, 1e6 + 1.2e-10])  # a bar narrower than the step: widening never moved
    edges = _bins(values, 1e6)
    counts, _ = np.histogram(_unflagged_left(values, 1e6), edges)
    assert counts.sum() == 2

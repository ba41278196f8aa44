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

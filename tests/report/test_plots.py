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


@pytest.mark.parametrize(
    ("unscored", "truncated"), [(False, False), (True, False), (False, True), (True, True)]
)
def test_the_shard_chart_keeps_its_legend_inside_the_figure_and_says_why_a_bar_is_missing(
    monkeypatch, unscored, truncated
):
    """A shard the model scored -inf has no bar: its place was an empty gap, unexplained. A cross
    and a legend entry say why; the legend, one row too wide with it (or with a truncated shard),
    narrowed the axes to half the figure and ran off its edge; the truncated shard's entry took
    matplotlib's default blue, not the muted grey of its bar."""
    import matplotlib.colors
    import matplotlib.figure

    from contamcheck.report.model import ShardResult
    from contamcheck.report.plots import MUTED_COLOUR, shard_chart

    drawn: list[dict[str, object]] = []
    save = matplotlib.figure.Figure.savefig

    def seen(figure, *args, **kwargs):
        save(figure, *args, **kwargs)
        renderer = figure.canvas.get_renderer()
        (ax,) = figure.axes
        legend = ax.get_legend()
        drawn.append(
            {
                "figure": figure.bbox,
                "axes": ax.get_window_extent(renderer),
                "legend": legend.get_window_extent(renderer),
                "entries": dict(
                    zip([t.get_text() for t in legend.get_texts()], legend.legend_handles, strict=True)
                ),
            }
        )

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", seen)
    shards = [
        ShardResult(
            index=i,
            first_position=5 * i,
            n_items=5,
            canonical_logprob=-100.0,
            permuted_mean_logprob=-100.0 - i % 3,
            permuted_std_logprob=1.5,
            statistic=float(i % 3),
            truncated=truncated and i == 6,
            permuted_logprobs=[-100.0] * 5,
        )
        for i in range(10)
    ]
    if unscored:
        shards[3] = shards[3].model_copy(update={"statistic": None, "permuted_mean_logprob": None})
    svg = shard_chart(shards, "salt")
    (figure,) = drawn
    entries = figure["entries"]
    assert isinstance(entries, dict)
    assert ("scored not finite (not used)" in entries) == unscored
    assert ("scored not finite (not used)" in svg) == unscored
    assert ("truncated (not used)" in entries) == truncated
    if truncated:
        colour = entries["truncated (not used)"].get_facecolor()
        assert matplotlib.colors.to_hex(colour) == MUTED_COLOUR
    whole, axes, legend = figure["figure"], figure["axes"], figure["legend"]
    assert legend.x1 <= whole.x1 + 1  # type: ignore[attr-defined]
    assert axes.width >= 0.8 * whole.width  # type: ignore[attr-defined]

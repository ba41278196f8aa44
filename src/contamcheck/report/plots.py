"""Small figures for the HTML report, drawn with matplotlib and returned as inline SVG text.

matplotlib is imported inside the functions (with the Agg backend) so that importing the report
package stays light. The SVG is cleaned for inlining in one HTML file: no XML prologue, DOCTYPE or
metadata, no namespace URLs, ids made unique per figure, and text set in the page's own font.
Figures show only numbers and fixed labels; no benchmark text or model output is drawn.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Sequence
from typing import Any

from .model import ShardResult

BENCHMARK_COLOUR = "#4f6d8f"
NULL_COLOUR = "#6f7a85"
THRESHOLD_COLOUR = "#a4553b"
MUTED_COLOUR = "#c4c9cf"
INK = "#39424c"

STYLE: dict[str, Any] = {
    "svg.fonttype": "none",  # text stays text, in the page's font
    "text.parse_math": False,  # labels carry test names; a "$" in one is just a dollar
    "font.family": "sans-serif",
    "font.size": 10,
    "text.color": INK,
    "axes.edgecolor": MUTED_COLOUR,
    "axes.labelcolor": INK,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "xtick.color": INK,
    "ytick.color": INK,
    "xtick.major.size": 3,
    "ytick.major.size": 3,
    "legend.frameon": False,
    "figure.facecolor": "none",
    "axes.facecolor": "none",
}
FIGURE_SIZE = (7.0, 2.7)
LEGEND_ROW = 75  # characters of labels a row of the legend holds at FIGURE_SIZE's width


def difference_histogram(differences: Sequence[float], threshold: float | None, label: str, salt: str) -> str:
    """Paired differences against their mirror image (the null), with the flag threshold."""
    import numpy as np

    values = np.asarray(differences, dtype=float)
    mirror = -values
    bins = _bins(np.concatenate([values, mirror]), threshold)
    values, mirror = _unflagged_left(values, threshold), _unflagged_left(mirror, threshold)

    def draw(ax: Any) -> None:
        ax.hist(values, bins=bins, color=BENCHMARK_COLOUR, alpha=0.7, label="observed differences (d)")
        null = "null: the mirror image (−d)"  # drawn on top, so the outline stays visible
        ax.hist(mirror, bins=bins, histtype="step", linewidth=1.4, color=NULL_COLOUR, label=null)
        ax.axvline(0.0, color=MUTED_COLOUR, linewidth=0.8)
        _threshold_line(ax, threshold, "flag threshold")
        ax.set_xlabel(label)

    return _figure(draw, salt)


def score_histogram(
    benchmark: Sequence[float], controls: Sequence[float], threshold: float | None, label: str, salt: str
) -> str:
    """Benchmark scores against the control-file questions' scores (the null), with the threshold."""
    import numpy as np

    ours = np.asarray(benchmark, dtype=float)
    theirs = np.asarray(controls, dtype=float)
    bins = _bins(np.concatenate([ours, theirs]), threshold)
    ours, theirs = _unflagged_left(ours, threshold), _unflagged_left(theirs, threshold)

    def draw(ax: Any) -> None:
        ax.hist(ours, bins=bins, color=BENCHMARK_COLOUR, alpha=0.7, label="benchmark questions")
        null = "null: control-file questions"
        ax.hist(theirs, bins=bins, histtype="step", linewidth=1.4, color=NULL_COLOUR, label=null)
        _threshold_line(ax, threshold, "flag threshold")
        ax.set_xlabel(label)

    return _figure(draw, salt)


def bulk_histogram(scores: Sequence[float], null: Any, threshold: float | None, label: str, salt: str) -> str:
    """Questions' scores with the fitted bulk's density (scaled to the bulk's share) and the threshold."""
    import numpy as np

    from ..stats.bulk import normal_pdf

    values = np.asarray(scores, dtype=float)
    bins = _bins(values, threshold)
    values = _unflagged_left(values, threshold)

    def draw(ax: Any) -> None:
        _, edges, _ = ax.hist(values, bins=bins, color=BENCHMARK_COLOUR, alpha=0.7, label="questions")
        grid = np.linspace(edges[0], edges[-1], 200)
        width = edges[1] - edges[0]
        density = normal_pdf(grid, null.centre, null.scale)
        expected = density * width * len(values) * null.bulk_share
        name = "the bulk the fit found" if null.count_withheld else "null: the never-seen bulk"
        ax.plot(grid, expected, color=NULL_COLOUR, linewidth=1.4, label=name)
        _threshold_line(ax, threshold, "flag threshold")
        ax.set_xlabel(label)

    return _figure(draw, salt)


def shard_chart(shards: Sequence[ShardResult], salt: str) -> str:
    """Per shard: canonical minus mean permuted log-probability, around zero."""

    def draw(ax: Any) -> None:
        positions = [shard.index + 1 for shard in shards]
        colours = [MUTED_COLOUR if shard.truncated else BENCHMARK_COLOUR for shard in shards]
        # a shard one of whose orderings the model scored -inf has no number (null once saved): no bar
        # is drawn, a cross on the axis says why its place is empty
        statistics = [
            s.statistic if s.statistic is not None and math.isfinite(s.statistic) else math.nan
            for s in shards
        ]
        unscored = [p for p, value in zip(positions, statistics, strict=True) if math.isnan(value)]
        spreads = [math.nan if s.permuted_std_logprob is None else s.permuted_std_logprob for s in shards]
        ax.bar(
            positions,
            statistics,
            color=colours,
            width=0.6,
            alpha=0.85,
            label="published order − mean of reorderings",
        )
        ax.errorbar(
            positions,
            statistics,
            yerr=spreads,
            fmt="none",
            ecolor=NULL_COLOUR,
            elinewidth=1,
            capsize=2,
        )
        ax.axhline(0.0, color=INK, linewidth=0.8)
        ax.set_xticks(positions)
        ax.set_xlabel("shard (consecutive questions in published order)")
        ax.set_ylabel("canonical − permuted\nlog-probability")
        if any(shard.truncated for shard in shards):
            # a bar at no place: an empty one took matplotlib's default colour in the legend, not this
            ax.bar([math.nan], [math.nan], color=MUTED_COLOUR, label="truncated (not used)")
        ax.errorbar([], [], yerr=[], fmt="none", ecolor=NULL_COLOUR, label="± spread of the reorderings")
        if unscored:
            ax.scatter(unscored, [0.0] * len(unscored), marker="x", color=NULL_COLOUR, s=40, zorder=3)
            # its legend entry a container, as the entries before it: the legend keeps their order
            ax.errorbar([], [], fmt="x", color=NULL_COLOUR, label="scored not finite (not used)")

    return _figure(draw, salt)


def _bins(values: Any, threshold: float | None) -> Any:
    """Equal bins over the values, with the threshold on an edge, so no bar straddles the line."""
    import numpy as np

    finite = values[np.isfinite(values)]
    if threshold is not None:
        finite = np.append(finite, threshold)
    if finite.size == 0:
        return 10
    low, high = float(finite.min()), float(finite.max())
    if high - low < 1e-12:
        low, high = low - 0.5, high + 0.5
    count = int(min(40, max(10, np.sqrt(finite.size) * 2)))
    if threshold is None:
        return np.linspace(low, high, count + 1)
    width = (high - low) / count
    # at least one bar left of the line: values on it are drawn there (_unflagged_left)
    below = max(1, int(np.ceil((threshold - low) / width)))
    above = max(1, int(np.ceil((high - threshold) / width)))
    edges = threshold + width * np.arange(-below, above + 1)
    edges[below] = threshold
    # rounding can leave the extreme values a hair outside: a bar more on that side, then the end
    # edge itself moved (a width below the values' float step could never reach them)
    lowest = min(low, float(np.nextafter(threshold, -np.inf)))
    if edges[0] > lowest:
        edges = np.insert(edges, 0, edges[0] - width)
        edges[0] = min(edges[0], lowest)
    if edges[-1] < high:
        edges = np.append(edges, edges[-1] + width)
        edges[-1] = max(edges[-1], high)
    return edges


def _unflagged_left(values: Any, threshold: float | None) -> Any:
    """A flag is a value strictly above the threshold: values on it are drawn in the bar left of it
    (a histogram counts a value on an edge in the bar to its right)."""
    import numpy as np

    if threshold is None:
        return values
    on_line = np.isclose(values, threshold, rtol=0.0, atol=1e-12)
    return np.where(on_line, np.nextafter(threshold, -np.inf), values)


def _threshold_line(ax: Any, threshold: float | None, label: str) -> None:
    if threshold is not None:
        ax.axvline(threshold, color=THRESHOLD_COLOUR, linestyle="--", linewidth=1.3, label=label)


def _figure(draw: Any, salt: str) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    settings: dict[Any, Any] = {**STYLE, "svg.hashsalt": salt}  # ids stable from run to run
    with plt.rc_context(settings):
        figure, ax = plt.subplots(figsize=FIGURE_SIZE, layout="constrained")  # same size, same text scale
        try:
            draw(ax)
            if ax.get_ylabel() == "":
                ax.set_ylabel("questions")
            # above the axes, so it never hides a bar; in two columns where one row would be wider than
            # the figure (constrained layout then narrowed the axes to make room)
            labels = ax.get_legend_handles_labels()[1]
            columns = 3 if sum(len(label) for label in labels) <= LEGEND_ROW else 2
            ax.legend(loc="lower left", bbox_to_anchor=(0, 1.0), ncol=columns, fontsize=9, borderaxespad=0.3)
            buffer = io.StringIO()
            figure.savefig(buffer, format="svg", metadata={"Date": None})
        finally:
            plt.close(figure)
    return _inline(buffer.getvalue(), salt)


_PROLOGUE = re.compile(r"^.*?(?=<svg\b)", re.S)
_METADATA = re.compile(r"<metadata>.*?</metadata>\s*", re.S)
_NAMESPACES = re.compile(r'\s+xmlns(?::\w+)?="[^"]*"')
_SIZE = re.compile(r'\s+(?:width|height)="[^"]*pt"')
_ID = re.compile(r'\bid="([^"]+)"')
_REFERENCE = re.compile(r'(url\(#|href="#)([^)"]+)')
_FONT = re.compile(r"font-family:[^;\"]*")


def _inline(svg: str, salt: str) -> str:
    """matplotlib's SVG, made fit to sit inside an HTML page beside other figures."""
    prefix = "fig-" + re.sub(r"[^A-Za-z0-9_-]", "-", salt)
    svg = _PROLOGUE.sub("", svg, count=1)
    svg = _METADATA.sub("", svg)
    svg = _NAMESPACES.sub("", svg)  # HTML needs none; keeps the page free of URLs
    svg = _SIZE.sub("", svg, count=2)  # scale with the page through the viewBox
    svg = svg.replace("xlink:href=", "href=")  # SVG 2: no xlink namespace needed
    svg = _ID.sub(lambda m: f'id="{prefix}-{m.group(1)}"', svg)
    svg = _REFERENCE.sub(lambda m: f"{m.group(1)}{prefix}-{m.group(2)}", svg)
    svg = _FONT.sub("font-family: inherit", svg)
    return svg.replace("<svg ", '<svg role="img" class="figure" ', 1).strip()

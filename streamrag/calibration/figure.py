"""The calibration figure: per stage, the data's CDF and QQ plot against every fit.

One column per stage (three a row, more stages wrap into further pairs of rows). Top:
the empirical CDF (steps) and each candidate model's CDF,
the chosen one drawn thicker; durations on a log axis when they span more than a factor
of 20. Bottom: QQ — each model's quantile at the plotting positions ``(i − ½)/n``
against the sorted durations; a model that fits lies on the diagonal. A constant stage
shows its step and says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from streamrag.base.figures import PAGE_IN, figure_or_new, finish, paper_style
from streamrag.calibration.fit import StageFit
from streamrag.calibration.measurements import Measurements

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["plot_fits"]

_COLORS = {
    "lognormal": "tab:blue",
    "gamma": "tab:orange",
    "weibull": "tab:red",
    "quantiles": "tab:green",
    "constant": "tab:purple",
}


def plot_fits(meas: Measurements, fits: Sequence[StageFit], *, fig: Figure | None = None) -> Figure:
    """The figure (see the module docstring) on ``fig`` or a new one."""
    n_cols = max(1, min(len(fits), 3))
    n_blocks = -(-max(len(fits), 1) // n_cols)
    with paper_style():
        fig = figure_or_new(fig, min(PAGE_IN, 2.3 * n_cols + 0.3), 4.4 * n_blocks + 0.3)
        n_cols = max(1, min(len(fits), 3, int(fig.get_size_inches()[0] // 2.2)))  # as many as fit a given figure
        n_blocks = -(-max(len(fits), 1) // n_cols)
        axes = fig.subplots(2 * n_blocks, n_cols, squeeze=False)
        for ax in axes.ravel():
            ax.set_visible(False)
        for i, fit in enumerate(fits):
            top, bottom = axes[2 * (i // n_cols)][i % n_cols], axes[2 * (i // n_cols) + 1][i % n_cols]
            top.set_visible(True)
            bottom.set_visible(True)
            x = np.sort(meas.stages[fit.stage].durations_ms)
            n = x.size
            top.set_title(f"stage {fit.stage} (n = {n}): {fit.chosen}")
            top.step(x, np.arange(1, n + 1) / n, where="post", color="black", linewidth=1.0, label="measured")
            log_x = x[0] > 0 and x[-1] / x[0] > 20
            grid = np.geomspace(x[0], x[-1], 400) if log_x else np.linspace(x[0], x[-1], 400)
            if log_x:
                top.set_xscale("log")
            top.set_xlabel("duration (ms)")
            top.set_ylabel("cumulative share")
            positions = (np.arange(1, n + 1) - 0.5) / n
            for cand in fit.candidates:
                chosen = cand.kind == fit.chosen
                style = {"color": _COLORS[cand.kind], "linewidth": 1.8 if chosen else 0.8, "alpha": 1.0 if chosen else 0.8}
                label = f"{cand.kind} (D = {cand.ks:.3f}){' chosen' if chosen else ''}"
                top.plot(grid, cand.model.cdf(grid), label=label, **style)
                bottom.plot(cand.model.ppf(positions), x, ".", markersize=2, **style)  # colours as named above
            if not fit.candidates:
                top.axvline(x[0], color=_COLORS["constant"], linewidth=1.8, label=f"constant {x[0]:g} ms")
                bottom.text(0.5, 0.5, "all durations equal:\na constant", ha="center", va="center", transform=bottom.transAxes)
            else:
                bottom.plot([x[0], x[-1]], [x[0], x[-1]], "--", color="0.5", linewidth=0.9, label="y = x (a perfect fit)")
                bottom.legend(loc="upper left", fontsize=6)
            top.legend(loc="lower right", fontsize=6, framealpha=0.8)
            bottom.set_xlabel("model quantile (ms)")
            bottom.set_ylabel("measured quantile (ms)")
            bottom.set_title("QQ")
        fig.suptitle(f"Latency fits: {meas.path.name}", wrap=True)
        return finish(fig)

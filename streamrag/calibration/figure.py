"""The calibration figure: per stage, the data's CDF and QQ plot against every fit.

One column per stage. Top: the empirical CDF (steps) and each candidate model's CDF,
the chosen one drawn thicker; durations on a log axis when they span more than a factor
of 20. Bottom: QQ — each model's quantile at the plotting positions ``(i − ½)/n``
against the sorted durations; a model that fits lies on the diagonal. A constant stage
shows its step and says so.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from streamrag.base.figures import agg_figure, save_figure
from streamrag.calibration.fit import StageFit
from streamrag.calibration.measurements import Measurements

_COLORS = {
    "lognormal": "tab:blue",
    "gamma": "tab:orange",
    "weibull": "tab:red",
    "quantiles": "tab:green",
    "constant": "tab:purple",
}


def plot_fits(meas: Measurements, fits: Sequence[StageFit], path: str | os.PathLike[str]) -> Path:
    """Write the figure (PNG) to ``path``."""
    fig = agg_figure(4.2 * len(fits) + 0.4, 7.2)
    axes = fig.subplots(2, len(fits), squeeze=False)
    for col, fit in enumerate(fits):
        x = np.sort(meas.stages[fit.stage].durations_ms)
        n = x.size
        top, bottom = axes[0][col], axes[1][col]
        top.set_title(f"stage {fit.stage} (n = {n}): {fit.chosen}", fontsize=10)
        top.step(x, np.arange(1, n + 1) / n, where="post", color="black", linewidth=1.2, label="measured")
        log_x = x[0] > 0 and x[-1] / x[0] > 20
        grid = np.geomspace(x[0], x[-1], 400) if log_x else np.linspace(x[0], x[-1], 400)
        if log_x:
            top.set_xscale("log")
        top.set_xlabel("duration (ms)")
        top.set_ylabel("cumulative share")
        positions = (np.arange(1, n + 1) - 0.5) / n
        for cand in fit.candidates:
            chosen = cand.kind == fit.chosen
            style = {"color": _COLORS[cand.kind], "linewidth": 2.2 if chosen else 1.0, "alpha": 1.0 if chosen else 0.8}
            label = f"{cand.kind} (D = {cand.ks:.3f}){' chosen' if chosen else ''}"
            top.plot(grid, cand.model.cdf(grid), label=label, **style)
            bottom.plot(cand.model.ppf(positions), x, ".", markersize=3, label=cand.kind, **style)
        if not fit.candidates:
            top.axvline(x[0], color=_COLORS["constant"], linewidth=2.0, label=f"constant {x[0]:g} ms")
            bottom.text(0.5, 0.5, "all durations equal:\na constant", ha="center", va="center", transform=bottom.transAxes)
        else:
            bottom.plot([x[0], x[-1]], [x[0], x[-1]], "--", color="0.5", linewidth=1)
            bottom.legend(fontsize=8, loc="upper left")
        top.legend(fontsize=8, loc="lower right")
        bottom.set_xlabel("model quantile (ms)")
        bottom.set_ylabel("measured quantile (ms)")
        bottom.set_title("QQ", fontsize=10)
    fig.suptitle(f"Latency fits: {meas.path.name}", fontsize=12)
    return save_figure(fig, path)

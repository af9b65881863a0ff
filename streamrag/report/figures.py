"""The report's own figure for a single simulation or load run (no plot function existed
for one run; the sweep's and the analysis' figures are theirs)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["plot_saved"]


def plot_saved(
    saved_ms: Sequence[Any], bound_ms: Sequence[Any] | None, misfire: Sequence[Any] | None, path: str | os.PathLike[str]
) -> Path:
    """Per question: saved ms against its bound ``H_G`` (= min(G + L, residual), what a
    perfect reflector saves), mis-fires in red, with the line saved = H_G; beside it the
    distribution of saved ms. Without a bound (load runs) only the distribution. Undefined
    values (skipped questions, failed sessions) are left out. 6.8 in wide: two columns.
    """
    import numpy as np

    from streamrag.base.figures import agg_figure, save_figure

    def arr(values: Sequence[Any]) -> np.ndarray:
        return np.array([np.nan if v is None else float(v) for v in values], dtype=float)

    saved = arr(saved_ms)
    fig = agg_figure(6.8, 2.8)
    axes = fig.subplots(1, 2 if bound_ms is not None else 1, squeeze=False)[0]
    if bound_ms is not None:
        bound = arr(bound_ms)
        mis = np.array([v is True for v in (misfire or [False] * len(saved))], dtype=bool)
        ok = np.isfinite(saved) & np.isfinite(bound)
        ax = axes[0]
        ax.scatter(bound[ok & ~mis], saved[ok & ~mis], s=12, alpha=0.5, color="tab:blue", label="question")
        ax.scatter(
            bound[ok & mis], saved[ok & mis], s=16, alpha=0.9, color="tab:red", label=f"mis-fire ({int((ok & mis).sum())})"
        )
        top = float(np.nanmax(bound[ok], initial=1.0))
        ax.plot([0, top], [0, top], color="0.4", linestyle="--", linewidth=1, label="saved = H_G (bound)")
        ax.axhline(0, color="0.3", linewidth=0.6)
        ax.set_xlabel("H_G (ms)")
        ax.set_ylabel("saved (ms)")
        ax.legend(fontsize=7, loc="lower right")
        ax.grid(color="0.92")
    ax = axes[-1]
    finite = saved[np.isfinite(saved)]
    if finite.size:
        ax.hist(finite, bins=min(40, max(5, finite.size // 5)), color="tab:blue", alpha=0.8)
        ax.axvline(
            float(np.median(finite)), color="black", linestyle="--", linewidth=1, label=f"median {np.median(finite):.0f} ms"
        )
        ax.legend(fontsize=7)
    ax.set_xlabel("saved (ms)")
    ax.set_ylabel("questions" if bound_ms is not None else "sessions")
    ax.grid(color="0.92")
    return save_figure(fig, path)

"""The report's own figure for a single simulation or load run (no plot function existed
for one run; the sweep's and the analysis' figures are theirs)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["plot_saved"]


def plot_saved(
    saved_ms: Sequence[Any], bound_ms: Sequence[Any] | None, misfire: Sequence[Any] | None, *, fig: Figure | None = None
) -> Figure:
    """Per question: saved ms against its bound ``H_G`` (= min(G + L, residual), what a
    perfect reflector saves), mis-fires in red, with the line saved = H_G; beside it the
    distribution of saved ms. Without a bound (load runs) only the distribution. Undefined
    values (skipped questions, failed sessions) are left out. 7 in wide: two columns.
    """
    import numpy as np

    from streamrag.base.figures import PAGE_IN, figure_or_new, finish, paper_style

    def arr(values: Sequence[Any]) -> np.ndarray:
        return np.array([np.nan if v is None else float(v) for v in values], dtype=float)

    saved = arr(saved_ms)
    with paper_style():
        fig = figure_or_new(fig, PAGE_IN, 2.6)
        axes = fig.subplots(1, 2 if bound_ms is not None else 1, squeeze=False)[0]
        if bound_ms is not None:
            bound = arr(bound_ms)
            mis = np.array([v is True for v in (misfire or [False] * len(saved))], dtype=bool)
            ok = np.isfinite(saved) & np.isfinite(bound)
            ax = axes[0]
            ax.scatter(bound[ok & ~mis], saved[ok & ~mis], s=8, alpha=0.5, color="tab:blue", linewidths=0, label="question")
            ax.scatter(
                bound[ok & mis],
                saved[ok & mis],
                s=10,
                alpha=0.9,
                color="tab:red",
                linewidths=0,
                label=f"mis-fire ({int((ok & mis).sum())})",
            )
            top = float(np.nanmax(bound[ok], initial=1.0))
            ax.plot([0, top], [0, top], color="0.35", linestyle="--", linewidth=0.9, label="saved = H_G (the bound)")
            ax.axhline(0, color="0.3", linewidth=0.6)
            ax.set_xlabel("H_G = min(G + L, residual) (ms)")
            ax.set_ylabel("saved (ms)")
            ax.legend(loc="lower right")
            ax.grid(color="0.92")
        ax = axes[-1]
        finite = saved[np.isfinite(saved)]
        if finite.size:
            ax.hist(finite, bins=min(40, max(5, finite.size // 5)), color="tab:blue", alpha=0.8)
            median = float(np.median(finite))
            ax.axvline(median, color="black", linestyle="--", linewidth=1, label=f"median {median:.0f} ms")
            ax.legend()
        ax.set_xlabel("saved (ms)")
        ax.set_ylabel("questions" if bound_ms is not None else "sessions")
        ax.grid(color="0.92")
        return finish(fig)

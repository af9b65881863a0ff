"""PNG figures without pyplot: one Agg canvas per figure, written atomically.

Each figure is a :class:`matplotlib.figure.Figure` attached to its own Agg canvas, so
plotting never changes the caller's backend or leaves figures open in pyplot's
registry; matplotlib is imported only when a figure is made.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from streamrag.atomic import atomic_path

if TYPE_CHECKING:
    from matplotlib.figure import Figure

DPI = 120


def agg_figure(width_in: float, height_in: float) -> Figure:
    """A constrained-layout figure of that size (inches) on its own Agg canvas."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width_in, height_in), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)  # the Agg backend for this figure only
    return fig


def save_png(fig: Figure, path: str | os.PathLike[str]) -> Path:
    """Write ``fig`` as PNG atomically (creating the folder), then free its artists."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(target) as tmp:
        fig.savefig(tmp, format="png", dpi=DPI)
    fig.clear()
    return target

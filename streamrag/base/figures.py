"""Figures without pyplot: one Agg canvas per figure, written atomically.

Each figure is a :class:`matplotlib.figure.Figure` attached to its own Agg canvas, so
plotting never changes the caller's backend or leaves figures open in pyplot's
registry; matplotlib is imported only when a figure is made. The file's extension picks
the format (:data:`FORMATS`: ``.png``, ``.pdf``, ``.svg``), so ``--png fig.pdf`` writes a
PDF and never PNG bytes under a PDF name; ``dpi`` matters to PNG only.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from streamrag.base.atomic import atomic_path
from streamrag.base.errors import ConfigError

if TYPE_CHECKING:
    from matplotlib.figure import Figure

DPI: float = 120
"""Resolution of PNG figures; the command line's ``--dpi`` (any command) sets it."""

FORMATS = {".png": "png", ".pdf": "pdf", ".svg": "svg"}
"""File extension → matplotlib format."""


def figure_format(path: str | os.PathLike[str]) -> str:
    """The format a figure file's extension asks for; ConfigError for any other."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise ConfigError(
            f"{path}: a figure is written as {', '.join(FORMATS)} (chosen by the extension), not {suffix or 'no extension'}"
        )
    return FORMATS[suffix]


def agg_figure(width_in: float, height_in: float) -> Figure:
    """A constrained-layout figure of that size (inches) on its own Agg canvas."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width_in, height_in), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)  # the Agg backend for this figure only
    return fig


def save_figure(fig: Figure, path: str | os.PathLike[str], *, dpi: float | None = None) -> Path:
    """Write ``fig`` atomically in the format of ``path``'s extension (creating the
    folder), at ``dpi`` (default :data:`DPI`), then free its artists."""
    target = Path(path)
    fmt = figure_format(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(target) as tmp:
        fig.savefig(tmp, format=fmt, dpi=dpi or DPI, metadata=_fixed_metadata(fmt))
    fig.clear()
    return target


def _fixed_metadata(fmt: str) -> dict[str, object]:
    """No creation date in PDF/SVG files: the same figure gives the same bytes."""
    if fmt == "pdf":
        return {"CreationDate": None}
    if fmt == "svg":
        return {"Date": None}
    return {}

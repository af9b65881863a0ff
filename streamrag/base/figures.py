"""Figures without pyplot: one Agg canvas per figure, written atomically.

Each figure is a :class:`matplotlib.figure.Figure` attached to its own Agg canvas, so
plotting never changes the caller's backend or leaves figures open in pyplot's
registry; matplotlib is imported only when a figure is made. The file's extension picks
the format (:data:`FORMATS`: ``.png``, ``.pdf``, ``.svg``), so ``--png fig.pdf`` writes a
PDF and never PNG bytes under a PDF name; ``dpi`` matters to PNG only.

Plot functions follow matplotlib's convention: ``plot_x(data, *, ax=None) -> Figure``
(``fig=`` for figures of several panels), drawing onto the caller's axes or figure when
given, else onto a new one sized for a paper (:data:`COLUMN_IN` for one panel, at most
:data:`PAGE_IN`), inside :func:`paper_style` so text stays legible at the written size
(:func:`axes_or_new`, :func:`figure_or_new`, :func:`finish`). Commands name their files
with :func:`figure_name`, whose suffix ``--figure-format`` sets (:data:`FORMAT`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from streamrag.base.atomic import atomic_path
from streamrag.base.errors import ConfigError

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

DPI: float = 120
"""Resolution of PNG figures; the command line's ``--dpi`` (any command) sets it."""

FORMATS = {".png": "png", ".pdf": "pdf", ".svg": "svg"}
"""File extension → matplotlib format."""

FORMAT: str | None = None
"""The format of the figures commands name themselves (``png``, ``pdf`` or ``svg``); the
command line's ``--figure-format`` sets it. None: each writer's default (PNG; the
frontier's PDF and SVG)."""

COLUMN_IN = 3.5
"""One column of a two-column paper (inches): the width of a one-panel figure."""
PAGE_IN = 7.0
"""Both columns (inches): the widest figure; more panels wrap into rows."""
TICK_PT = 7.0
"""Tick labels (points) at the written size; other text is 7 to 9 pt (:data:`PAPER_RC`)."""
PAPER_RC: dict[str, object] = {
    "font.size": 8,
    "axes.titlesize": 8,
    "axes.labelsize": 8,
    "xtick.labelsize": TICK_PT,
    "ytick.labelsize": TICK_PT,
    "legend.fontsize": 7,
    "legend.title_fontsize": 7,
    "figure.titlesize": 9,
    "lines.markersize": 4,
    "axes.linewidth": 0.6,
}
"""The rc settings every plot function draws with (:func:`paper_style`)."""


def figure_name(stem: str, *, default: str = "png") -> str:
    """A figure's file name: ``stem`` and the suffix of :data:`FORMAT` (``default`` when
    no ``--figure-format`` was given)."""
    return f"{stem}.{FORMAT or default}"


@contextmanager
def paper_style() -> Iterator[None]:
    """:data:`PAPER_RC` for the artists made inside."""
    import matplotlib as mpl

    with mpl.rc_context(cast(Any, PAPER_RC)):
        yield


def axes_or_new(ax: Axes | None, width_in: float, height_in: float) -> tuple[Figure, Axes]:
    """``ax`` and the figure it is on, or a new figure of that size (:func:`agg_figure`)
    with one axes."""
    if ax is None:
        fig = agg_figure(width_in, height_in)
        return fig, fig.subplots()
    return root_figure(ax), ax


def root_figure(ax: Axes) -> Figure:
    """The :class:`~matplotlib.figure.Figure` ``ax`` is drawn on (also through a subfigure)."""
    from matplotlib.figure import Figure

    fig = ax.figure
    return fig if isinstance(fig, Figure) else fig.figure


def figure_or_new(fig: Figure | None, width_in: float, height_in: float) -> Figure:
    """``fig`` (to draw the panels on), or a new one of that size (:func:`agg_figure`)."""
    return agg_figure(width_in, height_in) if fig is None else fig


def legend_columns(fig: Figure, wanted: int, *, column_in: float = 1.6) -> int:
    """Columns of a legend below the panels: ``wanted``, at most as many as fit the
    figure's width at ``column_in`` inches each (at least 1)."""
    return max(1, min(wanted, int(fig.get_size_inches()[0] // column_in)))


def finish(fig: Figure) -> Figure:
    """Tick labels of every axes at :data:`TICK_PT` (set explicitly, so ticks made when
    the figure is drawn later keep it), then ``fig``."""
    for ax in fig.axes:
        ax.tick_params(which="both", labelsize=TICK_PT)
    return fig


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
    import matplotlib as mpl

    with atomic_path(target) as tmp, mpl.rc_context({"svg.hashsalt": "streamrag"}):  # fixed SVG ids
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

"""The grounding-precision sweep (the anchor study's ``grounding_precision.py``).

String-matched gold is imprecise: an answer that occurs on most chunks (a year, "yes",
the page's subject) makes "gold in top-k" nearly certain at the first word, so t_suf
collapses to 1 for reasons that have nothing to do with the question. The anchor bounds
that "lucky hit" by capping how much of the question's pool is gold: with a share d of
chunks gold, a random top-3 holds one with probability ≈ 3d.

Over the retrieved-gold questions of a table with ``gold_density`` (gold chunks / chunks)
and ``n_gold`` (gold chunks) — a table written by ``analyze``, or the anchor's published
table joined with its ``grounding_precision.split0.csv`` (:mod:`streamrag.analysis.join`):

- ``all``: every retrieved-gold question;
- ``by_density_cap``: ``gold_density ≤ cap`` for cap in :data:`DENSITY_CAPS`
  (``0.05`` is the "specifically grounded" slice, design §2);
- ``by_gold_size_cap``: ``n_gold ≤ k`` for k in :data:`GOLD_SIZE_CAPS`;

each a cell of n, mean and median φ_suf, the share ``t_suf = 1`` and the median t_suf,
unrounded (the anchor rounds to 4 decimals). A question whose density (or gold size) is
undefined is in no capped cell and is counted (``n_density_undefined``,
``n_gold_size_undefined``). The section is None when the table has neither column.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from streamrag.analysis._values import active, bool_column, num_column, share, to_float

__all__ = ["DENSITY_CAPS", "GOLD_SIZE_CAPS", "grounding_precision", "grounding_precision_lines"]

DENSITY_CAPS: tuple[float, ...] = (0.10, 0.05, 0.02, 0.01)
"""The anchor's density caps."""
GOLD_SIZE_CAPS: tuple[int, ...] = (5, 3, 2, 1)
"""The anchor's gold-set size caps."""


def _cell(phi: np.ndarray, t_suf: np.ndarray) -> dict[str, Any]:
    n = int(phi.size)
    if n == 0:
        return {"n": 0, "mean_phi_suf": None, "median_phi_suf": None, "share_t_suf_1": None, "median_t_suf": None}
    return {
        "n": n,
        "mean_phi_suf": to_float(phi.mean()),
        "median_phi_suf": to_float(np.median(phi)),
        "share_t_suf_1": share(int((t_suf == 1).sum()), n),
        "median_t_suf": to_float(np.median(t_suf)),
    }


def grounding_precision(df: pd.DataFrame) -> dict[str, Any] | None:
    """The ``grounding_precision`` section (see the module docstring), or None."""
    if "gold_density" not in df.columns and "n_gold" not in df.columns:
        return None
    q = active(df)
    rg = bool_column(q, "retrieved_gold")
    phi, t_suf = num_column(q, "phi_suf")[rg], num_column(q, "t_suf")[rg]
    out: dict[str, Any] = {"all": _cell(phi, t_suf)}
    if "gold_density" in q.columns:
        density = num_column(q, "gold_density")[rg]
        out["n_density_undefined"] = int(np.isnan(density).sum())
        out["by_density_cap"] = {f"{cap:g}": _cell(phi[density <= cap], t_suf[density <= cap]) for cap in DENSITY_CAPS}
    if "n_gold" in q.columns:
        size = num_column(q, "n_gold")[rg]
        out["n_gold_size_undefined"] = int(np.isnan(size).sum())
        out["by_gold_size_cap"] = {str(k): _cell(phi[size <= k], t_suf[size <= k]) for k in GOLD_SIZE_CAPS}
    return out


def _fmt(x: float | None, spec: str) -> str:
    return "n/a" if x is None else format(x, spec)


def grounding_precision_lines(section: dict[str, Any] | None) -> list[str]:
    """Console lines: the density sweep and the gold-size sweep, one line each."""
    if section is None:
        return []

    def cells(sweep: dict[str, Any], sign: str) -> str:
        return "; ".join(
            f"{sign}{cap}: n {c['n']}, median phi_suf {_fmt(c['median_phi_suf'], '.4f')}, t_suf=1 {_fmt(c['share_t_suf_1'], '.0%')}"
            for cap, c in sweep.items()
        )

    lines = []
    if "by_density_cap" in section:
        lines.append(f"  grounding precision, gold density {cells(section['by_density_cap'], '<=')}")
    if "by_gold_size_cap" in section:
        lines.append(f"  grounding precision, gold chunks {cells(section['by_gold_size_cap'], '<=')}")
    return lines

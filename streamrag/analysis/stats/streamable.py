"""RQ2 — how much latency stabilization can hide: the streamable fraction (``H ≥ θ·L``)
at a point and over the L × δ × θ grid, split into retrieved-gold (t* = t_suf) and
fallback (t* = t_sc) questions, with the mean of H, H_G and H' (a section of
:func:`streamrag.analysis.stats.rq.summarize`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from streamrag.analysis import metrics
from streamrag.analysis._values import active, bool_column, num_column, share, to_float
from streamrag.analysis.stats.params import DEFAULT_PARAMS

GRID_L_MS: tuple[float, ...] = (100.0, 300.0, 600.0, 1000.0)
GRID_DELTA_WPS: tuple[float, ...] = (2.0, 3.0, 4.0)
GRID_THETA: tuple[float, ...] = (0.5, 0.8, 1.0)


def _t_star(q: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(n_words, t*, retrieved-gold mask): t* = t_suf for retrieved-gold, else t_sc;
    t* = n for a question flagged ``no_overlap`` (its t_sc = 1 is a tie-break: nothing
    can be known before the question ends, so it hides no latency). Over hypotheses, t*
    counts input events, so n is the hypotheses (``n_hypotheses``) and the residual is in
    events at the nominal δ; the replay in time is the simulator's."""
    rg = bool_column(q, "retrieved_gold")
    n_words = num_column(q, "n_hypotheses" if "n_hypotheses" in q.columns else "n_words")
    t_star = np.where(rg, num_column(q, "t_suf"), num_column(q, "t_sc"))
    if "no_overlap" in q.columns:
        t_star = np.where(bool_column(q, "no_overlap"), n_words, t_star)
    return n_words, t_star, rg


def _slice(streamable: np.ndarray, mask: np.ndarray) -> dict[str, Any]:
    n = int(mask.sum())
    k = int(streamable[mask].sum())
    return {"n": n, "n_streamable": k, "streamable_fraction": share(k, n)}


def _cell(
    n_words: np.ndarray, t_star: np.ndarray, rg: np.ndarray, *, L_ms: float, delta_wps: float, theta: float, G_ms: float
) -> dict[str, Any]:
    H = metrics.H_array(n_words, t_star, L_ms, delta_wps)
    # H_G = min(G + L, residual) and H' = min(L, r) + min(G, r) are H with other caps.
    H_G = metrics.H_array(n_words, t_star, G_ms + L_ms, delta_wps)
    H_prime = H + metrics.H_array(n_words, t_star, G_ms, delta_wps)
    ok = metrics.streamable(H, L_ms, theta)  # elementwise H >= θ·L, exact (boundary included)
    n = int(n_words.size)
    k = int(ok.sum())
    return {
        "L_ms": float(L_ms),
        "delta_wps": float(delta_wps),
        "theta": float(theta),
        "n": n,
        "n_streamable": k,
        "streamable_fraction": share(k, n),
        "H_ms": {"mean": to_float(H.mean()) if n else None},
        "H_G_ms": {"mean": to_float(H_G.mean()) if n else None},
        "H_prime_ms": {"mean": to_float(H_prime.mean()) if n else None},
        "retrieved_gold": _slice(ok, rg),
        "fallback": _slice(ok, ~rg),
    }


def streamable_cell(df: pd.DataFrame, *, L_ms: float, delta_wps: float, theta: float, G_ms: float) -> dict[str, Any]:
    """Streamable fraction at one (L, δ, θ): ``n_streamable / n`` over all questions.

    A question is streamable when ``H = min(L, max(0, (n − t*)/δ)·1000) ≥ θ·L`` with
    t* = t_suf for retrieved-gold questions, else t_sc (the fallback). The cell also
    gives the same count and fraction within the retrieved-gold and fallback slices and
    the mean of H, ``H_G = min(G + L, residual)`` and ``H' = min(L, r) + min(G, r)`` (ms).
    """
    n_words, t_star, rg = _t_star(active(df))
    return _cell(n_words, t_star, rg, L_ms=L_ms, delta_wps=delta_wps, theta=theta, G_ms=G_ms)


def rq2_grid(
    df: pd.DataFrame,
    *,
    G_ms: float = DEFAULT_PARAMS["G_ms"],
    L_values: Sequence[float] = GRID_L_MS,
    delta_values: Sequence[float] = GRID_DELTA_WPS,
    theta_values: Sequence[float] = GRID_THETA,
) -> list[dict[str, Any]]:
    """:func:`streamable_cell` over L × δ × θ (L outermost, θ innermost): 36 cells by default."""
    n_words, t_star, rg = _t_star(active(df))
    return [
        _cell(n_words, t_star, rg, L_ms=L, delta_wps=d, theta=th, G_ms=G_ms)
        for L in L_values
        for d in delta_values
        for th in theta_values
    ]


def rq2(
    df: pd.DataFrame,
    *,
    L_ms: float = DEFAULT_PARAMS["L_ms"],
    delta_wps: float = DEFAULT_PARAMS["delta_wps"],
    theta: float = DEFAULT_PARAMS["theta"],
    G_ms: float = DEFAULT_PARAMS["G_ms"],
) -> dict[str, Any]:
    """RQ2: ``{"point": cell at (L, δ, θ), "grid": [36 cells]}`` (see :func:`streamable_cell`)."""
    return {
        "point": streamable_cell(df, L_ms=L_ms, delta_wps=delta_wps, theta=theta, G_ms=G_ms),
        "grid": rq2_grid(df, G_ms=G_ms),
    }

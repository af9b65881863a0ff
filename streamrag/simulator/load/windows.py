"""A load run read in fixed windows of arrival time: did a response-time budget hold?

A budget such as "p90 response ≤ 4 s" is a promise about every stretch of the day, not
about the day's mean: a policy that is fast at night and slow at noon breaks it at noon.
:func:`budget_windows` cuts the sessions by arrival instant into windows of
``window_s`` and reports per window, for the streaming system (and the baseline beside
it), the ``quantile`` of the answer latency over the sessions answered, whether it is
≤ ``budget_ms``, the extra calls per session (calls fired − 1) and the mean paired
saving. :func:`budget_summary` gives the share of windows where the budget held (over
windows with an answered session) and the run's extra calls per session and mean
saving. Quantiles are numpy's linear ones, as ``summary.json``'s.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from streamrag.simulator.load.measures import SessionMeasures

US_PER_S = 1_000_000


class BudgetWindow(NamedTuple):
    """One window of arrival time (``start_s`` ≤ arrival < ``start_s + window_s``)."""

    start_s: float
    n: int
    """Sessions arriving in the window."""
    quantile_ms: float | None
    """The streaming system's answer latency at the quantile (None: nobody answered)."""
    baseline_quantile_ms: float | None
    held: bool | None
    """``quantile_ms ≤ budget_ms`` (None: nobody answered)."""
    failed: int
    """Streaming sessions that got no answer."""
    extra_calls: float | None
    """Mean calls fired − 1 of the window's sessions."""
    saved_ms: float | None
    """Mean paired saving (baseline − streaming) over sessions answered by both."""


def budget_windows(
    streaming: SessionMeasures,
    baseline: SessionMeasures,
    *,
    window_s: float,
    budget_ms: float,
    quantile: float = 0.9,
    counted: np.ndarray | None = None,
) -> list[BudgetWindow]:
    """Per window of arrival time, from the first window to the last arrival's."""
    keep = np.ones(streaming.n, dtype=bool) if counted is None else counted
    window_us = round(window_s * US_PER_S)
    index = streaming.arrival_us // window_us
    rows = []
    for w in range(int(index[keep].max()) + 1 if keep.any() else 0):
        sel = keep & (index == w)
        ok_s, ok_b = sel & (streaming.answer_us >= 0), sel & (baseline.answer_us >= 0)
        both = ok_s & ok_b
        q = _quantile_ms(streaming.answer_us[ok_s], quantile)
        rows.append(
            BudgetWindow(
                start_s=w * window_us / US_PER_S,
                n=int(sel.sum()),
                quantile_ms=q,
                baseline_quantile_ms=_quantile_ms(baseline.answer_us[ok_b], quantile),
                held=None if q is None else q <= budget_ms,
                failed=int((sel & ~ok_s).sum()),
                extra_calls=float(streaming.fired[sel].mean() - 1) if sel.any() else None,
                saved_ms=float((baseline.answer_us[both] - streaming.answer_us[both]).mean() / 1000) if both.any() else None,
            )
        )
    return rows


def budget_summary(
    windows: list[BudgetWindow], streaming: SessionMeasures, baseline: SessionMeasures, counted: np.ndarray | None = None
) -> dict[str, float | int | None]:
    """Share of windows held, and the run's extra calls per session and mean saving."""
    keep = np.ones(streaming.n, dtype=bool) if counted is None else counted
    judged = [w.held for w in windows if w.held is not None]
    both = keep & (streaming.answer_us >= 0) & (baseline.answer_us >= 0)
    return {
        "windows": len(judged),
        "windows_held": int(sum(judged)),
        "share_held": sum(judged) / len(judged) if judged else None,
        "extra_calls_per_session": float(streaming.fired[keep].mean() - 1) if keep.any() else None,
        "saved_ms_mean": float((baseline.answer_us[both] - streaming.answer_us[both]).mean() / 1000) if both.any() else None,
        "failed": int((keep & (streaming.answer_us < 0)).sum()),
    }


def _quantile_ms(values_us: np.ndarray, q: float) -> float | None:
    return float(np.quantile(values_us, q)) / 1000 if values_us.size else None

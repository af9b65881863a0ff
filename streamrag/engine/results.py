"""Per-question results derived from the trace, and the run summary (design §7).

The trace is the source of truth: :func:`derive_result` reads nothing but a question's
events (plus the analytic bounds, which need only n, t*, L, G, δ).

Columns of ``results.csv`` (:class:`ResultRow`, in order):

==================  ===========================================================
``interaction_id``  the question
``n_words``         n
``t_star``          t_suf where defined, else t_sc
``H_ms``            ``min(L, residual)``, residual = ``(n − t*)/δ·1000``
``H_G_ms``          ``min(G + L, residual)``
``baseline_ms``     baseline answer ready − E (E = last word)
``streaming_ms``    streaming answer ready − E (perceived latency)
``saved_ms``        ``baseline_ms − streaming_ms`` (negative: speculation hurt)
``calls_fired``     tool calls started by the streaming arm (speculative + fallback)
``calls_used``      calls whose result the answer used (1)
``misfire``         speculative calls were fired but none was sufficient: the answer
                    came from the full query (trigger ``none`` never mis-fires)
``wasted_calls``    ``calls_fired − calls_used``
``cancelled_calls`` calls killed in flight (replaced, or by the reflector)
``skipped_fires``   trigger opportunities dropped because the thread cap was full
``used_prefix_t``   prefix length of the call the answer used
``H_prime_ms``      the anchor's ``H' = min(L, r) + min(G, r)``
``llm_busy_ms``     streaming arm's LLM time: query generation of every call (up to
                    completion or cancel) + response generation
``tool_busy_ms``    streaming arm's tool time (up to completion or cancel)
``question_type``   from the input, if known
==================  ===========================================================

L and G in the bounds are the stages' nominal values (the constant, else the median).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from streamrag.analysis import metrics

RESULT_COLUMNS: tuple[str, ...] = (
    "interaction_id",
    "n_words",
    "t_star",
    "H_ms",
    "H_G_ms",
    "baseline_ms",
    "streaming_ms",
    "saved_ms",
    "calls_fired",
    "calls_used",
    "misfire",
    "wasted_calls",
    "cancelled_calls",
    "skipped_fires",
    "used_prefix_t",
    "H_prime_ms",
    "llm_busy_ms",
    "tool_busy_ms",
    "question_type",
)


class ResultRow(BaseModel):
    """One row of ``results.csv``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    interaction_id: str
    n_words: int
    t_star: int
    H_ms: float
    H_G_ms: float
    baseline_ms: float
    streaming_ms: float
    saved_ms: float
    calls_fired: int
    calls_used: int
    misfire: bool
    wasted_calls: int
    cancelled_calls: int
    skipped_fires: int
    used_prefix_t: int
    H_prime_ms: float
    llm_busy_ms: float
    tool_busy_ms: float
    question_type: str = ""


def derive_result(
    events: Sequence[dict[str, Any]],
    *,
    n_words: int,
    t_star: int,
    L_ms: float,
    G_ms: float,
    delta_wps: float,
    question_type: str = "",
) -> ResultRow:
    """A question's result row from its trace events (dicts, as in ``trace.jsonl``).

    Models read back with :func:`~streamrag.engine.trace.read_trace` work too after
    ``model_dump()``.
    """
    qid = events[0]["qid"]
    input_end = answer_s = answer_b = respond_at = None
    fired = cancelled = skipped = speculative = 0
    fallback = False
    used_t = 0
    gen_start: dict[int, int] = {}
    tool_start: dict[int, int] = {}
    gen_us = tool_us = f_us = 0
    for e in events:
        kind = e["kind"]
        t_us = e["t_us"]
        if kind == "word":
            continue
        if kind == "input_end":
            input_end = t_us
        elif e.get("arm") == "baseline":
            if kind == "answer_ready":
                answer_b = t_us
        elif kind == "fire":
            fired += 1
            speculative += e["by"] == "trigger"
        elif kind == "thread_start":
            gen_start[e["call"]] = t_us
        elif kind == "gen_done":
            gen_us += t_us - gen_start.pop(e["call"])
            tool_start[e["call"]] = t_us
        elif kind == "tool_done":
            tool_us += t_us - tool_start.pop(e["call"])
        elif kind == "cancel":
            cancelled += 1
            call = e["call"]
            if call in gen_start:
                gen_us += t_us - gen_start.pop(call)
            elif call in tool_start:
                tool_us += t_us - tool_start.pop(call)
        elif kind == "skip":
            skipped += 1
        elif kind == "decision":
            fallback = e["outcome"] == "fallback"
        elif kind == "respond":
            used_t = e["prefix_t"]
            respond_at = t_us
        elif kind == "answer_ready":
            answer_s = t_us
            f_us = t_us - respond_at  # type: ignore[operator]
    if input_end is None or answer_s is None or answer_b is None:
        raise ValueError(f"trace of {qid!r} is incomplete (no input_end or answer_ready)")
    baseline_us = answer_b - input_end
    streaming_us = answer_s - input_end
    used = 1
    return ResultRow(
        interaction_id=qid,
        n_words=n_words,
        t_star=t_star,
        H_ms=metrics.H(n_words, t_star, L_ms, delta_wps),
        H_G_ms=metrics.H_G(n_words, t_star, L_ms, delta_wps, G_ms),
        baseline_ms=baseline_us / 1000,
        streaming_ms=streaming_us / 1000,
        saved_ms=(baseline_us - streaming_us) / 1000,
        calls_fired=fired,
        calls_used=used,
        misfire=fallback and speculative > 0,
        wasted_calls=fired - used,
        cancelled_calls=cancelled,
        skipped_fires=skipped,
        used_prefix_t=used_t,
        H_prime_ms=metrics.H_prime(n_words, t_star, L_ms, delta_wps, G_ms),
        llm_busy_ms=(gen_us + f_us) / 1000,
        tool_busy_ms=tool_us / 1000,
        question_type=question_type,
    )


def _fmt(value: Any) -> str:
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def results_csv(rows: Sequence[ResultRow]) -> bytes:
    """``results.csv`` bytes: header + one line per row, floats in shortest round-trip form."""
    import csv
    import io

    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(RESULT_COLUMNS)
    for row in rows:
        writer.writerow([_fmt(getattr(row, c)) for c in RESULT_COLUMNS])
    return buf.getvalue().encode("utf-8")


def _clean(x: float) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def _stats(values: np.ndarray) -> dict[str, float | None]:
    if values.size == 0:
        return {"mean": None, "median": None, "p10": None, "p90": None, "min": None, "max": None}
    return {
        "mean": _clean(float(values.mean())),
        "median": _clean(float(np.median(values))),
        "p10": _clean(float(np.quantile(values, 0.1))),
        "p90": _clean(float(np.quantile(values, 0.9))),
        "min": _clean(float(values.min())),
        "max": _clean(float(values.max())),
    }


def _spearman(x: np.ndarray, y: np.ndarray) -> dict[str, float | None]:
    """Spearman ρ and two-sided p (``None`` when undefined: < 3 rows or a constant column)."""
    if x.size < 3 or np.all(x == x[0]) or np.all(y == y[0]):
        return {"rho": None, "p": None, "n": int(x.size)}
    from scipy.stats import spearmanr

    res = spearmanr(x, y)
    return {"rho": _clean(float(res.statistic)), "p": _clean(float(res.pvalue)), "n": int(x.size)}


def summarize(
    rows: Sequence[ResultRow], parameters: dict[str, Any], counts: dict[str, int] | None = None
) -> dict[str, Any]:
    """``summary.json``: means, medians, Spearman ρ(H, saved) and ρ(H_G, saved), rates, calls."""

    def col(name: str) -> np.ndarray:
        return np.array([getattr(r, name) for r in rows], dtype=float)

    n = len(rows)
    saved = col("saved_ms")
    out: dict[str, Any] = {"n_questions": n}
    if counts:
        out["selection"] = counts
    for name in ("saved_ms", "H_ms", "H_G_ms", "H_prime_ms", "baseline_ms", "streaming_ms"):
        out[name] = _stats(col(name))
    out["spearman"] = {
        "H_saved": _spearman(col("H_ms"), saved),
        "H_G_saved": _spearman(col("H_G_ms"), saved),
    }
    n_negative = int((saved < 0).sum())
    n_misfire = sum(1 for r in rows if r.misfire)
    out["negative"] = {"n": n_negative, "rate": n_negative / n if n else None}
    out["misfire"] = {"n": n_misfire, "rate": n_misfire / n if n else None}
    out["calls_per_question"] = {
        "fired": _clean(float(col("calls_fired").mean())) if n else None,
        "used": _clean(float(col("calls_used").mean())) if n else None,
        "wasted": _clean(float(col("wasted_calls").mean())) if n else None,
        "cancelled": _clean(float(col("cancelled_calls").mean())) if n else None,
        "skipped_fires": _clean(float(col("skipped_fires").mean())) if n else None,
    }
    out["busy_ms_per_question"] = {
        "llm": _clean(float(col("llm_busy_ms").mean())) if n else None,
        "tool": _clean(float(col("tool_busy_ms").mean())) if n else None,
    }
    out["parameters"] = parameters
    return out
